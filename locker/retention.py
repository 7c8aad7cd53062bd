"""What the locker keeps only for a while, deleted by every run of retention as well as on
the way by the next sign-in: a quiet service may see no sign-in for weeks, and an expired
sign-in holds the contact it was asked for. privacy.retention runs ``purge`` (registered
in LockerConfig.ready()), once a day."""

from datetime import datetime

from locker import sessions, signins

# How the applyretention command names purge's count.
SAYS = "expired locker sign-ins and sessions deleted"


def purge(now: datetime) -> int:
    """Delete the sign-ins and the sessions expired at ``now``, contacts with them; return
    how many rows went."""
    return signins.purge(now) + sessions.purge(now)
