"""Password reset for dashboard users, by email: Django's views with Receco's words and
templates (templates/registration/). The link in the email works once, for
PASSWORD_RESET_TIMEOUT (3 days, Django's default); a reset password still needs the
second sign-in step of a user who has one (dashboard.twofactor).

Asking for reset emails is limited per client address (RECECO_PASSWORD_RESET_RATE), so
that nobody floods a staff member's inbox.
"""

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse_lazy

from receco.lib import formlimits


class PasswordResetView(auth_views.PasswordResetView):
    email_template_name = "registration/password_reset_email.txt"
    subject_template_name = "registration/password_reset_subject.txt"
    html_email_template_name = None
    extra_email_context = {"product": "Receco dashboard"}
    success_url = reverse_lazy("password_reset_done")

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if _limited(request):
            context = {"title": "Password reset", "site_header": "Receco dashboard", "site_title": "Receco dashboard"}
            return TemplateResponse(request, "registration/password_reset_limited.html", context, status=429)
        return super().post(request, *args, **kwargs)


def _limited(request: HttpRequest) -> bool:
    return formlimits.refused(request, "merchants.password_reset", settings.RECECO_PASSWORD_RESET_RATE) is not None


_site = {"site_header": "Receco dashboard", "site_title": "Receco dashboard"}

urlpatterns = [
    path("password-reset/", PasswordResetView.as_view(extra_context=_site), name="admin_password_reset"),
    path(
        "password-reset/sent/",
        auth_views.PasswordResetDoneView.as_view(extra_context=_site),
        name="password_reset_done",
    ),
    path(
        "password-reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            extra_context=_site, success_url=reverse_lazy("password_reset_complete")
        ),
        name="password_reset_confirm",
    ),
    path(
        "password-reset/done/",
        auth_views.PasswordResetCompleteView.as_view(extra_context=_site),
        name="password_reset_complete",
    ),
]
