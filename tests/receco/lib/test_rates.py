"""The one grammar of rates in the settings (receco.lib.rates)."""

import pytest

from receco.lib.rates import parse_rate


@pytest.mark.parametrize(
    ("rate", "limit", "window", "described"),
    [
        ("1000/m", 1000, 60, "1000 per minute"),
        ("100/s", 100, 1, "100 per second"),
        ("30/5m", 30, 300, "30 per 300 seconds"),
        ("5000/d", 5000, 86400, "5000 per day"),
    ],
)
def test_rates_are_read(rate, limit, window, described):
    parsed = parse_rate(rate)
    assert (parsed.limit, parsed.window, parsed.describe()) == (limit, window, described)


@pytest.mark.parametrize("rate", ["0/m", "10", "10/x", "ten/m", "10/0m"])
def test_bad_rates_are_refused(rate):
    with pytest.raises(ValueError, match="is not a rate such as 1000/m"):
        parse_rate(rate)
