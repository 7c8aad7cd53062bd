from datetime import timedelta

import pytest
from django.utils import timezone

from ledger import checkpoints
from ledger.appender import append_batch
from receco.lib import signingkeys


def append(**options):
    """Append everything committed, as the appender would once the commit lag has passed."""
    options.setdefault("checkpoint", True)
    return append_batch(now=timezone.now() + timedelta(seconds=60), **options)


@pytest.fixture(autouse=True)
def _no_checkpoint_from_another_test():
    """Proofs are served against the checkpoint a process read less than a second ago: not
    one a previous test's rolled-back transaction published."""
    checkpoints.forget_cached()
    yield
    checkpoints.forget_cached()


@pytest.fixture
def keys():
    """The suite's key ring (tests.settings gives the run a key of its own)."""
    return signingkeys.keyring()


@pytest.fixture
def other_keys(settings):
    """Switch to a freshly rotated key ring for the test: a new current key, the suite's key retired."""
    old = signingkeys.keyring()
    import json

    new = signingkeys.generate_jwk()
    retired = old.jwks()["keys"]
    settings.RECECO_SIGNING_KEYS = json.dumps({"keys": [new, *retired]})
    signingkeys.keyring.cache_clear()
    yield signingkeys.keyring()
    signingkeys.keyring.cache_clear()
