"""Key format, digest, rotation and revocation as plain functions (no HTTP)."""

import math
import re
import zlib
from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.crypto import salted_hmac

from merchants.keys import (
    BASE62,
    SECRET_LENGTH,
    KeyStateError,
    find_key,
    generate_key,
    issue_key,
    key_digest,
    parse_grace,
    proves,
    revoke_key,
    rotate_key,
    well_formed,
)
from merchants.models import ApiKey

pytestmark = pytest.mark.django_db


def test_a_key_has_a_visible_type_a_lookup_id_a_secret_and_a_checksum():
    key = generate_key("live")
    assert re.fullmatch(r"poslive_[0-9A-Za-z]{50}", key)
    crc = 0
    for char in key[-6:]:
        crc = crc * 62 + BASE62.index(char)
    assert crc == zlib.crc32(key[:-6].encode())


def test_keys_carry_at_least_128_random_bits():
    keys = {generate_key("test")[20:52] for _ in range(200)}
    assert len(keys) == 200
    assert SECRET_LENGTH * math.log2(len(BASE62)) >= 128


@pytest.mark.parametrize("position", [8, 15, 20, 40, 55])
def test_any_single_typo_fails_the_checksum(position):
    key = generate_key("live")
    typo = key[:position] + ("x" if key[position] != "x" else "y") + key[position + 1 :]
    assert well_formed(key) is not None
    assert well_formed(typo) is None


def test_only_a_digest_is_stored(merchant):
    issued = issue_key(merchant, "live", "Till 1")
    stored = ApiKey.objects.get(pk=issued.api_key.pk)
    assert stored.digest == key_digest(issued.key)
    assert len(stored.digest) == 64
    assert stored.lookup_id == issued.key[8:20]
    assert issued.key[20:] not in str(stored.__dict__)
    assert str(stored) == f"Till 1 ({issued.key[:20]}…)"


def test_the_digest_is_djangos_salted_hmac_so_stored_digests_stay_valid(settings):
    key = generate_key("live")
    settings.RECECO_API_KEY_SECRET = "the-server-secret"
    expected = salted_hmac("receco.merchants.ApiKey", key, secret="the-server-secret", algorithm="sha256")
    assert key_digest(key) == expected.hexdigest()


def test_the_digest_is_keyed_by_the_server_secret(settings):
    key = generate_key("live")
    before = key_digest(key)
    settings.RECECO_API_KEY_SECRET = "another-secret"
    assert key_digest(key) != before


def test_a_key_that_proved_once_is_still_told_from_any_other(merchant):
    issued = issue_key(merchant, "live")
    assert proves(issued.key, issued.api_key) is True
    assert proves(issued.key, issued.api_key) is True  # the process's own proof
    forged = issued.key[:-1] + ("A" if issued.key[-1] != "A" else "B")
    assert proves(forged, issued.api_key) is False
    assert proves(generate_key("live"), issued.api_key) is False


def test_a_key_proved_under_one_server_secret_is_proved_again_under_another(merchant, settings):
    issued = issue_key(merchant, "live")
    assert proves(issued.key, issued.api_key) is True
    settings.RECECO_API_KEY_SECRET = "another-secret"  # its stored digest was made under the old one
    assert proves(issued.key, issued.api_key) is False


def test_find_key_accepts_the_full_key_or_its_prefix(merchant):
    issued = issue_key(merchant, "test")
    assert find_key(issued.key) == issued.api_key
    assert find_key(issued.api_key.prefix) == issued.api_key


def test_find_key_refuses_a_forged_full_key(merchant):
    issued = issue_key(merchant, "test")
    other = generate_key("test")
    from merchants.keys import _checksum

    forged = issued.key[:20] + other[20:-6]
    with pytest.raises(ApiKey.DoesNotExist):
        find_key(forged + _checksum(forged))


class TestRotation:
    def test_the_new_key_keeps_merchant_type_and_name(self, merchant):
        old = issue_key(merchant, "live", "Till 1").api_key
        new = rotate_key(old).api_key
        assert (new.merchant, new.type, new.name) == (merchant, "live", "Till 1")
        old.refresh_from_db()
        assert old.rotated_to == new

    def test_the_old_key_expires_after_the_grace_period(self, merchant):
        old = issue_key(merchant, "live").api_key
        now = timezone.now()
        rotate_key(old, timedelta(hours=24), now=now)
        old.refresh_from_db()
        assert old.expires_at == now + timedelta(hours=24)
        assert old.state(now + timedelta(hours=23, minutes=59)) == ApiKey.State.EXPIRING
        assert old.state(now + timedelta(hours=24)) == ApiKey.State.EXPIRED

    def test_the_default_grace_is_24_hours(self, merchant):
        old = issue_key(merchant, "live").api_key
        before = timezone.now()
        rotate_key(old)
        assert before + timedelta(hours=24) <= old.expires_at <= timezone.now() + timedelta(hours=24)

    @pytest.mark.parametrize("prepare", [revoke_key, rotate_key])
    def test_only_active_keys_rotate(self, merchant, prepare):
        old = issue_key(merchant, "live").api_key
        prepare(old)
        with pytest.raises(KeyStateError, match="only active keys can be rotated"):
            rotate_key(old)


def test_revocation_is_immediate_and_permanent(merchant):
    api_key = issue_key(merchant, "live").api_key
    assert revoke_key(api_key) is True
    assert revoke_key(api_key) is False
    api_key.refresh_from_db()
    assert api_key.state() == ApiKey.State.REVOKED


def test_keys_older_than_90_days_are_due_for_rotation(merchant):
    api_key = issue_key(merchant, "live").api_key
    now = timezone.now()
    assert not api_key.rotation_due(now + timedelta(days=89))
    assert api_key.rotation_due(now + timedelta(days=90, seconds=1))
    revoke_key(api_key)
    assert not api_key.rotation_due(now + timedelta(days=100))


@pytest.mark.parametrize(
    ("text", "expected"),
    [("24h", timedelta(hours=24)), ("30m", timedelta(minutes=30)), ("2d", timedelta(days=2)), ("0", timedelta(0))],
)
def test_grace_periods_are_read(text, expected):
    assert parse_grace(text) == expected


@pytest.mark.parametrize("text", ["", "24", "1w", "-1h", "soon", "31d"])
def test_bad_grace_periods_are_refused(text):
    with pytest.raises(ValueError, match="grace must"):
        parse_grace(text)
