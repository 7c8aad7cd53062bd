from django.apps import AppConfig


class CustomersConfig(AppConfig):
    """What customers reach in a browser: the scan and receipt pages, the locker, "Not your
    receipt?". It has no models: it shows the domain apps' (docs/customer-pages.md)."""

    name = "customers"
    verbose_name = "Customer pages"
