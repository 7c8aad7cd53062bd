"""Signed notes and checkpoints as C2SP writes them: key ids, parsing, signatures."""

import base64
import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from receco_verify import note
from receco_verify.keys import raw_public

from tests.verifier.support import ORIGIN, Signer


def test_the_key_id_is_the_first_four_bytes_of_the_hash_of_name_newline_type_and_key():
    public = bytes(range(32))
    expected = hashlib.sha256(b"example.com/log\n\x01" + public).digest()[:4]
    assert note.key_id("example.com/log", public) == expected
    encoded = base64.b64encode(b"\x01" + public).decode()
    assert note.verifier_key("example.com/log", public) == f"example.com/log+{expected.hex()}+{encoded}"


def test_a_checkpoint_is_origin_size_and_root_each_on_a_line_then_a_blank_line_and_the_signature():
    signer = Signer()
    root = hashlib.sha256(b"root").digest()
    signed = signer.checkpoint(12, root)
    lines = signed.split("\n")
    assert lines[:4] == [ORIGIN, "12", base64.b64encode(root).decode(), ""]
    assert lines[4].startswith(f"\u2014 {ORIGIN} ")
    raw = base64.b64decode(lines[4].rsplit(" ", 1)[1])
    assert raw[:4] == note.key_id(ORIGIN, signer.public)
    assert len(raw) == 4 + 64
    assert signed.endswith("\n")
    checkpoint = note.verify_checkpoint(signed, [signer.key])
    assert (checkpoint.origin, checkpoint.size, checkpoint.root) == (ORIGIN, 12, root)


def test_a_note_signed_by_another_key_or_name_or_changed_is_refused():
    signer, stranger = Signer(), Signer()
    signed = signer.checkpoint(12, hashlib.sha256(b"root").digest())
    with pytest.raises(note.NoteError, match="no valid signature by a published key named 'receco.test/log'"):
        note.verify_checkpoint(signed, [stranger.key])
    with pytest.raises(note.NoteError, match="no valid signature"):
        note.verify_checkpoint(signed.replace("\n12\n", "\n13\n"), [signer.key])
    with pytest.raises(note.NoteError, match="is of the log 'receco.test/log', not 'other/log'"):
        note.verify_checkpoint(signed, [signer.key], origin="other/log")
    other_name = note.sign(
        note.Checkpoint(ORIGIN, 12, b"\x00" * 32).text(), "impostor", signer.private.sign, signer.public
    )
    with pytest.raises(note.NoteError, match="no valid signature"):
        note.verify_checkpoint(other_name, [signer.key])


def test_a_note_with_several_signatures_verifies_by_any_trusted_one():
    signer, witness = Signer(), Signer()
    text = note.Checkpoint(ORIGIN, 3, b"\x01" * 32).text()
    signed = note.sign(text, ORIGIN, signer.private.sign, signer.public)
    cosigned = signed + note.sign(text, "witness.example", witness.private.sign, witness.public).split("\n\n", 1)[1]
    assert note.verify_checkpoint(cosigned, [signer.key]).size == 3
    assert note.verify(cosigned, "witness.example", [witness.key]) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("receco.test/log\n12\n", "has no signature block"),
        ("receco.test/log\n12\nAAAA\n\nnot a signature\n", "not a signature line"),
        (
            "receco.test/log\n012\n" + base64.b64encode(b"\x00" * 32).decode() + "\n\n\u2014 a AAAAAAA=\n",
            "tree size '012'",
        ),
        ("receco.test/log\n12\nAAAA\n\n\u2014 a AAAAAAA=\n", "root hash has 3 bytes"),
        ("receco.test/log\n12\n%%%%\n\n\u2014 a AAAAAAA=\n", "not base64"),
        ("receco.test/log\n12\n\n\u2014 a AAAAAAA=\n", "a checkpoint has an origin, a tree size and a root hash"),
    ],
)
def test_malformed_checkpoints_are_refused_with_the_reason(text, message):
    with pytest.raises(note.NoteError, match=message):
        note.verify_checkpoint(text, [Signer().key])


def test_a_key_made_elsewhere_verifies_the_same():
    private = Ed25519PrivateKey.generate()
    public = raw_public(private.public_key())
    text = "example.com/log\n1\n" + base64.b64encode(b"\x02" * 32).decode() + "\n"
    signature = private.sign(text.encode())
    line = base64.b64encode(note.key_id("example.com/log", public) + signature).decode()
    hand_made = f"{text}\n\u2014 example.com/log {line}\n"
    assert note.sign(text, "example.com/log", private.sign, public) == hand_made
