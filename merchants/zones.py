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


def zone_name(zone: str, now: datetime | None = None) -> str:
    """A time zone as a shop owner says it, with its abbreviation at ``now`` (default: now):
    "Lagos time (WAT)", "New York time (EST)"; "UTC" for UTC. Written into sentences and
    headings as it is, never in another pair of brackets."""
    tz = zoneinfo.ZoneInfo(zone)
    abbreviation = (now or datetime.now(UTC)).astimezone(tz).tzname()
    place = zone.rsplit("/", 1)[-1].replace("_", " ")
    named = bool(abbreviation) and not abbreviation.lstrip("+-").isdigit()  # "-03" names nothing
    if "/" not in zone or zone.startswith("Etc/"):  # UTC, Etc/GMT+1: no place to name
        return abbreviation if named else zone
    if not named:
        return f"{place} time"
    return f"{place} time ({abbreviation})"
