"""The receipt page's "send me this receipt" form.

Validation is receipts.contacts.clean_contact, the same code updateReceiptContact
runs; this form only turns its messages into words for a customer.
"""

import phonenumbers
from django import forms
from django.conf import settings

from receco.errors import InvalidInput
from receipts.contacts import MAX_EMAIL_LENGTH, MAX_PHONE_LENGTH, clean_contact


def phone_example() -> str:
    """A valid mobile number of RECECO_PHONE_REGION as people write it, e.g. ``0802 123 4567``."""
    number = phonenumbers.example_number_for_type(settings.RECECO_PHONE_REGION, phonenumbers.PhoneNumberType.MOBILE)
    if number is None:
        return "+234 802 123 4567"
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)


class ContactForm(forms.Form):
    email = forms.CharField(required=False, max_length=MAX_EMAIL_LENGTH, strip=True)
    phone = forms.CharField(required=False, max_length=MAX_PHONE_LENGTH, strip=True)

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
