"""The dashboard's second sign-in step and the page that sets it up (merchants.twofactor).

Between the password and the code the session is signed in but not verified: the site
(merchants.sites) lets it reach nothing but these pages and signing out.
"""

from base64 import b32encode

import django_otp
from axes.handlers.proxy import AxesProxyHandler
from django import forms
from django.contrib import auth
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe

from merchants import signin, twofactor
from receipts.qr import qr_svg


class CodeForm(forms.Form):
    code = forms.CharField(
        label="Code",
        max_length=32,
        help_text="The six digits your authenticator app shows, or one of your recovery codes.",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autocapitalize": "off", "spellcheck": "false"}),
    )


class ConfirmForm(forms.Form):
    code = forms.CharField(
        label="Code from the app",
        max_length=16,
        help_text="The six digits the app shows for Receco now.",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
    )


def second_step_pending(request: HttpRequest) -> bool:
    """Whether the signed-in staff user still has to give a code (or set the app up).

    Looked up once per request.
    """
    user = request.user
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return False
    if not hasattr(request, "_receco_second_step"):
        verified = getattr(user, "is_verified", None)
        pending = not (verified and verified()) and (twofactor.enrolled(user) or twofactor.required(user))
        request._receco_second_step = pending
    return request._receco_second_step


def next_url(request: HttpRequest) -> str:
    """Where to go after signing in: the ``next`` asked for if it is on this site, else the dashboard."""
    target = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME) or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return reverse("admin:index")


def second_step_url(request: HttpRequest, target: str) -> str:
    """The page that comes after the password for this user: the code, or setting up the app."""
    name = "admin:sign_in_code" if twofactor.enrolled(request.user) else "admin:two_step"
    return f"{reverse(name)}?{REDIRECT_FIELD_NAME}={target}"


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
        try:
            device = twofactor.verify(request.user, form.cleaned_data["code"])
        except twofactor.TooManyCodes as wait:
            form.add_error("code", f"Too many wrong codes: wait {wait.seconds} seconds, then try again.")
        else:
            if device is not None:
                django_otp.login(request, device)
                return HttpResponseRedirect(next_url(request))
            # A wrong code is a failed sign-in for django-axes: it counts towards the same
            # lock-out as wrong passwords, for this user name and this address.
            user_login_failed.send(sender=__name__, credentials=credentials, request=request)
            if getattr(request, "axes_locked_out", False):
                return _locked_out(request, credentials)
            form.add_error("code", "That code is not right. Check the app shows Receco and try the newest code.")
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
    """Setting up the authenticator app (QR code, then a code to confirm, then the
    recovery codes once); once set up, the state and new recovery codes."""
    if not _signed_in_staff(request):
        return HttpResponseRedirect(reverse("admin:login"))
    user = request.user
    enrolled = twofactor.enrolled(user)
    if enrolled and second_step_pending(request):
        # Replacing the app is for a session that has given a code.
        return HttpResponseRedirect(second_step_url(request, next_url(request)))
    context = {**site.each_context(request), "next": next_url(request), "required": twofactor.required(user)}
    if enrolled:
        if request.method == "POST" and request.POST.get("action") == "recovery-codes":
            return _show_codes(request, context, twofactor.new_recovery_codes(user))
        context.update(title="Two-step sign-in", recovery_left=twofactor.recovery_codes_left(user))
        return TemplateResponse(request, "admin/two_step/on.html", context)
    device = twofactor.pending_authenticator(user)
    form = ConfirmForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        try:
            codes = twofactor.confirm_authenticator(device, form.cleaned_data["code"])
        except twofactor.TooManyCodes as wait:
            form.add_error("code", f"Too many wrong codes: wait {wait.seconds} seconds, then try again.")
        else:
            if codes is not None:
                django_otp.login(request, device)
                return _show_codes(request, context, codes)
            form.add_error("code", "That code is not right. Scan the QR code again, or type the key, and try again.")
    secret = b32encode(device.bin_key).decode()
    # receipts.qr draws the SVG itself and escapes its title; the key is only in the path.
    qr = qr_svg(device.config_url, title="QR code to scan with your authenticator app")
    context.update(
        title="Set up two-step sign-in",
        form=form,
        qr=mark_safe(qr),  # noqa: S308
        secret=" ".join(secret[i : i + 4] for i in range(0, len(secret), 4)),
    )
    response = TemplateResponse(request, "admin/two_step/setup.html", context)
    response["Cache-Control"] = "no-store"
    return response


def _show_codes(request: HttpRequest, context: dict, codes: list[str]) -> HttpResponse:
    context = {**context, "title": "Your recovery codes", "codes": codes}
    response = TemplateResponse(request, "admin/two_step/recovery_codes.html", context)
    response["Cache-Control"] = "no-store"
    return response
