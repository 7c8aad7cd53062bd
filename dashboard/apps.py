from django.apps import AppConfig


class DashboardConfig(AppConfig):
    """The merchant's dashboard: the admin site's pages, sign-in and two-step, the team.
    It has no models: it shows the domain apps' models (docs/dashboard.md)."""

    name = "dashboard"
    verbose_name = "Dashboard"
