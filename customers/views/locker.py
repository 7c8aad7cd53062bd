"""The customer's receipt locker, /app/my: prove a phone number (a code by text message)
or an email address (a link), then see every receipt sent to it.

Before proof nothing differs with the contact: the same pages, statuses and work
whatever was sent to it (locker.signins, locker.transport). Every page is personal:
never cached, never indexed."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from customers.forms.locker import CodeForm, SearchForm, SignInForm
from locker import export, limits, listing, sessions, signins
from locker.contacts import SMS, Contact
from privacy import erasure
from receco.errors import RateLimited
from receco.lib.csp import csp


def _page(request: HttpRequest, template: str, context: dict | None = None, status: int = 200) -> HttpResponse:
    response = render(request, template, context or {}, status=status)
    response["Cache-Control"] = "private, no-store"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


def _signed_in(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Hand the view the contact this browser proved; without one, back to /app/my."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        contact = sessions.current(request)
        if contact is None:
            return redirect("locker:my")
        return view(request, contact, *args, **kwargs)

    return wrapper


@csp
@require_safe
def my(request: HttpRequest) -> HttpResponse:
    """The receipts of the contact this browser proved; the sign-in form otherwise."""
    contact = sessions.current(request)
    if contact is None:
        response = _page(request, "locker/signin.html", {"form": SignInForm()})
        if sessions.has_cookie(request):  # a session ended elsewhere: its cookie names nothing now
            sessions.sign_out(request, response)
        return response
    return _list(request, contact)


def _list(request: HttpRequest, contact: Contact, refused: RateLimited | None = None) -> HttpResponse:
    """The list page, searched as the query asks; 429 with ``refused``'s words when a
    download was refused."""
    form = SearchForm(request.GET if set(request.GET) & {"shop", "day", "amount"} else None)
    wanted = form.search()
    page = Paginator(listing.search(contact, wanted), listing.PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "contact": contact,
        "form": form,
        "searched": not wanted.is_empty,
        "page": page,
        # Not the list's lines: a refund listed on its sale is a receipt too (listing.count).
        "count": page.paginator.count if not wanted.is_empty else listing.count(contact),
        "entries": listing.entries(list(page.object_list)),
        "query": query.urlencode(),
        "refused": refused.message if refused else None,
    }
    status = 429 if refused else 400 if form.is_bound and form.errors else 200
    response = _page(request, "locker/list.html", context, status=status)
    if refused:
        response["Retry-After"] = str(refused.retry_after)
    return response


@csp
@require_POST
def start(request: HttpRequest) -> HttpResponse:
    """Ask for a code (a number) or a link (an address): the same answer whatever the contact."""
    form = SignInForm(request.POST)
    if not form.is_valid():
        return _page(request, "locker/signin.html", {"form": form}, status=400)
    contact: Contact = form.cleaned_data["contact"]
    try:
        limits.charge(request, contact)
    except RateLimited as limited:
        form.add_error("contact", limited.message)
        response = _page(request, "locker/signin.html", {"form": form}, status=429)
        response["Retry-After"] = str(limited.retry_after)
        return response
    token, browser = sessions.new_token()
    signins.start(contact, browser)
    response = redirect("locker:code" if contact.kind == SMS else "locker:email_sent")
    sessions.await_signin(response, token)
    return response


@csp
@require_http_methods(["GET", "HEAD", "POST"])
def code(request: HttpRequest) -> HttpResponse:
    """Type the code texted to the number. A sign-in no longer kept (used, retired by a
    newer one, purged) still gets the page, and its code the refusal of a spent one."""
    browser = sessions.awaited(request)
    signin = signins.waiting(browser)
    if browser is None or (signin is not None and signin.kind != SMS):
        return redirect("locker:my")
    context = {"masked": signin.masked if signin else "", "minutes": _minutes(signins.CODE_VALID)}
    if request.method != "POST":
        return _page(request, "locker/code.html", {**context, "form": CodeForm()})
    form = CodeForm(request.POST)
    if not form.is_valid():
        return _page(request, "locker/code.html", {**context, "form": form}, status=400)
    try:
        contact = signins.check_code(browser, form.cleaned_data["code"])
    except signins.SignInFailed as failed:
        form.add_error("code", failed.message)
        return _page(request, "locker/code.html", {**context, "form": form}, status=failed.status)
    response = redirect("locker:my")
    sessions.sign_in(response, contact)
    return response


@csp
@require_safe
def email_sent(request: HttpRequest) -> HttpResponse:
    """Look in the mailbox: the link is on its way, if any receipt was sent there."""
    signin = signins.waiting(sessions.awaited(request))
    if signin is None or signin.kind == SMS:
        return redirect("locker:my")
    return _page(request, "locker/email_sent.html", {"masked": signin.masked, "minutes": _minutes(signins.LINK_VALID)})


@csp
@require_http_methods(["GET", "HEAD", "POST"])
def link(request: HttpRequest, pk: int, secret: str) -> HttpResponse:
    """A sign-in link: a button to use it (mail scanners that open links must not spend it)."""
    try:
        if request.method != "POST":
            signin = signins.find_link(pk, secret)
            masked = signin.masked or Contact(signin.kind, signin.contact).masked  # asked before masked was kept
            return _page(request, "locker/link.html", {"masked": masked})
        contact = signins.use_link(pk, secret)
    except signins.SignInFailed as failed:
        return _page(request, "locker/link.html", {"error": failed.message}, status=failed.status)
    response = redirect("locker:my")
    sessions.sign_in(response, contact)
    return response


@require_POST
def sign_out(request: HttpRequest) -> HttpResponse:
    response = redirect("locker:my")
    sessions.sign_out(request, response)
    messages.info(request, "You are signed out on this device.")
    return response


@require_POST
@_signed_in
def sign_out_everywhere(request: HttpRequest, contact: Contact) -> HttpResponse:
    sessions.sign_out_everywhere(contact)
    response = redirect("locker:my")
    sessions.sign_out(request, response)
    messages.info(request, "You are signed out on every device.")
    return response


@csp
@require_POST
@_signed_in
def download(request: HttpRequest, contact: Contact) -> HttpResponse:
    """Every receipt sent to the contact, as a zip of ORF documents and a CSV (locker.export)."""
    try:
        limits.charge_export(contact)
    except RateLimited as limited:
        return _list(request, contact, refused=limited)
    # Streamed as it is made: the zip never sits whole in this worker (locker.export).
    response = StreamingHttpResponse(export.stream(contact), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{export.filename(timezone.localtime())}"'
    response["Cache-Control"] = "private, no-store"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


def _minutes(valid) -> int:
    return int(valid.total_seconds() // 60)


@csp
@require_http_methods(["GET", "HEAD", "POST"])
@_signed_in
def erase(request: HttpRequest, contact: Contact) -> HttpResponse:
    """Erase the contact from every receipt and record the service keeps (privacy.erasure),
    after a page that says what that means; every session of it ends."""
    if request.method != "POST":
        count = listing.count(contact)
        return _page(request, "locker/erase.html", {"contact": contact, "count": count})
    # The locker's own sign-ins, sessions and counters go with it (locker.erasure, registered).
    erasure.erase_contact(contact.value, via="locker")
    response = redirect("locker:my")
    sessions.sign_out(request, response)
    messages.success(request, f"{contact.masked} is erased from all your receipts. You are signed out on every device.")
    return response
