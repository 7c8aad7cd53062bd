from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from agentapi.log.views import jwks
from agentapi.openapi import views as openapi
from customers.views.receipts import home
from dashboard import passwords

urlpatterns = [
    # The front page: customers to the scanner, merchants to the dashboard.
    path("", home, name="home"),
    # The API described: the OpenAPI document and the reference page made from it.
    path("api/openapi.json", openapi.openapi_json, name="openapi"),
    path("api/reference/", openapi.reference, name="api-reference"),
    # Dashboard password reset by email (Django's views, Receco's templates).
    path("admin/", include(passwords.urlpatterns)),
    path("admin/", admin.site.urls),
    # The customer's receipt locker: every receipt sent to a proven phone number or address.
    path("app/", include("customers.urls.locker")),
    # The customer web app: scan page, receipt pages, QR images.
    path("app/", include("customers.urls.receipts")),
    # "Not your receipt?": a message's link that removes its contact from the receipt.
    path("app/", include("customers.urls.privacy")),
    # Signed receipts: the public keys, and the receipt log's checkpoint and proofs.
    path(".well-known/jwks.json", jwks, name="jwks"),
    path("log/", include("agentapi.log.urls")),
    # The public SDKs' documentation sends customers to {origin}/receipt/<token>.
    path("receipt/<str:reference>", RedirectView.as_view(pattern_name="receipts:receipt", permanent=True)),
    # Providers' delivery reports: SMS, WhatsApp and email providers call these (callbacks).
    path("callbacks/", include("callbacks.urls")),
    # Text messages' short links, so that a receipt's text fits one part (receipts.rendering.messages):
    # the receipt page, and "Not your receipt?" with its key.
    path("r/<str:reference>", RedirectView.as_view(pattern_name="receipts:receipt")),
    path("n/<str:reference>", RedirectView.as_view(pattern_name="privacy:not_mine", query_string=True)),
]

handler400 = "agentapi.handlers.bad_request"
handler403 = "agentapi.handlers.permission_denied"
handler404 = "agentapi.handlers.page_not_found"
handler500 = "agentapi.handlers.server_error"
