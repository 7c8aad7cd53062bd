"""The log's tree as stored: every complete subtree's hash in ``Node``, so that a root or a
proof for any tree size is O(log n) hashes read in one primary-key query. The shapes and
the hashing are receco_verify.merkle's, the one home of those rules."""

from collections.abc import Iterable

from django.db import connections
from receco_verify import merkle

from ledger.models import Node, pack


def lookup(nodes: Iterable[tuple[int, int]], using: str = "default") -> dict[tuple[int, int], bytes]:
    """The hashes of the complete subtrees ``nodes`` ((level, index) pairs), in one query.
    Raises KeyError naming a node the log does not have."""
    wanted = {pack(level, index): (level, index) for level, index in nodes}
    if not wanted:  # a one-entry tree's proof needs no hash: "IN ()" is no SQL
        return {}
    connection = connections[using]
    q = connection.ops.quote_name
    # Plain SQL: a proof is served in a few milliseconds, and building this query with
    # the ORM would take longer than running it.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {q('key')}, {q('hash')} FROM {q(Node._meta.db_table)} WHERE {q('key')} IN "  # noqa: S608
            f"({', '.join(['%s'] * len(wanted))})",
            list(wanted),
        )
        found = {wanted[key]: bytes(value) for key, value in cursor.fetchall()}
    missing = set(wanted.values()) - set(found)
    if missing:
        raise KeyError(f"the log has no node {sorted(missing)[0]}")
    return found


def root(size: int, using: str = "default") -> bytes:
    """The root hash of the tree's first ``size`` leaves."""
    if size == 0:
        return merkle.EMPTY_ROOT
    return merkle.hashes_for([(0, size)], lambda nodes: lookup(nodes, using))[0]


def inclusion_proof(index: int, size: int, using: str = "default") -> list[bytes]:
    """The RFC 9162 inclusion proof of leaf ``index`` in the tree of ``size`` leaves.
    Raises ValueError when the leaf is not in that tree."""
    return merkle.hashes_for(merkle.needed_for_inclusion(index, size), lambda nodes: lookup(nodes, using))


def consistency_proof(old_size: int, new_size: int, using: str = "default") -> list[bytes]:
    """The RFC 9162 consistency proof from the tree of ``old_size`` leaves to ``new_size``.
    Raises ValueError unless 0 < old_size <= new_size."""
    return merkle.hashes_for(merkle.needed_for_consistency(old_size, new_size), lambda nodes: lookup(nodes, using))


def extend(size: int, leaf_hashes: list[bytes], using: str = "default") -> tuple[list[tuple[int, bytes]], bytes]:
    """The nodes that appending ``leaf_hashes`` to the tree of ``size`` leaves completes (the
    leaves themselves included), as (``Node.key``, hash) pairs, and the new root.

    Only the tree's right edge is read: one complete subtree per bit set in ``size``.
    """
    edge = merkle.perfect_subtrees(0, size)
    known = lookup(edge, using) if edge else {}
    stack = [(level, index, known[(level, index)]) for level, index in edge]
    made = []
    for offset, value in enumerate(leaf_hashes):
        stack.append((0, size + offset, value))
        made.append((pack(0, size + offset), value))
        while len(stack) > 1 and stack[-1][0] == stack[-2][0]:
            level, _, right = stack.pop()
            _, left_index, left = stack.pop()
            node = (level + 1, left_index // 2, merkle.node_hash(left, right))
            stack.append(node)
            made.append((pack(node[0], node[1]), node[2]))
    new_root = merkle.range_hash([value for _, _, value in stack]) if stack else merkle.EMPTY_ROOT
    return made, new_root
