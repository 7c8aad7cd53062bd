"""The locker's records: sign-ins under way (a code texted, a link emailed) and the
sessions of browsers signed in. A browser's cookies hold random tokens only; these rows
keep their digests (locker.sessions)."""

from django.db import models


class SignIn(models.Model):
    """One code or link asked for. The code or link itself is never stored: it is made from
    ``nonce`` with the server's secret (locker.signins). The contact is kept only until the
    sign-in is used, retired by a newer one, found to have no receipts to show, or expired
    (locker.signins.purge, by the next sign-in or the daily retention run, whichever comes
    first)."""

    class Kind(models.TextChoices):
        SMS = "sms", "Code by text message"
        EMAIL = "email", "Link by email"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    # The E.164 number or lower-cased address. Blank once the outbox found no receipt sent
    # to it: the sign-in then refuses every code, as a wrong one, and reveals nothing.
    contact = models.CharField(max_length=254, blank=True)
    # The contact as the pages show it while the browser waits (+234*******67): kept when
    # the contact is blanked, so that those pages never change with what was found.
    masked = models.CharField(max_length=254, blank=True, default="", db_default="")
    # SHA-256 of the random token in the cookie of the browser that asked: the code page
    # finds its sign-in by it (locker.sessions). Null for sign-ins made before it existed.
    browser = models.CharField(max_length=64, null=True)
    nonce = models.CharField(max_length=32)
    tries = models.PositiveSmallIntegerField(default=0)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            # The purge of expired sign-ins (locker.signins.purge, also run by retention).
            models.Index(fields=["expires_at"], name="locker_signin_expires"),
            # Erasure, and a new sign-in retiring the earlier ones: every sign-in of one contact.
            models.Index(fields=["contact"], name="locker_signin_contact"),
        ]
        constraints = [
            # The code page's look-up (a constraint: a unique field would add a LIKE index on PostgreSQL).
            models.UniqueConstraint(fields=["browser"], name="locker_signin_browser_unique"),
        ]

    def __str__(self) -> str:
        return f"sign-in {self.pk} ({self.kind})"


class Session(models.Model):
    """A browser signed in: found by the SHA-256 of the random token its cookie holds (the
    cookie holds nothing else), it keeps the contact proven while the session lives. "Sign
    out" deletes it; "Sign out everywhere" and erasure delete every session of the
    contact; once expired it is deleted by the next sign-in or the daily retention run."""

    token_digest = models.CharField(max_length=64)
    kind = models.CharField(max_length=8, choices=SignIn.Kind.choices)
    contact = models.CharField(max_length=254)  # the E.164 number or lower-cased address
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            # "Sign out everywhere" and erasure: every session of one contact.
            models.Index(fields=["contact"], name="locker_session_contact"),
            # The purge of expired sessions (locker.sessions.purge, also run by retention).
            models.Index(fields=["expires_at"], name="locker_session_expires"),
        ]
        constraints = [
            # The look-up of every locker page (a constraint: a unique field would add a
            # LIKE index on PostgreSQL, which no query uses).
            models.UniqueConstraint(fields=["token_digest"], name="locker_session_token_unique"),
        ]

    def __str__(self) -> str:
        return f"session {self.pk} ({self.kind}) until {self.expires_at:%Y-%m-%d %H:%M}"
