from django.urls import path

from customers.views import privacy as views

app_name = "privacy"

urlpatterns = [
    # The "Not your receipt?" link of every message (receipts.detach_links).
    path("receipt/<str:reference>/not-mine", views.not_mine, name="not_mine"),
]
