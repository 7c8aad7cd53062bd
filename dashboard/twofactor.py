"""Two-step sign-in to the dashboard (django-otp): after the password, a six-digit code
from an authenticator app (TOTP), or one of ten single-use recovery codes.

Required of the operator (superusers) and shop owners when RECECO_DASHBOARD_REQUIRE_2FA
is on (the default unless DJANGO_DEBUG); anyone else who has set it up is asked too.
Wrong codes in a row slow down per user (django-otp's throttling), from the second one:
a first wrong code is most often a slip of the finger, and the right code typed straight
after it is checked at once (``_verify``); after two the next waits 2 seconds, then 4, 8...
Every wrong code counts as a failed sign-in for django-axes (dashboard.signin_views). A code
of the app that was already used (each works once) is told apart from a wrong one, so that
the user waits for the next rather than doubting the app.

Recovery codes are kept as digests (an HMAC of the server's secret key), like API keys:
the database never holds a code that signs anyone in.
"""

import hashlib
import hmac
import time
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_otp.models import Device
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from merchants.models import MerchantMembership

RECOVERY_CODES = 10
AUTHENTICATOR_NAME = "Authenticator app"
RECOVERY_NAME = "Recovery codes"


class TooManyCodes(Exception):
    """Wrong codes came too fast: no code is checked until ``until``."""

    def __init__(self, until: datetime | None, wrong: int = 2):
        super().__init__(until)
        self.until = until
        self.wrong = wrong  # wrong codes in a row so far

    @property
    def seconds(self) -> int:
        if self.until is None:
            return 1
        return max(1, int((self.until - timezone.now()).total_seconds() + 0.999))

    @property
    def message(self) -> str:
        """What the user reads: ``3 wrong codes in a row: wait 4 seconds, then try again.``"""
        unit = "second" if self.seconds == 1 else "seconds"
        return f"{self.wrong} wrong codes in a row: wait {self.seconds} {unit}, then try again."


class CodeUsedAlready(Exception):
    """The code is one the app showed, but it signed in once already: each works once."""

    def __init__(self, step: int):
        super().__init__(step)
        self.step = step  # seconds between the app's codes

    @property
    def message(self) -> str:
        return (
            "That code was used already: each code works once. Wait for the app's next code "
            f"(a new one every {self.step} seconds), then type it."
        )


def required(user) -> bool:
    """Whether ``user`` must sign in with a second step: the operator and shop owners,
    when RECECO_DASHBOARD_REQUIRE_2FA is on."""
    if not settings.RECECO_DASHBOARD_REQUIRE_2FA:
        return False
    return (
        user.is_superuser or MerchantMembership.objects.filter(user=user, role=MerchantMembership.Role.OWNER).exists()
    )


def enrolled(user) -> bool:
    """Whether ``user`` has a confirmed authenticator app."""
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def pending_authenticator(user) -> TOTPDevice:
    """The authenticator ``user`` is setting up (unconfirmed), made if there is none.

    Kept until confirmed, so that reloading the page shows the same QR code as the one
    already scanned.
    """
    device = TOTPDevice.objects.filter(user=user, confirmed=False).order_by("pk").first()
    return device or TOTPDevice.objects.create(user=user, name=AUTHENTICATOR_NAME, confirmed=False)


def confirm_authenticator(device: TOTPDevice, code: str) -> list[str] | None:
    """Confirm ``device`` with a code it shows: return the user's new recovery codes (to
    be shown once), or None when the code is wrong. Any other authenticator of the user
    is removed. Raises TooManyCodes when wrong codes came too fast."""
    with transaction.atomic():
        device = TOTPDevice.objects.select_for_update().get(pk=device.pk)
        if not _verify(device, _normalize(code)):
            return None
        TOTPDevice.objects.filter(user=device.user).exclude(pk=device.pk).delete()
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        return new_recovery_codes(device.user)


def reset(user) -> bool:
    """Remove ``user``'s authenticator apps and recovery codes (a lost phone); return
    whether there were any. Setting up a new app then takes proof again (dashboard.enrolment)."""
    with transaction.atomic():
        apps, _ = TOTPDevice.objects.filter(user=user).delete()
        codes, _ = StaticDevice.objects.filter(user=user).delete()
    return bool(apps or codes)


def new_recovery_codes(user) -> list[str]:
    """Replace ``user``'s recovery codes with ten new ones and return them: the only time
    they exist in the clear."""
    with transaction.atomic():
        StaticDevice.objects.filter(user=user).delete()
        device = StaticDevice.objects.create(user=user, name=RECOVERY_NAME, confirmed=True)
        codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
        StaticToken.objects.bulk_create(StaticToken(device=device, token=_digest(code)) for code in codes)
    return codes


def recovery_codes_left(user) -> int:
    """How many unused recovery codes ``user`` has."""
    return StaticToken.objects.filter(device__user=user, device__confirmed=True).count()


def verify(user, code: str) -> Device | None:
    """The device of ``user`` that accepts ``code`` (a six-digit code from the app, or an
    unused recovery code, which this uses up), or None. Raises TooManyCodes when wrong
    codes came too fast, before checking this one; CodeUsedAlready when it is a code of the
    app that signed in already (it counts as a wrong one)."""
    code = _normalize(code)
    with transaction.atomic():
        if code.isdigit():
            devices = list(TOTPDevice.objects.select_for_update().filter(user=user, confirmed=True))
            token = code
        else:
            devices = list(StaticDevice.objects.select_for_update().filter(user=user, confirmed=True))
            token = _digest(code)
        for device in devices:
            if _verify(device, token):
                return device
    used = [device for device in devices if isinstance(device, TOTPDevice) and _used_already(device, token)]
    if used:
        raise CodeUsedAlready(used[0].step)
    return None


def _verify(device, token: str) -> bool:
    allowed, details = device.verify_is_allowed()
    if not allowed:
        details = details or {}
        if details.get("failure_count") != 1:
            raise TooManyCodes(details.get("locked_until"), details.get("failure_count") or 2)
        # One wrong code so far: this one is checked now, not after django-otp's pause.
        # Should it be wrong too, verify_token counts it (two in a row: the next waits 2 s),
        # so no more codes are checked than with the pause.
        device.throttling_failure_timestamp = None
    return device.verify_token(token)


def _used_already(device: TOTPDevice, token: str) -> bool:
    """Whether ``token`` is a code ``device`` showed within its tolerance that was used to
    sign in already: TOTPDevice.verify_token refuses any code not newer than the last used."""
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time()
    return totp.verify(int(token), device.tolerance) and totp.t() <= device.last_t


def _normalize(code: str) -> str:
    # Apps show "123 456"; people copy recovery codes with spaces or dashes and capitals.
    return "".join(code.split()).replace("-", "").lower()


def _digest(code: str) -> str:
    # StaticToken.token holds 16 characters: 64 bits of HMAC-SHA256 for a 40-bit code.
    return hmac.new(settings.SECRET_KEY.encode(), f"recovery:{code}".encode(), hashlib.sha256).hexdigest()[:16]
