from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class MessagingConfig(AppConfig):
    name = "messaging"
    verbose_name = "Messages"

    def ready(self):
        from django.core import checks

        from messaging import customers, reports, transports
        from messaging.providers import config
        from messaging.providers.whatsapp import WhatsAppTransport
        from receipts import hooks

        check_task_backend()
        check_providers(config.problems())
        checks.register(config.check, "messaging")
        transports.register(transports.EmailTransport())
        transports.register(transports.SmsTransport())
        transports.register(WhatsAppTransport())
        hooks.register(customers.SendToContacts())
        reports.connect_signals()


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


def check_providers(problems) -> None:
    """Refuse to start when a provider chosen lacks what it needs (messaging.providers.config):
    a worker would otherwise fail every message, and a web process accept them."""
    errors = [problem.msg for problem in problems if problem.is_serious()]
    if errors:
        raise ImproperlyConfigured("; ".join(errors))
