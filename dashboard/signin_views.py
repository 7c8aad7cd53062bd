"""The dashboard's second sign-in step and the pages that set it up (dashboard.twofactor,
dashboard.enrolment).

Between the password and the code the session is signed in but not verified: the site
(dashboard.sites) lets it reach nothing but these pages and signing out. Setting up an
app takes proof beyond the password (dashboard.enrolment): a set-up link, the invitation
the user joined by, or a code from the app being replaced.
"""

from base64 import b32encode
from urllib.parse import quote, urlencode, urlsplit

import django_otp
from axes.handlers.proxy import AxesProxyHandler
from django import forms
from django.contrib import auth, messages
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth.signals import user_login_failed
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe

from dashboard import enrolment, signin, twofactor
from receco.lib import formlimits
from receco.lib.qr import qr_svg
from receipts.contacts import mask_email

# The phone's number pad for the app's six digits; recovery codes have letters, so they
# have a field of their own.
_APP_CODE = {"autocomplete": "one-time-code", "inputmode": "numeric", "autocapitalize": "off", "spellcheck": "false"}
_RECOVERY_CODE = {"autocomplete": "off", "autocapitalize": "off", "spellcheck": "false"}
WRONG_CODE = "That code is not right. Check the app shows Receco and try the newest code."


class CodeForm(forms.Form):
    code = forms.CharField(
        label="Code",
        max_length=32,
        required=False,
        help_text="The six digits your authenticator app shows.",
        widget=forms.TextInput(attrs=_APP_CODE),
    )
    recovery = forms.CharField(
        label="Recovery code",
        max_length=32,
        required=False,
        help_text="One of the ten codes you kept when you set up the app.",
        widget=forms.TextInput(attrs=_RECOVERY_CODE),
    )

    def clean(self):
        cleaned = super().clean()
        if not (cleaned.get("code") or "").strip() and not (cleaned.get("recovery") or "").strip():
            self.add_error("code", "Type the code your app shows for Receco.")
        return cleaned

    def given(self) -> tuple[str, str]:
        """The code given and the field it came in."""
        if (self.cleaned_data.get("code") or "").strip():
            return self.cleaned_data["code"], "code"
        return self.cleaned_data["recovery"], "recovery"


class ConfirmForm(forms.Form):
    code = forms.CharField(
        label="Code from the app",
        max_length=16,
        help_text="The six digits the app shows for Receco now.",
        widget=forms.TextInput(attrs=_APP_CODE),
    )


class ReplaceForm(forms.Form):
    code = forms.CharField(
        label="Code from your current app, or a recovery code",
        max_length=32,
        help_text="Proof that it is you, before a new app replaces the one you have.",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", **_RECOVERY_CODE}),
    )


def second_step_pending(request: HttpRequest) -> bool:
    """Whether the signed-in staff user still has to give a code (or set the app up).

    Looked up once per request.
    """
    user = request.user
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return False
    if not hasattr(request, "receco_second_step"):
        verified = getattr(user, "is_verified", None)
        pending = not (verified and verified()) and (twofactor.enrolled(user) or twofactor.required(user))
        request.receco_second_step = pending
    return request.receco_second_step


def next_url(request: HttpRequest) -> str:
    """Where to go after signing in: the ``next`` asked for if it is on this site, else the dashboard."""
    target = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME) or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return reverse("admin:index")


def second_step_url(request: HttpRequest, target: str) -> str:
    """The page that comes after the password for this user: the code; or, without an
    app, the set-up link being opened, or setting up the app."""
    if twofactor.enrolled(request.user):
        name = "admin:sign_in_code"
    elif urlsplit(target).path == reverse("admin:two_step_link"):
        return target
    else:
        name = "admin:two_step"
    return f"{reverse(name)}?{REDIRECT_FIELD_NAME}={quote(target, safe='/')}"


def _signed_in_staff(request: HttpRequest) -> bool:
    user = request.user
    return user.is_authenticated and user.is_active and user.is_staff


def code_view(site, request: HttpRequest) -> HttpResponse:
    """The second step: a code from the app or a recovery code."""
    if not _signed_in_staff(request):
        return HttpResponseRedirect(reverse("admin:login"))
    if not second_step_pending(request):
        return HttpResponseRedirect(next_url(request))
    if not twofactor.enrolled(request.user):
        return HttpResponseRedirect(second_step_url(request, next_url(request)))
    credentials = {"username": request.user.get_username()}
    if AxesProxyHandler.is_locked(request, credentials):
        return _locked_out(request, credentials)
    form = CodeForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        code, field = form.given()
        refused = None
        try:
            device = twofactor.verify(request.user, code)
        except twofactor.TooManyCodes as wait:
            form.add_error(field, wait.message)
        except twofactor.CodeUsedAlready as used:
            refused = used.message
        else:
            if device is not None:
                django_otp.login(request, device)
                return HttpResponseRedirect(next_url(request))
            refused = WRONG_CODE
        if refused:
            # A code that does not sign in is a failed sign-in for django-axes: it counts
            # towards the same lock-out as wrong passwords, for this user name and this address.
            user_login_failed.send(sender=__name__, credentials=credentials, request=request)
            if getattr(request, "axes_locked_out", False):
                return _locked_out(request, credentials)
            form.add_error(field, refused)
    context = {
        **site.each_context(request),
        "title": "Sign in: step 2",
        "form": form,
        "next": next_url(request),
        "recovery_left": twofactor.recovery_codes_left(request.user),
    }
    return TemplateResponse(request, "admin/two_step/code.html", context)


def _locked_out(request: HttpRequest, credentials: dict) -> HttpResponse:
    # The half-signed-in session ends: after the pause the password is asked again.
    auth.logout(request)
    return signin.locked_out(request, None, credentials)


def two_step_view(site, request: HttpRequest) -> HttpResponse:
    """Setting up the authenticator app: proof beyond the password first
    (dashboard.enrolment), then a QR code, a code to confirm, and the recovery codes once.
    Once set up: its state, new recovery codes, and replacing the app (after a code)."""
    if not _signed_in_staff(request):
        return HttpResponseRedirect(reverse("admin:login"))
    user = request.user
    enrolled = twofactor.enrolled(user)
    if enrolled and second_step_pending(request):
        # Replacing the app is for a session that has given a code.
        return HttpResponseRedirect(second_step_url(request, next_url(request)))
    context = {**site.each_context(request), "next": next_url(request), "required": twofactor.required(user)}
    action = request.POST.get("action") if request.method == "POST" else None
    proven = enrolment.proven(request.session, user)
    if action == "keep":
        enrolment.spend(request.session)
        return HttpResponseRedirect(reverse("admin:two_step"))
    if enrolled and not proven:
        return _on(request, context, action)
    if not proven:
        return _prove(request, context, action)
    device = twofactor.pending_authenticator(user)
    form = ConfirmForm(request.POST if request.method == "POST" and action is None else None)
    if form.is_valid():
        try:
            codes = twofactor.confirm_authenticator(device, form.cleaned_data["code"])
        except twofactor.TooManyCodes as wait:
            form.add_error("code", wait.message)
        else:
            if codes is not None:
                enrolment.spend(request.session)
                django_otp.login(request, device)
                return _show_codes(request, context, codes)
            form.add_error("code", "That code is not right. Scan the QR code again, or type the key, and try again.")
    secret = b32encode(device.bin_key).decode()
    # receco.lib.qr draws the SVG itself and escapes its title; the key is only in the path.
    qr = qr_svg(device.config_url, title="QR code to scan with your authenticator app")
    context.update(
        title="Replace your authenticator app" if enrolled else "Set up two-step sign-in",
        replacing=enrolled,
        form=form,
        qr=mark_safe(qr),  # noqa: S308
        app_link=device.config_url,
        secret=" ".join(secret[i : i + 4] for i in range(0, len(secret), 4)),
    )
    response = TemplateResponse(request, "admin/two_step/setup.html", context)
    response["Cache-Control"] = "no-store"
    return response


def _on(request: HttpRequest, context: dict, action: str | None) -> HttpResponse:
    """Two-step sign-in is on: new recovery codes, or a code to replace the app."""
    user = request.user
    if action == "recovery-codes":
        return _show_codes(request, context, twofactor.new_recovery_codes(user))
    form = ReplaceForm(request.POST if action == "replace" else None)
    if form.is_valid():
        try:
            device = twofactor.verify(user, form.cleaned_data["code"])
        except (twofactor.TooManyCodes, twofactor.CodeUsedAlready) as refused:
            form.add_error("code", refused.message)
        else:
            if device is not None:
                enrolment.grant(request.session, user)
                return HttpResponseRedirect(reverse("admin:two_step"))
            form.add_error("code", WRONG_CODE)
    context.update(title="Two-step sign-in", recovery_left=twofactor.recovery_codes_left(user), form=form)
    return TemplateResponse(request, "admin/two_step/on.html", context)


def _prove(request: HttpRequest, context: dict, action: str | None) -> HttpResponse:
    """Before an app is set up: a set-up link emailed to the user's address."""
    user = request.user
    status = 200
    if action == "email-link" and user.email:
        if _emails_limited(request, user):
            messages.error(request, "A link was sent a short while ago: use it, or ask again in an hour.")
            status = 429
        else:
            secret = enrolment.make_link(user, enrolment.EMAIL_VALIDITY)
            enrolment.send_link(user, request.build_absolute_uri(enrolment.link_path(secret)))
            messages.success(request, f"We sent the link to {mask_email(user.email)}.")
            return HttpResponseRedirect(f"{reverse('admin:two_step')}?{urlencode({'next': context['next']})}")
    context.update(
        title="Set up two-step sign-in",
        email=mask_email(user.email) if user.email else "",
        minutes=int(enrolment.EMAIL_VALIDITY.total_seconds() // 60),
    )
    return TemplateResponse(request, "admin/two_step/prove.html", context, status=status)


def _emails_limited(request: HttpRequest, user) -> bool:
    return (
        formlimits.refused(request, "merchants.two_step_email", enrolment.EMAIL_RATE, who=f"user:{user.pk}") is not None
    )


def link_view(site, request: HttpRequest) -> HttpResponse:
    """A set-up link: signed in as its user, a button that uses it (a mail scanner's GET
    uses nothing), then setting up the app. Signed out: the password first."""
    if not _signed_in_staff(request):
        return redirect_to_login(request.get_full_path(), reverse("admin:login"))
    secret = request.GET.get("key", "")
    context = {**site.each_context(request), "title": "Set up two-step sign-in"}
    if not (secret and enrolment.link_works(request.user, secret)):
        return _link_gone(request, context)
    if request.method == "POST":
        if not enrolment.redeem(request.session, request.user, secret):
            return _link_gone(request, context)
        return HttpResponseRedirect(reverse("admin:two_step"))
    response = TemplateResponse(request, "admin/two_step/link.html", context)
    response["Cache-Control"] = "no-store"
    return response


def _link_gone(request: HttpRequest, context: dict) -> HttpResponse:
    context.update(
        title="This link no longer works",
        message=(
            f"This set-up link has been used, has expired, or is not for {request.user.get_username()}. "
            "Sign in as the user it was sent to, or ask for a new one."
        ),
    )
    return TemplateResponse(request, "admin/two_step/link_gone.html", context, status=410)


def _show_codes(request: HttpRequest, context: dict, codes: list[str]) -> HttpResponse:
    context = {**context, "title": "Your recovery codes", "codes": codes}
    response = TemplateResponse(request, "admin/two_step/recovery_codes.html", context)
    response["Cache-Control"] = "no-store"
    return response
