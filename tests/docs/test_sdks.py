"""docs/sdks.md says what the public SDKs send, as an integrator measured it, and the
service accepts all of it."""

import re

import pytest

from tests.servers import ROOT

pytestmark = pytest.mark.django_db

SDKS = (ROOT / "docs" / "sdks.md").read_text()
BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def test_the_node_sdks_tokens_are_16_to_26_characters_and_accepted(api, sale):
    """The Node SDK joins two pieces of up to 13 base-36 digits, shorter when the random
    number's digits run out: an integrator saw 16 to 26 characters, the doc said 20 to 26."""
    said = re.search(r"(\d+) to (\d+) base-36 characters with no prefix", SDKS)
    assert said, "docs/sdks.md says how long the Node SDK's tokens are"
    shortest, longest = int(said[1]), int(said[2])
    assert (shortest, longest) == (16, 26)
    for length in range(shortest, longest + 1):
        token = (BASE36 * 2)[length : length * 2]
        status, body = api.post("createReceiptFromPOS", {**sale, "token": token})
        assert (status, body["result"]["data"]["token"]) == (200, token)
