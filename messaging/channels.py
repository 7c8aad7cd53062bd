"""Which channels a merchant's receipts may go on, and each merchant's own settings of them.

Email and SMS are always offered (through the deployment's SMTP server or email
provider, and its SMS backend). WhatsApp is offered where the deployment configured the
WhatsApp Business Cloud API (RECECO_WHATSAPP_*) and the merchant did not turn it off
(ChannelSettings, set by the operator with ``setchannels``). A merchant's texts carry
its own sender id where the operator registered one with the provider.
"""

from __future__ import annotations

from django.conf import settings
from django.urls import NoReverseMatch, reverse

from messaging.models import EMAIL, SMS, WHATSAPP, ChannelSettings


def whatsapp_configured() -> bool:
    """Whether the deployment can send on WhatsApp (its phone number id and token are set)."""
    return bool(settings.RECECO_WHATSAPP_PHONE_NUMBER_ID and settings.RECECO_WHATSAPP_ACCESS_TOKEN)


def _settings_of(merchant_id: int | None) -> ChannelSettings | None:
    if merchant_id is None:
        return None
    return ChannelSettings.objects.filter(merchant_id=merchant_id).first()


def configured(merchant_id: int | None) -> list[str]:
    """The channels a receipt of the merchant ``merchant_id`` may be sent on, in the order
    a page offers them: "email", "sms", and "whatsapp" when the deployment has it and the
    merchant did not turn it off. The receipt page's send form offers these."""
    channels = [EMAIL, SMS]
    if whatsapp_configured():
        own = _settings_of(merchant_id)
        if own is None or own.whatsapp:
            channels.append(WHATSAPP)
    return channels


def offers_whatsapp(merchant_id: int | None) -> bool:
    """Whether the merchant's customers may ask for their receipts on WhatsApp."""
    return WHATSAPP in configured(merchant_id)


def sender_id(merchant_id: int | None) -> str:
    """The sender id the merchant's texts carry: its own, else RECECO_SMS_SENDER."""
    own = _settings_of(merchant_id)
    return (own.sms_sender_id if own is not None else "") or settings.RECECO_SMS_SENDER


def callback_url(provider: str) -> str:
    """The address of ``provider``'s delivery reports under RECECO_WEB_URL, for providers
    told it with each message (Twilio); empty when the callbacks are not served."""
    try:
        return settings.RECECO_WEB_URL + reverse(f"callbacks:{provider}")
    except NoReverseMatch:
        return ""
