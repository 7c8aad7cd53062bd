from django.urls import path

from bench.floor import views

urlpatterns = [
    path("api/trpc/getReceipt", views.get_receipt),
    path("api/trpc/createReceiptFromPOS", views.create_receipt),
]
