"""The locker's records: sign-ins under way (a code texted, a link emailed) and, per
contact signed in, the key its sessions must carry ("Sign out everywhere" deletes it)."""

from django.db import models


class SignIn(models.Model):
    """One code or link asked for. The code or link itself is never stored: it is made from
    ``nonce`` with the server's secret (locker.signins). The contact is kept only until the
    sign-in is used, found to have no receipts to show, or expired (locker.signins.purge, by
    the next sign-in or the daily retention run, whichever comes first)."""

    class Kind(models.TextChoices):
        SMS = "sms", "Code by text message"
        EMAIL = "email", "Link by email"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    # The E.164 number or lower-cased address. Blank once the outbox found no receipt sent
    # to it: the sign-in then refuses every code, as a wrong one, and reveals nothing.
    contact = models.CharField(max_length=254, blank=True)
    nonce = models.CharField(max_length=32)
    tries = models.PositiveSmallIntegerField(default=0)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            # The purge of expired sign-ins (locker.signins.purge, also run by retention).
            models.Index(fields=["expires_at"], name="locker_signin_expires"),
            # Erasure: every sign-in of one contact (locker.signins.forget_contact).
            models.Index(fields=["contact"], name="locker_signin_contact"),
        ]

    def __str__(self) -> str:
        return f"sign-in {self.pk} ({self.kind})"


class SessionKey(models.Model):
    """Per contact signed in somewhere, the random key its sessions must carry. "Sign out
    everywhere" and erasure delete it, ending them all; so does the next sign-in of anyone
    once it is older than a session lives (locker.sessions). Named by a keyed digest of the
    contact (locker.contacts.Contact.digest), never the contact itself, and only while one
    of its sessions may be alive."""

    digest = models.CharField(max_length=64, unique=True)  # also the look-up index of every locker page
    key = models.CharField(max_length=32)
    # The last sign-in: the row outlives it by a session's life at most.
    signed_in_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"sessions since {self.signed_in_at:%Y-%m-%d %H:%M}"
