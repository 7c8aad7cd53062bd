"""The receipt log's Merkle tree as RFC 6962 (section 2.1) and RFC 9162 (section 2.1) define
it: hashes, the shape of inclusion and consistency proofs, and their verification.

Proofs are built from the hashes of subtrees. A caller that stores the hashes of complete
(perfect, aligned) subtrees asks ``needed_*`` which ranges a proof takes, turns each range
into stored nodes with ``perfect_subtrees`` and folds them with ``range_hash``: a proof for
any tree size costs one look-up of O(log n) stored hashes.
"""

import hashlib
from collections.abc import Callable, Iterable

HASH_SIZE = 32
LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"


class ProofError(ValueError):
    """A proof does not prove what it claims (a wrong root, a malformed path, bad sizes)."""


def leaf_hash(data: bytes) -> bytes:
    """SHA-256(0x00 || data): the hash of one leaf (RFC 6962 MTH of a one-entry list)."""
    return hashlib.sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 || left || right): the hash of an interior node."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


EMPTY_ROOT = hashlib.sha256(b"").digest()


def _split(size: int) -> int:
    """The largest power of two smaller than ``size`` (size > 1): where RFC 6962 splits a list."""
    return 1 << ((size - 1).bit_length() - 1)


def root_of(leaf_hashes: list[bytes]) -> bytes:
    """The tree head (MTH) of a list of leaf hashes, computed from scratch."""
    if not leaf_hashes:
        return EMPTY_ROOT
    level = list(leaf_hashes)
    # Pairs from the left; an odd last node is carried up unchanged, which gives RFC 6962's
    # unbalanced right edge.
    while len(level) > 1:
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def perfect_subtrees(start: int, end: int) -> list[tuple[int, int]]:
    """The complete subtrees, as (level, index) with leaves [index * 2**level, (index + 1) *
    2**level), whose hashes ``range_hash`` folds into the hash of leaves [start, end).

    ``start, end`` must be a subtree of an RFC 6962 tree (every range a proof names is):
    then each piece is aligned, largest first.
    """
    pieces = []
    while start < end:
        level = (end - start).bit_length() - 1
        width = 1 << level
        if start % width:
            raise ValueError(f"[{start}, {end}) is not a subtree of an RFC 6962 tree")
        pieces.append((level, start >> level))
        start += width
    return pieces


def range_hash(pieces: list[bytes]) -> bytes:
    """The hash of a range from the hashes of its ``perfect_subtrees``, in that order: the
    right edge of an RFC 6962 tree leans right, so the fold runs from the last piece."""
    result = pieces[-1]
    for piece in reversed(pieces[:-1]):
        result = node_hash(piece, result)
    return result


def needed_for_inclusion(index: int, size: int) -> list[tuple[int, int]]:
    """The leaf ranges [start, end) whose hashes make the inclusion proof of leaf ``index``
    in a tree of ``size`` leaves, in proof order (RFC 6962 PATH, bottom up).

    Raises ValueError when ``index`` is not below ``size``.
    """
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size}")
    ranges = []
    start, end = 0, size
    while end - start > 1:
        k = _split(end - start)
        if index < start + k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start += k
    return ranges[::-1]


def needed_for_consistency(old_size: int, new_size: int) -> list[tuple[int, int]]:
    """The leaf ranges whose hashes make the consistency proof from a tree of ``old_size``
    leaves to one of ``new_size`` (RFC 6962 SUBPROOF(m, D[0:n], true), in proof order).

    Raises ValueError unless 0 < old_size <= new_size.
    """
    if not 0 < old_size <= new_size:
        raise ValueError(f"no consistency proof from size {old_size} to size {new_size}")
    ranges = []
    start, end, m, complete = 0, new_size, old_size, True
    while True:
        n = end - start
        if m == n:
            if not complete:
                ranges.append((start, end))
            break
        k = _split(n)
        if m <= k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start += k
            m -= k
            complete = False
    return ranges[::-1]


def hashes_for(ranges: list[tuple[int, int]], lookup: Callable[[Iterable[tuple[int, int]]], dict]) -> list[bytes]:
    """The hashes of ``ranges`` from stored complete-subtree hashes: ``lookup`` receives every
    (level, index) needed at once and returns a dict of them to their hashes.

    Raises KeyError when ``lookup`` lacks a node.
    """
    pieces = [perfect_subtrees(start, end) for start, end in ranges]
    found = lookup({node for nodes in pieces for node in nodes})
    return [range_hash([found[node] for node in nodes]) for nodes in pieces]


def verify_inclusion(leaf: bytes, index: int, size: int, proof: list[bytes], root: bytes) -> None:
    """Check that the leaf whose hash is ``leaf`` is number ``index`` of the tree of ``size``
    leaves whose root is ``root`` (RFC 9162, 2.1.3.2).

    Raises ProofError when it is not.
    """
    if not 0 <= index < size:
        raise ProofError(f"leaf {index} cannot be in a tree of {size}")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        _check_hash(p)
        if sn == 0:
            raise ProofError("the inclusion proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the inclusion proof is shorter than the tree is deep")
    if r != root:
        raise ProofError("the inclusion proof leads to another root than the checkpoint's")


def verify_consistency(old_size: int, new_size: int, proof: list[bytes], old_root: bytes, new_root: bytes) -> None:
    """Check that the tree of ``new_size`` leaves and root ``new_root`` extends the tree of
    ``old_size`` leaves and root ``old_root`` (RFC 9162, 2.1.4.2).

    Raises ProofError when it does not (a fork, a rewritten history, or a malformed proof).
    """
    if not 0 <= old_size <= new_size:
        raise ProofError(f"a tree of {new_size} cannot extend one of {old_size}")
    if old_size == new_size:
        if proof:
            raise ProofError("trees of the same size need an empty consistency proof")
        if old_root != new_root:
            raise ProofError("two different roots for the same tree size: the log forked")
        return
    if old_size == 0:
        if proof:
            raise ProofError("an empty tree needs an empty consistency proof")
        return
    for p in proof:
        _check_hash(p)
    if not proof:
        raise ProofError("the consistency proof is empty")
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # a power of two: the old root is itself a node of the path
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("the consistency proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the consistency proof is shorter than the tree is deep")
    if fr != old_root:
        raise ProofError("the consistency proof does not lead to the older checkpoint's root")
    if sr != new_root:
        raise ProofError("the consistency proof does not lead to the newer checkpoint's root")


def _check_hash(value: bytes) -> None:
    if len(value) != HASH_SIZE:
        raise ProofError(f"a proof hash has {len(value)} bytes, not {HASH_SIZE}")
