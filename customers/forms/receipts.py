"""The receipt page's "send me this receipt" form.

Validation is receipts.contacts.clean_contact, the same code updateReceiptContact
runs; this form only turns its messages into words for a customer. Where the shop offers
WhatsApp (messaging.channels.offers_whatsapp) the number may be sent to on WhatsApp
instead of by text message, the default.
"""

from django import forms

from receco.errors import InvalidInput
from receipts.contacts import (
    MAX_EMAIL_LENGTH,
    MAX_PHONE_LENGTH,
    SMS_CHANNEL,
    WHATSAPP_CHANNEL,
    clean_contact,
    phone_example,
)

PHONE_CHANNEL_CHOICES = [(SMS_CHANNEL, "Text message (SMS)"), (WHATSAPP_CHANNEL, "WhatsApp")]
WHATSAPP_NOT_OFFERED = "This shop does not send receipts on WhatsApp: choose text message."


class ContactForm(forms.Form):
    email = forms.CharField(required=False, max_length=MAX_EMAIL_LENGTH, strip=True)
    phone = forms.CharField(required=False, max_length=MAX_PHONE_LENGTH, strip=True)
    phone_channel = forms.ChoiceField(
        required=False, choices=PHONE_CHANNEL_CHOICES, error_messages={"invalid_choice": WHATSAPP_NOT_OFFERED}
    )

    def __init__(self, *args, whatsapp: bool = False, **kwargs):
        """``whatsapp``: whether the receipt's shop offers WhatsApp; without it the number
        is always sent to by text message."""
        super().__init__(*args, **kwargs)
        self.offers_whatsapp = whatsapp
        if not whatsapp:
            self.fields["phone_channel"].choices = PHONE_CHANNEL_CHOICES[:1]

    def clean_phone_channel(self) -> str:
        return self.cleaned_data.get("phone_channel") or SMS_CHANNEL

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        try:
            data["email"], data["phone"] = clean_contact(data.get("email"), data.get("phone"))
        except InvalidInput as exc:
            field, _, _ = exc.message.partition(":")
            if field == "email":
                self.add_error("email", "Enter a valid email address, like name@example.com.")
            elif field == "phone":
                self.add_error("phone", f"Enter a valid mobile number, like {phone_example()}.")
            else:
                raise forms.ValidationError("Enter an email address or a mobile number.") from None
        return data
