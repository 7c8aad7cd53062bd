"""The dashboard's refund and void forms: what the shop owner chose, turned into the very
request refundReceipt and voidReceipt validate (receipts.refunds), so that one set of
rules decides what may be refunded.

The forms hold no rule that depends on the sale's state (what is left to refund): a form
posted twice must read the same both times, so that the second post reaches the refund's
idempotency (its refund token) rather than a "too many" the first post caused.
"""

from django import forms

from receco.errors import InvalidInput
from receipts.models import Receipt
from receipts.money import currency_info, format_amount, minor_units
from receipts.refunds import quantities_left, remaining, validate_refund

ITEMS, AMOUNT, EVERYTHING = "items", "amount", "all"
CHOOSE_AN_ITEM = "Choose how many of at least one item to refund."
TYPE_AN_AMOUNT = "Type the amount to refund."
AMOUNT_ABOVE_ZERO = "Type an amount above zero."
REASON_HELP = "The customer sees it on the refund receipt."


class RefundForm(forms.Form):
    what = forms.ChoiceField(label="What to refund", widget=forms.RadioSelect)
    amount = forms.CharField(label="Amount", required=False, max_length=40)
    reason = forms.CharField(label="Reason", max_length=200, help_text=REASON_HELP)
    # The refund's idempotency key (its token), made when the form is first shown: the
    # same form posted twice makes one refund.
    refund_token = forms.CharField(widget=forms.HiddenInput, max_length=64)

    def __init__(self, sale: Receipt, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sale = sale
        left = format_amount(remaining(sale), sale.currency)
        self.fields["what"].choices = [
            (ITEMS, "Chosen items"),
            (AMOUNT, "An amount"),
            (EVERYTHING, f"Everything not refunded yet ({left})"),
        ]
        example = "1,500" if currency_info(sale.currency).digits == 0 else "1,500.00"
        self.fields["amount"].label = f"Amount in {sale.currency}"
        self.fields["amount"].help_text = f"As the customer says it, e.g. {example}. At most {left}."
        self.item_fields = []
        for index, (item, left_of_item) in enumerate(zip(sale.items, quantities_left(sale), strict=True)):
            name = f"item_{index}"
            price = format_amount(item["unit_price"], sale.currency)
            self.fields[name] = forms.IntegerField(
                label=str(item["name"]),
                min_value=0,
                required=False,
                initial=0,
                help_text=f"{price} each · {left_of_item} of {item['quantity']} not refunded yet",
                # The browser's bound only: the refund's own rule refuses more than is left.
                widget=forms.NumberInput(attrs={"max": left_of_item, "inputmode": "numeric"}),
            )
            self.item_fields.append(name)

    def items(self):
        """The item quantity fields, bound, in the sale's order."""
        return [self[name] for name in self.item_fields]

    def clean(self):
        cleaned = super().clean()
        what = cleaned.get("what")
        request = {
            "token": self.sale.token,
            "refund_token": cleaned.get("refund_token"),
            "reason": cleaned.get("reason"),
        }
        if what == ITEMS:
            lines = [
                {"index": index, "quantity": cleaned.get(name)}
                for index, name in enumerate(self.item_fields)
                if cleaned.get(name)
            ]
            if not lines:
                raise forms.ValidationError(CHOOSE_AN_ITEM)
            request["items"] = lines
        elif what == AMOUNT:
            if not cleaned.get("amount"):
                self.add_error("amount", TYPE_AN_AMOUNT)
                return cleaned
            try:
                request["amount"] = minor_units(cleaned["amount"], self.sale.currency)
            except ValueError as exc:
                self.add_error("amount", str(exc))
                return cleaned
            if not request["amount"]:
                self.add_error("amount", AMOUNT_ABOVE_ZERO)
                return cleaned
        if self.errors:
            return cleaned
        try:
            self.request = validate_refund(request)
        except InvalidInput as exc:
            raise forms.ValidationError(str(exc)) from None
        return cleaned


class VoidForm(forms.Form):
    reason = forms.CharField(label="Reason", max_length=200, help_text="The customer sees it on the voided receipt.")
