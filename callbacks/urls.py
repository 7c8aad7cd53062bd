"""The providers' callback URLs, to register with each provider (docs/delivery.md)."""

from anymail.webhooks.brevo import BrevoTrackingWebhookView
from anymail.webhooks.mailgun import MailgunTrackingWebhookView
from anymail.webhooks.postmark import PostmarkTrackingWebhookView
from anymail.webhooks.sendgrid import SendGridTrackingWebhookView
from django.urls import path

from callbacks import views
from callbacks.guard import guarded

app_name = "callbacks"

# Each email provider's tracking webhook: django-anymail's view (HTTP basic auth with
# RECECO_EMAIL_WEBHOOK_SECRET, and the provider's own signature where it has one), its
# events reaching messaging.reports through anymail's tracking signal.
_EMAIL = {
    "mailgun": MailgunTrackingWebhookView,
    "postmark": PostmarkTrackingWebhookView,
    "brevo": BrevoTrackingWebhookView,
    "sendgrid": SendGridTrackingWebhookView,
}

urlpatterns = [
    path("twilio/", views.twilio_status, name="twilio"),
    path("africastalking/<str:secret>/", views.africastalking_report, name="africastalking"),
    path("termii/", views.termii_report, name="termii"),
    path("whatsapp/", views.whatsapp_webhook, name="whatsapp"),
    *(path(f"email/{name}/tracking/", guarded(view.as_view()), name=f"email-{name}") for name, view in _EMAIL.items()),
]
