"""The shop's details in the dashboard in plain words: the labels and help the page shows
(the model's own names stay those of the API and its documents), and the tax identifier's
type as a choice of names ("Nigerian Tax ID (TIN)") where the record keeps its code
(``NG_TIN``). Labels here, not the model's verbose names: those would need a migration,
and the API's words are right where the API is described."""

from django import forms

from dashboard.plain_words import NO_TAX_ID, TAX_ID_TYPES, details
from merchants.models import Merchant

TAX_ID_TYPE_HELP = details(
    "Printed before the number on receipts (TIN, KRA PIN…).",
    "In the API and receipt documents: tax_id_scheme, e.g. NG_TIN.",
)


class MerchantForm(forms.ModelForm):
    tax_id_scheme = forms.ChoiceField(
        label="Tax ID type", required=False, choices=[NO_TAX_ID, *TAX_ID_TYPES], help_text=TAX_ID_TYPE_HELP
    )

    class Meta:
        model = Merchant
        # The admin gives the page's fields (MerchantAdmin.fieldsets); these are the ones named here.
        fields = ["string_id", "is_test", "tax_id_scheme", "tax_id", "receipt_prefix"]
        labels = {
            "string_id": "Shop id",
            "is_test": "Test shop",
            "tax_id_scheme": "Tax ID type",
            "tax_id": "Tax ID",
        }
        help_texts = {
            "string_id": details(
                "The id your till or POS system sends with every sale.", "In the API: merchant_string_id."
            ),
            "is_test": "Every receipt of a test shop is a test receipt.",
            "tax_id_scheme": TAX_ID_TYPE_HELP,  # read only, as tax_id_type (MerchantAdmin)
            "receipt_prefix": "Begins every receipt number: MP gives MP-2026-000123. Capitals and digits; blank: "
            "the first letters of the shop id. A new prefix starts a new series at 1.",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields.get("tax_id_scheme")
        current = self.instance.tax_id_scheme if self.instance else ""
        if field is not None and current and current not in dict(TAX_ID_TYPES):
            # A scheme set before (by the operator, or the API's documents): kept, shown as it is.
            field.choices = [*field.choices, (current, current)]
