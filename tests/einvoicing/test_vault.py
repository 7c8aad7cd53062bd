"""NRS credentials sealed at rest: unreadable in the database, opened by any key listed,
refused without one."""

import pytest
from cryptography.fernet import Fernet

from einvoicing import vault

SECRET = "7a94pgjpMmfbUbDLSmE6WkA5fjxCIJpj9Vok2cKUQNQAk"


def test_a_sealed_secret_opens_to_what_was_sealed_and_holds_nothing_of_it():
    sealed = vault.seal(SECRET)
    assert SECRET not in sealed
    assert vault.unseal(sealed) == SECRET
    assert vault.seal(SECRET) != sealed  # a fresh IV each time: equal secrets do not look equal


def test_a_new_key_put_first_still_opens_what_the_old_one_sealed(settings):
    old = settings.RECECO_EINVOICING_KEYS[0]
    sealed = vault.seal(SECRET)
    settings.RECECO_EINVOICING_KEYS = [Fernet.generate_key().decode(), old]
    assert vault.unseal(sealed) == SECRET
    resealed = vault.seal(SECRET)
    settings.RECECO_EINVOICING_KEYS = settings.RECECO_EINVOICING_KEYS[:1]  # the old key dropped
    assert vault.unseal(resealed) == SECRET
    with pytest.raises(vault.VaultClosed, match="^The stored NRS credentials were sealed with a key"):
        vault.unseal(sealed)


def test_without_a_key_nothing_is_sealed_or_opened(settings):
    sealed = vault.seal(SECRET)
    settings.RECECO_EINVOICING_KEYS = []
    assert not vault.available()
    with pytest.raises(vault.VaultClosed, match="^RECECO_EINVOICING_KEYS is not set"):
        vault.seal(SECRET)
    with pytest.raises(vault.VaultClosed):
        vault.unseal(sealed)
