"""The admin app as INSTALLED_APPS names it: apart from dashboard.sites, which imports
models and so cannot be loaded before the app registry is."""

from django.contrib.admin.apps import AdminConfig


class DashboardAdminConfig(AdminConfig):
    """``django.contrib.admin`` with dashboard.sites.DashboardSite as the site models register with."""

    default_site = "dashboard.sites.DashboardSite"
