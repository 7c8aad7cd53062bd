"""The locker's forms: the contact to prove, the code texted to it, the search of its receipts."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from django import forms

from locker.contacts import read_contact
from locker.listing import Search
from locker.signins import CODE_DIGITS
from receipts.contacts import MAX_EMAIL_LENGTH


class SignInForm(forms.Form):
    contact = forms.CharField(required=False, max_length=MAX_EMAIL_LENGTH, strip=True)

    def clean_contact(self):
        try:
            return read_contact(self.cleaned_data["contact"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None


class CodeForm(forms.Form):
    code = forms.CharField(required=False, max_length=32, strip=True)

    def clean_code(self) -> str:
        code = re.sub(r"[\s-]", "", self.cleaned_data["code"])
        if not re.fullmatch(rf"\d{{{CODE_DIGITS}}}", code):
            raise forms.ValidationError(f"Enter the {CODE_DIGITS}-digit code from the text message.")
        return code


class SearchForm(forms.Form):
    shop = forms.CharField(required=False, max_length=100, strip=True)
    day = forms.DateField(required=False, error_messages={"invalid": "Enter a date, like 2026-11-22."})
    amount = forms.CharField(required=False, max_length=20, strip=True)

    def clean_amount(self) -> Decimal | None:
        text = self.cleaned_data["amount"].replace(",", "").replace(" ", "")
        if not text:
            return None
        try:
            amount = Decimal(text)
        except InvalidOperation:
            amount = None
        if amount is None or not amount.is_finite() or amount < 0 or amount.as_tuple().exponent < -3:
            raise forms.ValidationError("Enter an amount, like 1300 or 1,300.50.")
        return amount

    def search(self) -> Search:
        """What was asked for; nothing when the form is not valid."""
        if not self.is_bound or not self.is_valid():
            return Search()
        data = self.cleaned_data
        return Search(shop=data["shop"], day=data["day"], amount=data["amount"])
