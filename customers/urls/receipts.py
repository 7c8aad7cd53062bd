from django.urls import path, re_path

from customers.views import receipts as views

app_name = "receipts"

urlpatterns = [
    path("", views.index, name="index"),
    path("scan", views.scan, name="scan"),
    path("verify", views.verify, name="verify"),
    path("receipt/<str:reference>", views.receipt_page, name="receipt"),
    path("receipt/<str:reference>/send", views.send, name="send"),
    path("receipt/<str:reference>/gift", views.make_gift, name="make_gift"),
    path("gift/<str:token>", views.gift_page, name="gift"),
    re_path(r"^receipt/(?P<reference>[^/]+)/qr\.(?P<kind>png|svg)$", views.qr_image, name="qr"),
    path("receipt/<str:reference>/receipt.orf.json", views.orf_document, name="orf"),
    path("receipt/<str:reference>/wallet/receipt.pkpass", views.apple_pass, name="apple_pass"),
    path("receipt/<str:reference>/wallet/google", views.google_pass, name="google_pass"),
]
