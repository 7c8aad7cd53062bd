"""Dates as a merchant reads them: in the merchant's time zone, named."""

import zoneinfo
from datetime import UTC, datetime

from django.utils import dateformat

# How the dashboard writes a moment: 25 Nov 2026, 14:03 WAT.
DASHBOARD_FORMAT = "j M Y, H:i T"


def local_time(moment: datetime, zone: str, format_string: str) -> str:
    """``moment`` formatted (Django's date format) as it reads in the time zone ``zone``;
    in UTC when that zone cannot show it (a stored date at the calendar's very edge) or is
    no zone at all (a form being corrected shows the value typed)."""
    try:
        local = moment.astimezone(zoneinfo.ZoneInfo(zone))
    except (OverflowError, ValueError, zoneinfo.ZoneInfoNotFoundError):
        local = moment.astimezone(UTC)
    return dateformat.format(local, format_string)


def dashboard_time(moment: datetime | None, zone: str) -> str:
    """``moment`` as the dashboard shows it in ``zone`` (with the zone's abbreviation); "—" for None."""
    return "—" if moment is None else local_time(moment, zone, DASHBOARD_FORMAT)


def today_zone(merchant) -> str:
    """The merchant's time zone as it is named now: "Africa/Lagos (WAT)"."""
    zone = zoneinfo.ZoneInfo(merchant.time_zone)
    abbreviation = datetime.now(zone).tzname()
    return (
        merchant.time_zone if abbreviation in (None, merchant.time_zone) else f"{merchant.time_zone} ({abbreviation})"
    )
