from django.urls import path

from customers.views import locker as views

app_name = "locker"

urlpatterns = [
    path("my", views.my, name="my"),
    path("my/start", views.start, name="start"),
    path("my/code", views.code, name="code"),
    path("my/email-sent", views.email_sent, name="email_sent"),
    path("my/link/<int:pk>/<str:secret>", views.link, name="link"),
    path("my/sign-out", views.sign_out, name="sign_out"),
    path("my/sign-out-everywhere", views.sign_out_everywhere, name="sign_out_everywhere"),
    path("my/erase", views.erase, name="erase"),
    path("my/download", views.download, name="download"),
]
