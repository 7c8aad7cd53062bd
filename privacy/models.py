"""What remains of an erasure: that it happened, and nothing of whom it was for."""

from django.db import models


class ErasureRecord(models.Model):
    """One erasure of a customer's contact (privacy.erasure) or one run of retention
    (privacy.retention): when, which kind of contact, how, and how many rows of each kind
    changed.

    It holds no contact, nor anything made from one: not even a hash. A phone number is one
    of a few billion that a laptop tries in minutes, so a hash of one, salted or not, is
    the number itself to whoever holds the record and the salt. So a record cannot say
    whether a given number was erased; the receipts themselves no longer hold it.
    """

    class Via(models.TextChoices):
        LOCKER = "locker", "The customer, signed in to the receipt locker"
        LINK = "link", "A “Not your receipt?” link"
        OPERATOR = "operator", "An operator (manage.py erasecontact)"
        RETENTION = "retention", "Retention (manage.py applyretention)"

    class Kind(models.TextChoices):
        PHONE = "phone", "Phone number"
        EMAIL = "email", "Email address"
        ANY = "any", "Every contact past retention"

    created_at = models.DateTimeField(auto_now_add=True)
    via = models.CharField(max_length=16, choices=Via.choices)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    # Rows changed, by kind: {"receipts": 2, "deliveries": 3, "webhook_events": 1, ...}.
    counts = models.JSONField(default=dict)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "erasure record"

    def __str__(self) -> str:
        return f"{self.get_kind_display()} erased by {self.via} at {self.created_at:%Y-%m-%d %H:%M}"
