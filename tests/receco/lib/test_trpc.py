"""The API's paths, worked out in one place for the API layer and the operator's middleware."""

import pytest

from receco.lib.trpc import procedure_label, procedure_path


@pytest.mark.parametrize(
    ("path", "names"),
    [
        ("/api/trpc/getReceipt", "getReceipt"),
        ("/api/trpc/getReceipt,getReceipt", "getReceipt,getReceipt"),
        ("/api/trpc/nothingHere", "nothingHere"),  # answered by the API: 404 in its envelope
        ("/api/trpc", ""),
        ("/api/getReceipt", "getReceipt"),  # the PHP SDK's way, for registered names only
        ("/api/reference/", None),
        ("/api/openapi.json", None),
        ("/app/scan", None),
    ],
)
def test_it_tells_the_apis_paths_from_the_pages(path, names):
    assert procedure_path(path) == names


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("/api/trpc/getReceipt", "getReceipt"),
        ("/api/createReceiptFromPOS", "createReceiptFromPOS"),
        ("/api/trpc/getReceipt,getReceipt", "batch"),
        ("/api/trpc/nothingHere", "unknown"),
        ("/api/trpc/getReceipt/", "unknown"),  # not a procedure the router finds either
        ("/api/reference/", None),  # a page: counted under its view's name
    ],
)
def test_it_counts_calls_under_the_procedures_names_only(path, label):
    assert procedure_label(path) == label
