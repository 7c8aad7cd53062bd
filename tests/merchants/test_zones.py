"""A time zone named as a shop owner says it, without brackets inside brackets."""

from datetime import UTC, datetime

import pytest

from merchants.zones import zone_name

WINTER, SUMMER = datetime(2026, 1, 15, 12, 0, tzinfo=UTC), datetime(2026, 7, 15, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("zone", "now", "named"),
    [
        ("Africa/Lagos", WINTER, "Lagos time (WAT)"),
        ("America/New_York", WINTER, "New York time (EST)"),
        ("America/New_York", SUMMER, "New York time (EDT)"),
        ("America/Argentina/Buenos_Aires", WINTER, "Buenos Aires time"),  # "-03": no name of its own
        ("UTC", WINTER, "UTC"),
        ("Etc/UTC", WINTER, "UTC"),
    ],
)
def test_it_names_the_zone_in_words(zone, now, named):
    assert zone_name(zone, now) == named
