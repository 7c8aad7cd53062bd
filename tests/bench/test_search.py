"""The dashboard search's benchmark (bench/search.py), run as the docs run it at its
smallest, on a database of its own: a line of figures for each term, with and without item
names, the item found only with them."""

import re

import pytest


@pytest.mark.postgres
def test_it_times_each_term_with_and_without_item_names(smoke):
    out = smoke.run("search.py", "--receipts", "60", "--rounds", "1", DATABASE_URL=smoke.database_url("search"))
    assert re.search(r"^database: postgresql; shop of 60 receipts; 1 requests a term$", out, re.M), out
    for term in ("jollof", "semovita", "couscous", "4242", "1,300.00", "0803 123 4567"):
        line = rf"^'{re.escape(term)}': without items p50 [\d.]+ ms \(max [\d.]+, queries [\d.]+, (\d+) found\); with items p50 [\d.]+ ms \(max [\d.]+, queries [\d.]+, (\d+) found\)$"  # noqa: E501
        assert re.search(line, out, re.M), f"no line for {term!r}:\n{out}"
    jollof = re.search(r"^'jollof': .*, (\d+) found\); .*, (\d+) found\)$", out, re.M)
    assert jollof[1] == "0"
    assert int(jollof[2]) > 0
