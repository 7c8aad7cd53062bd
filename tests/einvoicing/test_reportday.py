"""`reportday`: a merchant's day queued again for NRS."""

import pytest
from django.core.management import CommandError, call_command

from einvoicing.models import Report
from messaging.models import Delivery


def test_it_says_what_it_queued(reporting, receipt_factory, capsys):
    sale = receipt_factory()
    Report.objects.filter(receipt=sale).update(state=Report.State.REFUSED)
    Delivery.objects.update(status=Delivery.Status.FAILED)
    call_command("reportday", "mama-put", "2026-11-22")
    assert (
        capsys.readouterr().out == "mama-put 2026-11-22: 1 queued for NRS, 0 already on their way, 0 reported before\n"
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["nobody", "2026-11-22"], "No merchant 'nobody'"),
        (["mama-put", "22/11/2026"], "Not a day: '22/11/2026' (write it YYYY-MM-DD)"),
        (["mama-put", "2026-11-22"], "E-invoicing is off for mama-put: switch it on in the dashboard first"),
    ],
)
def test_it_refuses_what_it_cannot_report_saying_why(merchant, arguments, message):
    with pytest.raises(CommandError, match=f"^{message}$".replace("(", r"\(").replace(")", r"\)")):
        call_command("reportday", *arguments)
