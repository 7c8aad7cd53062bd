"""The locker's download benchmark (bench/locker_export.py), run as the docs run it at a
small size, on a database of its own that it makes, the receipts in the log."""

import json
import re

import pytest


@pytest.mark.postgres
def test_it_downloads_a_flood_of_receipts_and_says_what_it_cost(smoke):
    out = smoke.run(
        "locker_export.py", "--receipts", "30", "--items", "5", "--append", "--json",
        DATABASE_URL=smoke.database_url("locker_export"),
    )  # fmt: skip
    for line in (
        r"made 30 receipts of 5 items in [\d.]+ s",
        r"appended them to the log in [\d.]+ s",
        r"database: postgres; 30 receipts of 5 items",
        r"download: [\d.]+ s wall, [\d.]+ s CPU; peak memory [\d.]+ MiB above what the process held before",
        r"zip: [\d.]+ MiB, 30 receipts, [\d.]+ MiB of files before compression",
    ):
        assert re.search(f"^{line}$", out, re.M), f"no line {line!r}:\n{out}"
    figures = json.loads(out.strip().splitlines()[-1])
    assert figures["receipts_in_zip"] == 30
    assert figures["csv_last_line"].startswith("Export Bench Shop,")  # nothing left out
