"""Retention as a django-tasks task, for deployments that queue it (a scheduler that
enqueues ``apply_retention`` once a day) rather than run ``manage.py applyretention``."""

from django_tasks import task

from privacy import retention


@task()
def apply_retention() -> dict[str, int]:
    """Remove what is past retention now (privacy.retention.apply); return the counts."""
    return retention.apply().counts
