"""docs/verification.md's worked example is what the implementation does: the canonical
bytes, their hash, the signature, the leaf hash and the checkpoint it shows."""

import base64
import hashlib
import json
import re

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from receco_verify import merkle, note
from receco_verify.canonical import canonicalize
from receco_verify.keys import PublicKey, b64url, raw_public, thumbprint

from tests.servers import ROOT

DOC = (ROOT / "docs" / "verification.md").read_text()
# RFC 8032, section 7.1, TEST 1: the example's key, and nothing else's.
RFC_8032_TEST_1 = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)\n```", DOC, flags=re.DOTALL)


def test_the_worked_example_canonicalizes_hashes_and_signs_as_the_doc_says():
    key = Ed25519PrivateKey.from_private_bytes(RFC_8032_TEST_1)
    public = raw_public(key.public_key())
    content = json.loads(_blocks("json")[0])
    canonical = canonicalize(content)
    assert canonical.decode() == _blocks("text")[0]
    assert f"these {len(canonical)} bytes" in DOC
    assert f"SHA-256 `{hashlib.sha256(canonical).hexdigest()}`" in DOC
    assert base64.b64encode(key.sign(canonical)).decode() in DOC
    assert content["kid"] == thumbprint(public)
    assert f"`x` is `{b64url(public)}`" in DOC
    assert merkle.leaf_hash(canonical).hex() in DOC


def test_the_example_checkpoint_verifies_with_the_example_key():
    key = Ed25519PrivateKey.from_private_bytes(RFC_8032_TEST_1)
    public = raw_public(key.public_key())
    checkpoint = _blocks("text")[1] + "\n"
    verified = note.verify_checkpoint(checkpoint, [PublicKey(thumbprint(public), public)])
    assert (verified.origin, verified.size) == ("receipts.example.com/receipts", 5)


def _bundle() -> tuple[int, int, list[str]]:
    """The leaf index, tree size and inclusion proof of the doc's example proof bundle."""
    block = next(block for block in _blocks("json") if block.startswith('{"content"'))
    index = int(re.search(r'"leaf_index": (\d+)', block)[1])
    size = int(re.search(r'"tree_size": (\d+)', block)[1])
    inclusion = json.loads(re.search(r'"inclusion": (\[.*?\])', block, flags=re.DOTALL)[1])
    return index, size, inclusion


def _root_by_hand(leaf: bytes, index: int, size: int, proof: list[bytes]) -> bytes:
    # RFC 9162, 2.1.3.2, as "Verifying by hand" writes it: apart from receco_verify.merkle,
    # as an integrator's own tool is.
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if fn & 1 or fn == sn:
            r = hashlib.sha256(b"\x01" + p + r).digest()
            while fn & 1 == 0 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = hashlib.sha256(b"\x01" + r + p).digest()
        fn, sn = fn >> 1, sn >> 1
    assert sn == 0, "the proof's length does not fit the tree's size"
    return r


def test_the_example_proof_bundle_leads_to_the_example_checkpoints_root():
    """An integrator's check (transparency-dev/merkle): from the worked example's leaf, the
    bundle's inclusion proof computed to 0XUaZLIO…, not the example checkpoint's root."""
    canonical = canonicalize(json.loads(_blocks("json")[0]))
    index, size, inclusion = _bundle()
    checkpoint = note.parse_checkpoint(_blocks("text")[1].split("\n\n")[0] + "\n")
    assert size == checkpoint.size
    proof = [base64.b64decode(piece) for piece in inclusion]
    root = _root_by_hand(hashlib.sha256(b"\x00" + canonical).digest(), index, size, proof)
    assert base64.b64encode(root).decode() == base64.b64encode(checkpoint.root).decode()
    merkle.verify_inclusion(merkle.leaf_hash(canonical), index, size, proof, checkpoint.root)
    # The receipt file's example shows the same proof, shortened.
    assert f'"log": {{"leaf_index": {index}, "tree_size": {size}, "inclusion": ["{inclusion[0][:8]}…", …]' in DOC
    assert f"log: leaf {index} of {size}, inclusion proof checked" in DOC


def test_the_examples_log_is_the_worked_example_then_four_entries():
    """How the doc's proof and checkpoint were made, to make them again when the worked
    example changes: its leaf, then the leaves of "example entry 1" to "example entry 4"."""
    key = Ed25519PrivateKey.from_private_bytes(RFC_8032_TEST_1)
    public = raw_public(key.public_key())
    canonical = canonicalize(json.loads(_blocks("json")[0]))
    leaves = [merkle.leaf_hash(canonical)] + [merkle.leaf_hash(f"example entry {n}".encode()) for n in range(1, 5)]
    proof = [merkle.root_of(leaves[start:end]) for start, end in merkle.needed_for_inclusion(0, len(leaves))]
    origin = "receipts.example.com/receipts"
    text = f"{origin}\n{len(leaves)}\n{base64.b64encode(merkle.root_of(leaves)).decode()}\n"
    checkpoint = note.sign(text, origin, key.sign, public)
    inclusion = [base64.b64encode(piece).decode() for piece in proof]
    assert _bundle() == (0, len(leaves), inclusion)
    assert _blocks("text")[1] + "\n" == checkpoint
