"""The domain apps' fixtures that the dashboard's pages of those apps use too."""

from tests.einvoicing.conftest import crypto_keys, identified, nrs, nrs_private_key, reporting, taxpayer
from tests.webhooks.conftest import endpoint

__all__ = ["crypto_keys", "endpoint", "identified", "nrs", "nrs_private_key", "reporting", "taxpayer"]
