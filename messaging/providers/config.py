"""The providers' configuration, checked at start-up: a Django system check
(messaging.E001 …, ``manage.py check`` lists them all), which MessagingConfig.ready also
runs so that no process starts with a provider chosen and its credentials missing.
Messages name the variable, never its value."""

from __future__ import annotations

import re

from django.conf import settings
from django.core import checks

# Alphanumeric sender ids: 3 to 11 letters, digits and spaces (GSM 03.38 allows 11).
SENDER_ID_RE = re.compile(r"[A-Za-z0-9 ]{3,11}")
_SMS_NEEDS = {
    "africastalking": ("RECECO_AFRICASTALKING_USERNAME", "RECECO_AFRICASTALKING_API_KEY"),
    "twilio": ("RECECO_TWILIO_ACCOUNT_SID", "RECECO_TWILIO_AUTH_TOKEN"),
    "termii": ("RECECO_TERMII_API_KEY",),
}
# Without these, the provider's delivery reports are refused (a warning: sending works).
_SMS_REPORTS_NEED = {
    "africastalking": "RECECO_AFRICASTALKING_CALLBACK_SECRET",
    "termii": "RECECO_TERMII_SECRET_KEY",
}
_WHATSAPP_NEEDS = ("RECECO_WHATSAPP_PHONE_NUMBER_ID", "RECECO_WHATSAPP_ACCESS_TOKEN")


def problems() -> list[checks.CheckMessage]:
    """What is wrong with the providers' settings: errors, and warnings of reports that cannot be received."""
    found: list[checks.CheckMessage] = []
    backend = settings.RECECO_SMS_BACKEND
    for name in _SMS_NEEDS.get(backend, ()):
        if not getattr(settings, name):
            found.append(checks.Error(f"RECECO_SMS_BACKEND={backend} needs {name}", id="messaging.E001"))
    if backend in _SMS_REPORTS_NEED and not getattr(settings, _SMS_REPORTS_NEED[backend]):
        name = _SMS_REPORTS_NEED[backend]
        found.append(
            checks.Warning(f"{name} is not set: {backend}'s delivery reports are refused", id="messaging.W001")
        )
    if backend == "twilio" and not (
        settings.RECECO_TWILIO_ACCOUNT_SID.startswith("AC") or not settings.RECECO_TWILIO_ACCOUNT_SID
    ):
        found.append(checks.Error("RECECO_TWILIO_ACCOUNT_SID must be an account SID (AC…)", id="messaging.E002"))
    if backend == "termii" and settings.RECECO_TERMII_CHANNEL not in ("dnd", "generic"):
        found.append(checks.Error("RECECO_TERMII_CHANNEL must be dnd or generic", id="messaging.E003"))
    if (
        backend in _SMS_NEEDS
        and not SENDER_ID_RE.fullmatch(settings.RECECO_SMS_SENDER)
        and not (backend == "twilio" and settings.RECECO_SMS_SENDER.startswith("+"))
    ):
        found.append(
            checks.Error(
                "RECECO_SMS_SENDER must be a sender id of 3 to 11 letters, digits or spaces (or, for Twilio, a number)",
                id="messaging.E004",
            )
        )
    given = [name for name in _WHATSAPP_NEEDS if getattr(settings, name)]
    if given and len(given) != len(_WHATSAPP_NEEDS):
        missing = next(name for name in _WHATSAPP_NEEDS if name not in given)
        found.append(checks.Error(f"WhatsApp needs {missing} too", id="messaging.E005"))
    if len(given) == len(_WHATSAPP_NEEDS):
        if not settings.RECECO_WHATSAPP_TEMPLATE:
            found.append(checks.Error("WhatsApp needs RECECO_WHATSAPP_TEMPLATE", id="messaging.E006"))
        if not re.fullmatch(r"[a-z]{2,3}(_[A-Z]{2})?", settings.RECECO_WHATSAPP_TEMPLATE_LANGUAGE):
            found.append(
                checks.Error(
                    "RECECO_WHATSAPP_TEMPLATE_LANGUAGE must be a language code such as en or en_US", id="messaging.E007"
                )  # fmt: skip
            )
        if not settings.RECECO_WHATSAPP_APP_SECRET:
            found.append(
                checks.Warning(
                    "RECECO_WHATSAPP_APP_SECRET is not set: WhatsApp's status webhooks are refused", id="messaging.W002"
                )  # fmt: skip
            )
    return found


def check(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """The system check (registered in MessagingConfig.ready)."""
    return problems()
