"""The log's read-only views: keys, checkpoint, a receipt's proof bundle, consistency; and
the bundle a view serves passes the standalone verifier."""

import base64

import pytest
from receco_verify import keys as jwks_format
from receco_verify import merkle
from receco_verify.receipt import VerificationError, verify_bundle

from ledger import tree
from ledger.models import Checkpoint
from receco.lib import signingkeys
from receipts import refunds
from tests.ledger.conftest import append


@pytest.fixture
def logged(receipt_factory):
    sales = [receipt_factory(token=f"rcpt_viewed{i:02d}_aaaaaa", short_code=f"VIEW{i:02d}") for i in range(6)]
    append()
    return sales


def test_the_keys_are_served_as_a_jwk_set(client, keys):
    response = client.get("/.well-known/jwks.json")
    assert response.status_code == 200
    assert response["Cache-Control"] == "public, max-age=300"
    assert response.json() == {
        "keys": [
            {
                "kty": "OKP",
                "crv": "Ed25519",
                "x": jwks_format.b64url(keys.current_public),
                "kid": keys.kid,
                "alg": "EdDSA",
                "use": "sig",
            }
        ]
    }
    assert all("d" not in jwk for jwk in response.json()["keys"])


def test_retired_keys_stay_published_after_a_rotation(client, keys, other_keys):
    kids = [jwk["kid"] for jwk in client.get("/.well-known/jwks.json").json()["keys"]]
    assert kids == [other_keys.kid, keys.kid]


def test_without_a_key_the_set_is_empty(client, settings):
    settings.RECECO_SIGNING_KEYS = ""
    settings.RECECO_SIGNING_KEY_FILE = ""
    signingkeys.keyring.cache_clear()
    try:
        assert client.get("/.well-known/jwks.json").json() == {"keys": []}
    finally:
        signingkeys.keyring.cache_clear()


def test_the_latest_checkpoint_is_served_as_text(client, logged):
    response = client.get("/log/checkpoint")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    text = response.content.decode()
    assert text == Checkpoint.objects.get(size=6).note
    origin, size, root = text.split("\n")[:3]
    assert (origin, size, base64.b64decode(root)) == ("receipts.example.test/receipts", "6", tree.root(6))


def test_before_the_first_checkpoint_there_is_none(client, db):
    response = client.get("/log/checkpoint")
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "NOT_FOUND", "message": "The log has published no checkpoint yet"}}


def test_a_receipts_bundle_verifies_offline_with_the_published_keys(client, logged):
    bundle = client.get(f"/log/proof/{logged[4].token}").json()
    published = jwks_format.load_jwks(client.get("/.well-known/jwks.json").json())
    checkpoint = client.get("/log/checkpoint").content.decode()
    result = verify_bundle(bundle, published, checkpoint, origin="receipts.example.test/receipts")
    assert (result.leaf_index, result.tree_size) == (4, 6)
    assert bundle["content"]["token"] == logged[4].token


def test_a_changed_receipt_is_served_as_it_is_and_fails_verification(client, logged):
    logged[2].total_amount += 1
    logged[2].save()
    bundle = client.get(f"/log/proof/{logged[2].token}").json()
    published = jwks_format.load_jwks(client.get("/.well-known/jwks.json").json())
    with pytest.raises(VerificationError, match="the signature does not match the receipt's content"):
        verify_bundle(bundle, published)


def test_a_bundle_for_an_older_checkpoint_is_served_on_request(client, logged, receipt_factory):
    receipt_factory(token="rcpt_viewedlate_aaaa", short_code="VLATE1")
    append()
    bundle = client.get(f"/log/proof/{logged[1].token}", {"tree_size": 6}).json()
    assert (bundle["tree_size"], bundle["checkpoint"]) == (6, Checkpoint.objects.get(size=6).note)
    assert client.get(f"/log/proof/{logged[1].token}").json()["tree_size"] == 7
    missing = client.get(f"/log/proof/{logged[1].token}", {"tree_size": 5})
    assert missing.status_code == 404
    assert missing.json()["error"] == {
        "code": "NOT_FOUND",
        "message": "tree_size: the log published no checkpoint of this size",
    }


def test_a_void_has_a_bundle_of_its_own(client, logged):
    refunds.void(logged[0], "Rung up twice", keyed=True)
    append()
    bundle = client.get(f"/log/proof/{logged[0].token}", {"entry": "void"}).json()
    assert bundle["content"]["type"] == "void"
    assert bundle["leaf_index"] == 6
    published = jwks_format.load_jwks(client.get("/.well-known/jwks.json").json())
    verify_bundle(bundle, published)


def test_a_receipt_not_yet_logged_says_when_to_ask_again(client, logged, receipt_factory, settings):
    fresh = receipt_factory(token="rcpt_viewedfresh_aaa", short_code="FRESH1")
    response = client.get(f"/log/proof/{fresh.token}")
    assert response.status_code == 404
    assert response["Retry-After"] == str(settings.RECECO_LOG_COMMIT_LAG + settings.RECECO_LOG_CHECKPOINT_INTERVAL)
    assert response.json()["error"] == {
        "code": "NOT_LOGGED",
        "message": "This receipt is not in the log's checkpoint of 6 entries yet: try again",
    }
    assert client.get("/log/proof/rcpt_nobody_aaaaaaaa").json()["error"]["message"] == "No receipt has this token"


def test_consistency_proofs_between_two_sizes(client, logged, receipt_factory):
    old_root = tree.root(6)
    receipt_factory(token="rcpt_viewedlate_aaaa", short_code="VLATE1")
    append()
    response = client.get("/log/consistency", {"from": 6})
    assert response.status_code == 200
    body = response.json()
    assert (body["from"], body["to"]) == (6, 7)
    proof = [base64.b64decode(h) for h in body["proof"]]
    merkle.verify_consistency(6, 7, proof, old_root, tree.root(7))
    for query, status, message in [
        ({"from": 0}, 400, "from and to: whole numbers with 0 < from <= to"),
        ({"from": 7, "to": 6}, 400, "from and to: whole numbers with 0 < from <= to"),
        ({"from": "x"}, 400, "from and to: whole numbers with 0 < from <= to"),
        ({"from": 1, "to": 8}, 404, "The latest checkpoint is of 7 entries, not 8"),
    ]:
        answer = client.get("/log/consistency", query)
        assert (answer.status_code, answer.json()["error"]["message"]) == (status, message)


def test_the_proof_of_a_log_of_one_entry_is_empty(client, receipt_factory):
    only = receipt_factory(token="rcpt_alone000_aaaaaa", short_code="ALONE1")
    append()
    bundle = client.get(f"/log/proof/{only.token}").json()
    assert (bundle["leaf_index"], bundle["tree_size"], bundle["inclusion"]) == (0, 1, [])
    verify_bundle(bundle, jwks_format.load_jwks(client.get("/.well-known/jwks.json").json()))
