import pytest

from receco.ops.access_log import redact


@pytest.mark.parametrize(
    ("path", "logged"),
    [
        ("/app/receipt/rcpt_mfx3k2a1_q8z0lp", "/app/receipt/*"),
        ("/app/receipt/K7P2QX/send", "/app/receipt/*/send"),
        ("/app/receipt/rcpt_mfx3k2a1_q8z0lp/qr.svg", "/app/receipt/*/qr.svg"),
        ("/receipt/rcpt_mfx3k2a1_q8z0lp", "/receipt/*"),
        ("/r/K7P2QX", "/r/*"),
        ("/n/K7P2QX", "/n/*"),
        ("/app/r/K7P2QX", "/app/r/K7P2QX"),
        ("/api/trpc/getReceipt", "/api/trpc/getReceipt"),
        ("/app/scan", "/app/scan"),
        ("/admin/receipts/receipt/42/change/", "/admin/receipts/receipt/*/change/"),
    ],
)
def test_receipt_references_are_left_out(path, logged):
    assert redact(path) == logged
