"""The receipt log's fixtures (tests.ledger.conftest): its key rings, and no checkpoint
cached from another test."""

from tests.ledger.conftest import _no_checkpoint_from_another_test, keys, other_keys

__all__ = ["_no_checkpoint_from_another_test", "keys", "other_keys"]
