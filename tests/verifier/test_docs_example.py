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
