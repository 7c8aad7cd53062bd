from django.apps import AppConfig


class AgentApiConfig(AppConfig):
    name = "agentapi"
    verbose_name = "POS API"

    def ready(self):
        # Registers the procedures (receco.lib.trpc.PROCEDURES): the middleware below the
        # API layer tells its paths and counts its calls by their names.
        from agentapi import procedures  # noqa: F401
