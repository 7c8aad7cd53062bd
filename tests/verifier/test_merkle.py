"""The RFC 6962 tree against the Certificate Transparency reference vectors (the leaves,
roots and proofs of transparency-dev/merkle's tests), and every proof of trees up to 40
leaves built from stored complete subtrees as the service builds them."""

import hashlib

import pytest
from receco_verify import merkle

LEAVES = [bytes.fromhex(h) for h in ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                                      "606162636465666768696a6b6c6d6e6f"]]  # fmt: skip
ROOTS = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
# (leaf index, tree size, audit path)
INCLUSION = [
    (0, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (5, 8, ["bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (1, 5, ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
    (0, 1, []),
]  # fmt: skip
# (old size, new size, consistency proof)
CONSISTENCY = [
    (1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (6, 8, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 5, ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
    (1, 1, []),
]  # fmt: skip


class Stored:
    """A tree kept as the service keeps it: the hash of every complete subtree, by (level, index)."""

    def __init__(self, leaves: list[bytes]):
        self.nodes = {}
        level, hashes = 0, [merkle.leaf_hash(leaf) for leaf in leaves]
        while hashes:
            self.nodes.update({(level, i): h for i, h in enumerate(hashes)})
            hashes = [merkle.node_hash(hashes[i], hashes[i + 1]) for i in range(0, len(hashes) - 1, 2)]
            level += 1
        self.asked = []

    def lookup(self, wanted):
        self.asked.append(set(wanted))
        return {node: self.nodes[node] for node in wanted}

    def root(self, size: int) -> bytes:
        return merkle.hashes_for([(0, size)], self.lookup)[0] if size else merkle.EMPTY_ROOT

    def inclusion(self, index: int, size: int) -> list[bytes]:
        return merkle.hashes_for(merkle.needed_for_inclusion(index, size), self.lookup)

    def consistency(self, old: int, new: int) -> list[bytes]:
        return merkle.hashes_for(merkle.needed_for_consistency(old, new), self.lookup)


def test_the_hashes_are_rfc_6962s():
    assert merkle.EMPTY_ROOT.hex() == ROOTS[0]
    assert merkle.leaf_hash(b"").hex() == ROOTS[1]  # 0x00 before the leaf
    a, b = (merkle.leaf_hash(leaf) for leaf in LEAVES[:2])
    assert merkle.node_hash(a, b).hex() == ROOTS[2]  # 0x01 before the children


@pytest.mark.parametrize("size", range(9))
def test_roots_match_the_reference_for_every_size(size):
    hashes = [merkle.leaf_hash(leaf) for leaf in LEAVES[:size]]
    assert merkle.root_of(hashes).hex() == ROOTS[size]
    assert Stored(LEAVES[:size]).root(size).hex() == ROOTS[size]


@pytest.mark.parametrize(("index", "size", "path"), INCLUSION)
def test_reference_inclusion_proofs_are_built_and_verified(index, size, path):
    tree = Stored(LEAVES)
    proof = [bytes.fromhex(h) for h in path]
    assert tree.inclusion(index, size) == proof
    root = bytes.fromhex(ROOTS[size])
    merkle.verify_inclusion(merkle.leaf_hash(LEAVES[index]), index, size, proof, root)


@pytest.mark.parametrize(("old", "new", "path"), CONSISTENCY)
def test_reference_consistency_proofs_are_built_and_verified(old, new, path):
    tree = Stored(LEAVES)
    proof = [bytes.fromhex(h) for h in path]
    assert tree.consistency(old, new) == proof
    merkle.verify_consistency(old, new, proof, bytes.fromhex(ROOTS[old]), bytes.fromhex(ROOTS[new]))


def _corrupted_inclusions(index, size, proof, root, leaf):
    yield "index - 1", (leaf, index - 1, size, proof, root)
    yield "index + 1", (leaf, index + 1, size, proof, root)
    yield "index ^ 2", (leaf, index ^ 2, size, proof, root)
    yield "size * 2", (leaf, index, size * 2, proof, root)
    yield "size // 2", (leaf, index, size // 2, proof, root)
    yield "wrong leaf", (merkle.leaf_hash(b"WrongLeaf"), index, size, proof, root)
    yield "empty root", (leaf, index, size, proof, merkle.EMPTY_ROOT)
    yield "trailing root", (leaf, index, size, [*proof, root], root)
    yield "preceding root", (leaf, index, size, [root, *proof], root)
    yield "short hash", (leaf, index, size, [*proof, b"\x00" * 31], root)
    for i in range(len(proof)):
        flipped = list(proof)
        flipped[i] = bytes([flipped[i][0] ^ 8]) + flipped[i][1:]
        yield f"proof[{i}] flipped", (leaf, index, size, flipped, root)
    if proof:
        yield "removed component", (leaf, index, size, proof[:-1], root)


@pytest.mark.parametrize("size", [*range(1, 41), 1000])
def test_every_inclusion_proof_verifies_and_no_corruption_of_it_does(size):
    leaves = [hashlib.sha256(str(i).encode()).digest() for i in range(size)]
    tree = Stored(leaves)
    root = merkle.root_of([merkle.leaf_hash(leaf) for leaf in leaves])
    assert tree.root(size) == root
    for index in range(size) if size <= 40 else (0, 1, 511, 512, 998, 999):
        leaf = merkle.leaf_hash(leaves[index])
        proof = tree.inclusion(index, size)
        merkle.verify_inclusion(leaf, index, size, proof, root)
        for name, args in _corrupted_inclusions(index, size, proof, root, leaf):
            with pytest.raises(merkle.ProofError):
                merkle.verify_inclusion(*args)
            assert name


def test_every_consistency_proof_verifies_and_no_corruption_of_it_does():
    leaves = [hashlib.sha256(str(i).encode()).digest() for i in range(40)]
    tree = Stored(leaves)
    roots = [merkle.root_of([merkle.leaf_hash(leaf) for leaf in leaves[:n]]) for n in range(41)]
    for old in range(1, 41):
        for new in range(old, 41):
            proof = tree.consistency(old, new)
            merkle.verify_consistency(old, new, proof, roots[old], roots[new])
            if old == new:
                continue
            probes = [
                (old - 1, new, proof, roots[old], roots[new]),
                (old + 1, new, proof, roots[old], roots[new]),
                (old, new * 2, proof, roots[old], roots[new]),
                (old, new, proof, roots[new], roots[old]),
                (old, new, proof, merkle.EMPTY_ROOT, roots[new]),
                (old, new, [], roots[old], roots[new]),
                (old, new, [*proof, roots[old]], roots[old], roots[new]),
                (old, new, [proof[0], *proof], roots[old], roots[new]),
                (old, new, proof[:-1], roots[old], roots[new]),
            ]
            for i in range(len(proof)):
                flipped = list(proof)
                flipped[i] = bytes([flipped[i][0] ^ 16]) + flipped[i][1:]
                probes.append((old, new, flipped, roots[old], roots[new]))
            for probe in probes:
                if probe[0] == 0:
                    continue  # any tree extends the empty one
                with pytest.raises(merkle.ProofError):
                    merkle.verify_consistency(*probe)


def test_a_fork_of_the_same_size_is_caught():
    with pytest.raises(merkle.ProofError, match="the log forked"):
        merkle.verify_consistency(5, 5, [], bytes.fromhex(ROOTS[5]), bytes.fromhex(ROOTS[4]))


def test_a_proof_needs_only_log_n_stored_hashes_in_one_lookup():
    size = (1 << 20) + 12345
    tree_nodes = merkle.needed_for_inclusion(777_777, size)
    pieces = {node for start, end in tree_nodes for node in merkle.perfect_subtrees(start, end)}
    assert len(tree_nodes) == 21
    assert len(pieces) <= 2 * 21
    consistency = merkle.needed_for_consistency(1000, size)
    assert len({node for s, e in consistency for node in merkle.perfect_subtrees(s, e)}) <= 2 * 21


def test_ranges_that_are_not_subtrees_are_refused():
    with pytest.raises(ValueError, match=r"\[1, 3\) is not a subtree"):
        merkle.perfect_subtrees(1, 3)
    with pytest.raises(ValueError, match="leaf 5 is not in a tree of 5"):
        merkle.needed_for_inclusion(5, 5)
    with pytest.raises(ValueError, match="no consistency proof from size 0 to size 5"):
        merkle.needed_for_consistency(0, 5)
