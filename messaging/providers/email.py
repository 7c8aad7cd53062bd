"""Email through a provider's HTTP API (django-anymail) instead of SMTP: which providers,
and the settings each needs, from Receco's few variables (RECECO_EMAIL_PROVIDER_*).

Read by receco.settings before any app is loaded: plain data and functions only. The
provider's tracking webhooks reach messaging.reports through anymail's ``tracking``
signal (messaging.reports.connect_signals).
"""

from django.core.exceptions import ImproperlyConfigured

# Provider name -> (anymail's name for its settings, the name of its key there).
PROVIDERS = {
    "mailgun": ("MAILGUN", "API_KEY"),
    "postmark": ("POSTMARK", "SERVER_TOKEN"),
    "brevo": ("BREVO", "API_KEY"),
    "sendgrid": ("SENDGRID", "API_KEY"),
}


def anymail_settings(
    provider: str, *, api_key: str, domain: str = "", api_url: str = "", signing_key: str = ""
) -> tuple[str, dict]:
    """The EMAIL_BACKEND and the ANYMAIL settings of ``provider``. Raises
    ImproperlyConfigured naming the variable that is missing or wrong (never its value)."""
    if provider not in PROVIDERS:
        names = ", ".join(PROVIDERS)
        raise ImproperlyConfigured(f"RECECO_EMAIL_PROVIDER must be one of {names}, or unset for SMTP; not {provider!r}")
    if not api_key:
        raise ImproperlyConfigured(f"RECECO_EMAIL_PROVIDER={provider} needs RECECO_EMAIL_PROVIDER_API_KEY")
    prefix, key_name = PROVIDERS[provider]
    values = {f"{prefix}_{key_name}": api_key}
    if api_url:
        values[f"{prefix}_API_URL"] = api_url
    if provider == "mailgun":
        if domain:
            values["MAILGUN_SENDER_DOMAIN"] = domain
        if signing_key:
            values["MAILGUN_WEBHOOK_SIGNING_KEY"] = signing_key
    elif domain or signing_key:
        raise ImproperlyConfigured(
            "RECECO_EMAIL_PROVIDER_DOMAIN and RECECO_EMAIL_WEBHOOK_SIGNING_KEY are Mailgun's; "
            f"RECECO_EMAIL_PROVIDER is {provider}"
        )
    return f"anymail.backends.{provider}.EmailBackend", values
