from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class MessagingConfig(AppConfig):
    name = "messaging"
    verbose_name = "Messages"

    def ready(self):
        from messaging import customers, transports
        from receipts import hooks

        check_task_backend()
        transports.register(transports.EmailTransport())
        transports.register(transports.SmsTransport())
        hooks.register(customers.SendToContacts())


IMMEDIATE = "django_tasks.backends.immediate.ImmediateBackend"


def check_task_backend() -> None:
    """Refuse to start with the immediate task backend outside debug mode: it sends in the
    process that asked, so a sale or a page would wait for an SMTP server, an SMS provider
    or a merchant's endpoint. The test suite's settings allow it
    (RECECO_IMMEDIATE_TASKS_FOR_TESTS, never read from the environment)."""
    backends = {config["BACKEND"] for config in settings.TASKS.values()}
    if (
        IMMEDIATE in backends
        and not settings.DEBUG
        and not getattr(settings, "RECECO_IMMEDIATE_TASKS_FOR_TESTS", False)
    ):
        raise ImproperlyConfigured(
            "RECECO_TASKS_BACKEND=immediate is for development and tests only: it sends email, texts and webhooks "
            "inside the request that asked for them. Use RECECO_TASKS_BACKEND=database (the default without "
            "DJANGO_DEBUG) and run `python manage.py db_worker`."
        )
