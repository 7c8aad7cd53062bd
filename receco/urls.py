from django.contrib import admin
from django.urls import include, path

from receipts.views import home

urlpatterns = [
    path("", home, name="home"),
    path("api/trpc/", include("agentapi.urls")),
    path("admin/", admin.site.urls),
    # The customer web app (issue 4): scan page, receipt pages, QR images.
    path("app/", include("receipts.urls")),
]

handler400 = "agentapi.handlers.bad_request"
handler403 = "agentapi.handlers.permission_denied"
handler404 = "agentapi.handlers.page_not_found"
handler500 = "agentapi.handlers.server_error"
