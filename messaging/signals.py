"""What the outbox tells the apps above it (they connect in their ``AppConfig.ready()``)."""

from django.dispatch import Signal

# A delivery failed for good (its channel gave up on it): sent with ``delivery``, in the
# transaction that records it, so what a receiver writes is kept only with it.
delivery_failed = Signal()
