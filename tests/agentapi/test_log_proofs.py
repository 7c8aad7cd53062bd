"""getReceiptProof, getLogCheckpoint, getLogConsistency: the log's proofs as procedures,
in the API's envelope and errors, read as getReceipt reads; each answer as documented and
checked offline with the published keys."""

import base64

import pytest
from receco_verify import keys as jwks_format
from receco_verify import merkle, note
from receco_verify.receipt import verify_bundle

from ledger import checkpoints
from receco.lib import signingkeys
from receipts import refunds
from tests.agentapi.test_openapi_answers import Caller
from tests.helpers import bearer, error_envelope
from tests.ledger.conftest import append

pytestmark = pytest.mark.django_db

ORIGIN = "receipts.example.test/receipts"


@pytest.fixture(autouse=True)
def _fresh_checkpoint():
    checkpoints.forget_cached()
    yield
    checkpoints.forget_cached()


@pytest.fixture
def call(client):
    return Caller(client)


@pytest.fixture
def logged(receipt_factory):
    sales = [receipt_factory(token=f"rcpt_proven{i:02d}_aaaaaa", short_code=f"PROV{i:02d}") for i in range(5)]
    append()
    return sales


def _published(client) -> dict:
    return jwks_format.load_jwks(client.get("/.well-known/jwks.json").json())


def test_a_receipts_proof_by_token_or_short_code_verifies_offline(call, client, logged):
    status, body = call("getReceiptProof", {"token": "prov03"})
    assert status == 200, body
    bundle = body["result"]["data"]
    assert (bundle["leaf_index"], bundle["tree_size"], bundle["content"]["token"]) == (3, 5, logged[3].token)
    verified = verify_bundle(bundle, _published(client), origin=ORIGIN)
    assert (verified.leaf_index, verified.tree_size) == (3, 5)
    assert call("getReceiptProof", {"token": logged[3].token})[1] == body
    assert client.get(f"/log/proof/{logged[3].token}").json() == bundle  # the same bundle as the log's own view


def test_a_voids_proof_and_an_older_checkpoints(call, client, logged):
    refunds.void(logged[0], "Rung up twice", keyed=True)
    append()
    status, body = call("getReceiptProof", {"token": logged[0].token, "entry": "void"})
    assert status == 200, body
    assert (body["result"]["data"]["content"]["type"], body["result"]["data"]["leaf_index"]) == ("void", 5)
    older = call("getReceiptProof", {"token": logged[1].token, "tree_size": 5})[1]["result"]["data"]
    assert older["tree_size"] == 5
    verify_bundle(older, _published(client))


def test_a_receipt_not_yet_in_the_log_says_when_to_ask_again(api, logged, receipt_factory, settings):
    fresh = receipt_factory(token="rcpt_provenfresh_aaa", short_code="PROVNW")
    response = api.request("GET", "getReceiptProof", data={"input": f'{{"token": "{fresh.token}"}}'})
    assert response.status_code == 404
    assert response["Retry-After"] == str(settings.RECECO_LOG_COMMIT_LAG + settings.RECECO_LOG_CHECKPOINT_INTERVAL)
    message = "This receipt is not in the log's checkpoint of 5 entries yet: try again"
    assert response.json() == error_envelope(404, "NOT_FOUND", message, "getReceiptProof")


@pytest.mark.parametrize(
    ("input", "status", "code", "message"),
    [
        ({"token": "ZZZZZZ"}, 404, "NOT_FOUND", "Receipt not found"),
        ({"token": "no!"}, 400, "INVALID_INPUT", "Invalid token format"),
        ({}, 400, "INVALID_INPUT", "token: This field is required"),
        ({"token": "PROV01", "entry": "refund"}, 400, "INVALID_INPUT",
         'entry: Must be "receipt", "void" or "set_aside", or absent for the receipt'),
        ({"token": "PROV01", "tree_size": "5"}, 400, "INVALID_INPUT",
         "tree_size: Must be a JSON integer from 1 to 9223372036854775807"),
        ({"token": "PROV01", "tree_size": 4}, 404, "NOT_FOUND",
         "tree_size: the log published no checkpoint of this size"),
        ({"token": "PROV01", "entry": "void"}, 404, "NOT_FOUND",
         "This void is not in the log's checkpoint of 5 entries yet: try again"),
    ],
)  # fmt: skip
def test_refused_proofs(call, logged, input, status, code, message):
    assert call("getReceiptProof", input) == (status, error_envelope(status, code, message, "getReceiptProof"))


def test_another_merchants_key_cannot_read_a_proof(call, logged, other_live_key):
    status, body = call("getReceiptProof", {"token": logged[1].token}, key=other_live_key)
    assert (status, body) == (404, error_envelope(404, "NOT_FOUND", "Receipt not found", "getReceiptProof"))


def test_it_is_a_query(api, logged):
    status, body = api.post("getReceiptProof", {"token": logged[1].token})
    assert status == 405
    assert body["error"]["message"] == "getReceiptProof is a query: call it with GET, not POST"


def test_the_latest_checkpoint_and_an_older_one(call, logged, receipt_factory):
    keys = signingkeys.keyring()
    status, body = call("getLogCheckpoint", None)
    assert status == 200, body
    data = body["result"]["data"]
    assert data["tree_size"] == 5
    signed = note.verify_checkpoint(data["checkpoint"], [keys.public[keys.kid]], ORIGIN)
    assert (signed.size, base64.b64encode(signed.root).decode()) == (5, data["root"])
    assert data["published_at"].endswith("Z")
    receipt_factory(token="rcpt_provenlate_aaaa", short_code="PROVLT")
    append()
    checkpoints.forget_cached()
    assert call("getLogCheckpoint", {})[1]["result"]["data"]["tree_size"] == 6
    assert call("getLogCheckpoint", {"tree_size": 5})[1]["result"]["data"] == data


def test_before_the_first_checkpoint_there_is_none(call, db):
    message = "The log has published no checkpoint yet"
    assert call("getLogCheckpoint", None) == (404, error_envelope(404, "NOT_FOUND", message, "getLogCheckpoint"))
    assert call("getLogConsistency", {"from": 1}) == (
        404,
        error_envelope(404, "NOT_FOUND", message, "getLogConsistency"),
    )


def test_a_consistency_proof_shows_the_log_only_grew(call, logged, receipt_factory):
    old = call("getLogCheckpoint", None)[1]["result"]["data"]
    for n in range(3):
        receipt_factory(token=f"rcpt_provenmore{n}_aaa", short_code=f"PROVM{n}")
    append()
    checkpoints.forget_cached()
    new = call("getLogCheckpoint", None)[1]["result"]["data"]
    status, body = call("getLogConsistency", {"from": old["tree_size"]})
    assert status == 200, body
    data = body["result"]["data"]
    assert (data["from"], data["to"]) == (5, 8)
    proof = [base64.b64decode(value) for value in data["proof"]]
    merkle.verify_consistency(5, 8, proof, base64.b64decode(old["root"]), base64.b64decode(new["root"]))


@pytest.mark.parametrize(
    ("input", "message"),
    [
        ({}, "from: Must be a JSON integer from 1 to 9223372036854775807"),
        ({"from": 0}, "from: Must be a JSON integer from 1 to 9223372036854775807"),
        ({"from": 4, "to": 3}, "from and to: whole numbers with 0 < from <= to"),
    ],
)
def test_refused_consistency_proofs(call, logged, input, message):
    assert call("getLogConsistency", input) == (400, error_envelope(400, "INVALID_INPUT", message, "getLogConsistency"))


def test_a_size_beyond_the_latest_checkpoint(call, logged):
    message = "The latest checkpoint is of 5 entries, not 9"
    assert call("getLogConsistency", {"from": 1, "to": 9}) == (
        404,
        error_envelope(404, "NOT_FOUND", message, "getLogConsistency"),
    )


def test_a_live_key_reading_a_proof_is_held_to_its_limits(api, logged, live_key):
    response = api.request("GET", "getReceiptProof", data={"input": f'{{"token": "{logged[1].token}"}}'},
                           headers=bearer(live_key))  # fmt: skip
    assert response.status_code == 200
    assert response["RateLimit-Policy"]
    assert response["RateLimit"]
