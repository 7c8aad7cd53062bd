from django.apps import AppConfig


class AgentApiConfig(AppConfig):
    name = "agentapi"
    verbose_name = "POS API"
