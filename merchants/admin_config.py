"""The admin app as INSTALLED_APPS names it: apart from merchants.sites, which imports
models and so cannot be loaded before the app registry is."""

from django.contrib.admin.apps import AdminConfig


class DashboardAdminConfig(AdminConfig):
    """``django.contrib.admin`` with merchants.sites.DashboardSite as the site models register with."""

    default_site = "merchants.sites.DashboardSite"
