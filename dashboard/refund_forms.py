"""The dashboard's refund and void forms: what the shop owner chose, turned into the very
request refundReceipt and voidReceipt validate (receipts.refunds), so that one set of
rules decides what may be refunded.

What the owner filled in decides what is refunded when the choice says otherwise
(``meant``): an amount typed while "Chosen items" is ticked and no item chosen is a refund
of that amount (the page's script ticks "An amount" as they type; without scripts the
server reads it the same way).

The forms hold no rule that depends on the sale's state (what is left to refund): a form
posted twice must read the same both times, so that the second post reaches the refund's
idempotency (its refund token) rather than a "too many" the first post caused.
"""

from django import forms

from receco.errors import InvalidInput
from receipts.models import Receipt
from receipts.money import currency_info, format_amount, minor_units
from receipts.refunds import RefundPlan, SaleAdjustments, quantities_left, remaining, sale_adjustments, validate_refund

ITEMS, AMOUNT, EVERYTHING = "items", "amount", "all"
CHOOSE_AN_ITEM = "Choose how many of at least one item to refund."
TYPE_AN_AMOUNT = "Type the amount to refund."
AMOUNT_ABOVE_ZERO = "Type an amount above zero."
REASON_HELP = "The customer sees it on the refund receipt."


def meant(what: str | None, items_chosen: bool, amount_typed: bool) -> str | None:
    """What to refund, from the choice ticked and what was filled in: the choice, except
    that an amount typed with no item chosen is an amount, and items chosen with no amount
    typed are items (the other choice's fields left empty cannot be what was meant)."""
    if what == ITEMS and amount_typed and not items_chosen:
        return AMOUNT
    if what == AMOUNT and items_chosen and not amount_typed:
        return ITEMS
    return what


def adjustments_words(sale: Receipt, adjustments: SaleAdjustments) -> str:
    """The sale's discounts, taxes and charges in words (receipts.refunds.sale_adjustments):
    ``a discount of ₦150.00 (10%) and VAT 7.5% on top``."""
    parts = _adjustments(sale, adjustments)
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _adjustments(sale: Receipt, adjustments: SaleAdjustments) -> list[str]:
    money = sale.currency
    parts = []
    if adjustments.discount:
        items_sum = sum(item["total_price"] for item in sale.items)
        percent = adjustments.discount * 100 / items_sum if items_sum else 0
        share = f" ({percent:g}%)" if percent and (adjustments.discount * 1000) % items_sum == 0 else ""
        parts.append(f"a discount of {format_amount(adjustments.discount, money)}{share}")
    parts += [f"{line['name']} {line['rate']:g}% on top" for line in adjustments.added_taxes]
    if adjustments.other > 0:
        parts.append(f"charges of {format_amount(adjustments.other, money)} not listed as items")
    elif adjustments.other < 0:
        parts.append(f"discounts of {format_amount(-adjustments.other, money)} not listed as such")
    return parts


def why_it_differs(sale: Receipt, plan: RefundPlan) -> str | None:
    """Why a refund of items gives back other than their prices, in one sentence, from the
    plan that makes it (receipts.refunds.plan_refund); None when it gives back just that."""
    if plan.items_value is None or plan.amount == plan.items_value:
        return None
    money = sale.currency
    amount, prices = format_amount(plan.amount, money), format_amount(plan.items_value, money)
    if plan.whole_rest:
        tip = sale_adjustments(sale).tip
        tipped = f" (the tip of {format_amount(tip, money)} too)" if tip else ""
        return (
            f"These are the last of the sale's items, so the customer gets back all that is left of "
            f"what they paid{tipped}: {amount}, where the items cost {prices}."
        )
    these = "this item's" if sum(line["quantity"] for line in plan.lines) == 1 else "these items'"
    share = format_amount(plan.amount - plan.items_value, money)
    adjustments = sale_adjustments(sale)
    them = "them" if len(_adjustments(sale, adjustments)) > 1 else "it"
    return (
        f"The sale had {adjustments_words(sale, adjustments)}; {these} share of {them} is {share}, "
        f"so the customer gets back {amount}, not {prices}."
    )


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
        adjustments = sale_adjustments(sale)
        # Said before the owner chooses: items give back their share of what was paid.
        self.items_note = (
            f"The sale had {adjustments_words(sale, adjustments)}: items give back their share of "
            "what the customer paid, shown before you confirm."
            if adjustments
            else ""
        )
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
        items_chosen = any(cleaned.get(name) for name in self.item_fields)
        what = meant(cleaned.get("what"), items_chosen, bool(cleaned.get("amount")))
        if what != cleaned.get("what"):
            cleaned["what"] = what
            # Shown again (the confirmation's hidden fields, "Change") as it was read.
            self.data = self.data.copy()
            self.data[self.add_prefix("what")] = what
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
