"""The customer web app: the scan page, the receipt page with its "send me this" form,
QR images of receipt links and the receipt's wallet passes, mounted under /app/; and the
site's front page, /."""

import re
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified, JsonResponse
from django.shortcuts import redirect, render
from django.utils.http import parse_etags
from django.views.decorators.http import require_POST, require_safe

from customers import sent_here
from customers.forms.receipts import WHATSAPP_NOT_OFFERED, ContactForm
from ledger import trust
from ledger.standing import standing
from merchants.admission.admit import Admission
from messaging import customers
from messaging.channels import offers_whatsapp
from messaging.customers import DeliveryLimited
from messaging.limits import Planned
from messaging.models import EMAIL, SMS, WHATSAPP
from receco.errors import InvalidInput, NotFound, RateLimited
from receco.lib import formlimits, qr
from receco.lib.addresses import client_ip
from receco.lib.csp import csp
from receco.lib.rates import parse_rate
from receco.ops import metrics
from receipts import annexes, gifts, writer
from receipts.codes import SHORT_CODE_PATTERN
from receipts.contacts import mask_email, mask_phone, phone_example
from receipts.lookup import find_receipt
from receipts.models import Receipt
from receipts.rendering.display import origin, receipt_context
from receipts.wallet import apple, credentials, google

# How often, and how many times, the page of a receipt that has not arrived yet looks
# again (static/receipts/recheck.js): every 30 seconds for 10 minutes.
PENDING_RETRY_SECONDS = 30
PENDING_RETRY_TRIES = 20
QR_CACHE_CONTROL = "public, max-age=31536000, immutable"
_QR_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


@csp
@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """The site's front page (/): customers to the scanner, shop owners to the dashboard."""
    return render(request, "receipts/home.html")


@require_safe
def index(request: HttpRequest) -> HttpResponse:
    return redirect("receipts:scan")


@csp
@require_safe
def scan(request: HttpRequest) -> HttpResponse:
    code = request.GET.get("code")
    if code is None:
        return render(request, "receipts/scan.html", _scan_context())
    if not code.strip():
        return _scan_error(request, code, "Enter the 6-character code printed on your receipt slip.", 400)
    reference = typed_reference(code)
    try:
        if gifts.is_code(reference):  # a gift receipt's code: its page, which shows no prices
            found = gifts.find_typed(reference, Admission.for_address(client_ip(request)))
        else:
            found = _find(request, reference)
    except InvalidInput:
        message = "That is not a receipt code: codes have 6 letters and digits, like K7P2QX."
        return _scan_error(request, code, message, 400)
    except RateLimited as limited:
        message = "Too many codes tried. Wait a few minutes, then try again."
        return _retry_after(_scan_error(request, code, message, 429), limited.retry_after)
    except NotFound:
        message = (
            "No receipt has that code. Check it against your slip; if you have just paid, "
            "the shop may still be sending it: try again in a few minutes."
        )
        return _scan_error(request, code, message, 404)
    return redirect(found)


# What a phone's keyboard may put between the characters of a typed code.
_SPACES = re.compile(r"\s+")
_DASHES = re.compile("[-\u2010-\u2015\u2212]")
_TYPED_CODE = re.compile(r"[A-Za-z0-9]{6}")


def typed_reference(text: str) -> str:
    """What a customer typed on the scan page, as the reference to look up: spaces
    anywhere left out, and dashes too when what remains is a short code (``b8t ue9``,
    ``B8T-UE9``) or a gift receipt's code (``gk7p-2qx``); anything else is looked up as
    it stands (a token may hold dashes). The API takes references as they are: this is
    the page's kindness only."""
    compact = _SPACES.sub("", text)
    code = _DASHES.sub("", compact)
    return code if _TYPED_CODE.fullmatch(code) or gifts.is_code(code) else compact


def _with_receipt(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Resolve the URL's ``reference`` (token or short code) to the receipt the view gets.

    Unknown or malformed references get the friendly 404 page; unknown short codes count
    as misses of the client's address (429 after too many, tokens never); a GET by short
    code is redirected to the same page by token, so each receipt has one address.
    """

    @wraps(view)
    def wrapper(request: HttpRequest, reference: str, **kwargs) -> HttpResponse:
        try:
            receipt = _find(request, reference)
        except RateLimited as limited:
            response = render(request, "receipts/not_found.html", {"too_many": True}, status=429)
            return _retry_after(response, limited.retry_after)
        except (InvalidInput, NotFound) as error:
            # A well-formed reference may name a sale the shop's agent has not uploaded
            # yet (it prints the QR code while offline): the page looks again by itself.
            context = {
                "reference": _as_typed(reference),
                "pending": isinstance(error, NotFound),
                "retry_seconds": PENDING_RETRY_SECONDS,
                "retry_tries": PENDING_RETRY_TRIES,
            }
            return render(request, "receipts/not_found.html", context, status=404)
        if reference != receipt.token and request.method in ("GET", "HEAD"):
            match = request.resolver_match
            return redirect(match.view_name, **{**match.kwargs, "reference": receipt.token})
        return view(request, receipt, **kwargs)

    return wrapper


def _qr_not_modified(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Answer a revalidation of a QR image with 304 before any query: the image depends
    only on the link, which the URL and RECECO_WEB_URL determine."""

    @wraps(view)
    def wrapper(request: HttpRequest, reference: str, kind: str) -> HttpResponse:
        etag = qr.etag(f"{settings.RECECO_WEB_URL}/app/receipt/{reference}", kind)
        if etag in parse_etags(request.headers.get("If-None-Match", "")):
            return _qr_headers(HttpResponseNotModified(), etag)
        return view(request, reference=reference, kind=kind)

    return wrapper


@csp
@require_safe
@_with_receipt
def receipt_page(request: HttpRequest, receipt: Receipt) -> HttpResponse:
    return _render_receipt(request, receipt, _contact_form(receipt))


@csp
@require_POST
@_with_receipt
def send(request: HttpRequest, receipt: Receipt) -> HttpResponse:
    form = _contact_form(receipt, request.POST)
    if _form_limited(request):
        metrics.rate_limit_refused("contact_form")
        form.add_error(None, _form_limit_words())
        return _render_receipt(request, receipt, form, status=429)
    if not form.is_valid():
        return _render_receipt(request, receipt, form, status=400)
    email, phone = form.cleaned_data["email"], form.cleaned_data["phone"]
    phone_channel = form.cleaned_data["phone_channel"] if phone else None
    try:
        # A customer's request: never with a key.
        writer.update_contact(receipt, email, phone, keyed=False, phone_channel=phone_channel)
    except DeliveryLimited as limited:
        for refused in limited.refused:
            form.add_error(None if refused.whole_receipt else refused.field, _limited_words(refused))
        return _retry_after(_render_receipt(request, receipt, form, status=429), limited.retry_after)
    except InvalidInput as refused:
        if refused.message != customers.WHATSAPP_NOT_OFFERED:
            raise
        # The shop stopped offering WhatsApp since the form was shown.
        form.add_error("phone_channel", WHATSAPP_NOT_OFFERED)
        return _render_receipt(request, receipt, form, status=400)
    on_whatsapp = phone_channel == WHATSAPP
    masked_phone = f"{mask_phone(phone)} on WhatsApp" if phone and on_whatsapp else mask_phone(phone)
    destinations = " and ".join(filter(None, [mask_email(email), masked_phone]))
    if receipt.is_test:
        messages.info(request, f"Test receipt: nothing is delivered to {destinations}; the request is recorded.")
    else:
        messages.success(request, f"Your receipt is on its way to {destinations}.")
    response = redirect(f"{receipt.get_absolute_url()}#sent")
    wanted = [(EMAIL, email), (WHATSAPP if on_whatsapp else SMS, phone)]
    sent_here.remember(request, response, receipt, [(channel, to) for channel, to in wanted if to])
    return response


@csp
@require_POST
@_with_receipt
def make_gift(request: HttpRequest, receipt: Receipt) -> HttpResponse:
    """Make the sale's gift receipt (or find the one made before) and open it: from the
    receipt's page, and from the sale's page in the dashboard. Counted against
    RECECO_CONTACT_FORM_RATE as the send form is."""
    if _client_limited(request, "receipts.gift", settings.RECECO_CONTACT_FORM_RATE):
        metrics.rate_limit_refused("gift_receipt")
        response = _render_receipt(request, receipt, _contact_form(receipt), status=429, gift_error=_form_limit_words())
        return _retry_after(response, parse_rate(settings.RECECO_CONTACT_FORM_RATE).window)
    try:
        gift = gifts.gift_receipt(receipt)
    except InvalidInput as refused:
        return _render_receipt(request, receipt, _contact_form(receipt), status=400, gift_error=refused.message)
    return redirect(gift)


@csp
@require_safe
def gift_page(request: HttpRequest, token: str) -> HttpResponse:
    """A sale's gift receipt: its items and the shop's return policy, no prices; printable."""
    gift = gifts.find(token)
    if gift is None:
        return render(request, "receipts/not_found.html", {"reference": _as_typed(token), "gift": True}, status=404)
    context = gifts.context(gift)
    if context["logo_url"]:
        request.csp_img_origins.append(origin(context["logo_url"]))
    response = render(request, "receipts/gift.html", context)
    response["Cache-Control"] = "private, no-cache"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


@csp
@require_safe
def verify(request: HttpRequest) -> HttpResponse:
    """/app/verify: checks a saved receipt file, or a scanned receipt's, in the browser
    (static/receipts/verify.js) against the keys and checkpoint embedded in the page."""
    context = {
        "published": trust.published(),
        "web_url": settings.RECECO_WEB_URL,
        # "Verify this receipt" names it: the page offers to fetch it (the token, cut as typed ones are).
        "reference": _as_typed(request.GET.get("reference", "")),
    }
    response = render(request, "receipts/verify.html", context)
    # The embedded checkpoint is at most a few seconds old; the keys change on rotation.
    response["Cache-Control"] = "no-cache"
    return response


@require_safe
@_with_receipt
def orf_document(request: HttpRequest, receipt: Receipt) -> HttpResponse:
    """The receipt as an Open Receipt Format document, to download and keep: signed, and
    with its proof once it is in the log, so that /app/verify can check it offline."""
    response = JsonResponse(trust.document(receipt), json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="receipt-{receipt.short_code}.orf.json"'
    response["Cache-Control"] = "private, no-cache"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


@require_safe
@_qr_not_modified
@_with_receipt
def qr_image(request: HttpRequest, receipt: Receipt, kind: str) -> HttpResponse:
    url = receipt.public_url
    body = qr.qr_png(url) if kind == "png" else qr.qr_svg(url, title=f"QR code of receipt {receipt.short_code}")
    return _qr_headers(HttpResponse(body, content_type=_QR_TYPES[kind]), qr.etag(url, kind))


def _wallet(loader: Callable[[], object]) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Hand the view the wallet's credentials (``loader()``), or answer 404 before any
    look-up when the operator has not configured that wallet."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapper(request: HttpRequest, reference: str) -> HttpResponse:
            wallet = loader()
            if wallet is None:
                raise Http404("This wallet is not offered here.")
            return view(request, reference=reference, wallet=wallet)

        return wrapper

    return decorate


@csp
@require_safe
@_wallet(credentials.apple)
@_with_receipt
def apple_pass(request: HttpRequest, receipt: Receipt, wallet: credentials.AppleWallet) -> HttpResponse:
    """The receipt as a signed Apple Wallet pass: Safari opens it in Wallet's "Add" sheet."""
    if _wallet_limited(request):
        return _wallet_refused(request, receipt)
    response = HttpResponse(apple.pkpass(receipt, wallet), content_type=apple.MEDIA_TYPE)
    response["Content-Disposition"] = f'attachment; filename="receipt-{receipt.short_code}.pkpass"'
    response["Cache-Control"] = "private, no-cache"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


@csp
@require_safe
@_wallet(credentials.google)
@_with_receipt
def google_pass(request: HttpRequest, receipt: Receipt, wallet: credentials.GoogleWallet) -> HttpResponse:
    """To Google Wallet's page that saves the receipt's pass: the signed link is made
    when asked for, not with every view of the receipt."""
    if _wallet_limited(request):
        return _wallet_refused(request, receipt)
    response = redirect(google.save_url(receipt, wallet))
    response["Cache-Control"] = "private, no-store"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a page a customer understands (the form was open too long, or cookies are off)."""
    return render(request, "receipts/csrf_failure.html", status=403)


def sheet_context(receipt: Receipt) -> dict:
    """The context of the receipt as its customer reads it (templates/receipts/_sheet.html
    and _banners.html): on the customer's page and beside the staff's details in the
    dashboard. Nothing of it names the customer's contact."""
    return {
        **receipt_context(receipt),
        "qr_svg": qr.qr_svg(receipt.public_url, title=f"QR code of this receipt, {receipt.public_url}"),
        "scan_host": settings.RECECO_WEB_URL.split("://", 1)[1],
        "log": standing(receipt),
        # Beside the receipt, outside what was signed: its e-invoice once stamped (receipts.annexes).
        "annexes": annexes.of(receipt),
    }


# --- helpers ------------------------------------------------------------------------


def _render_receipt(
    request: HttpRequest, receipt: Receipt, form: ContactForm, status: int = 200, **extra
) -> HttpResponse:
    context = sheet_context(receipt)
    if context["logo_url"]:
        request.csp_img_origins.append(origin(context["logo_url"]))
    context.update(
        form=form,
        deliveries=sent_here.sent_from_here(request, receipt),
        phone_example=phone_example(),
        **extra,
    )
    response = render(request, "receipts/receipt.html", context, status=status)
    # Holds a CSRF token and, after sending, a personal confirmation: never shared caches.
    response["Cache-Control"] = "private, no-cache"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


def _contact_form(receipt: Receipt, data=None) -> ContactForm:
    """The send form of ``receipt``'s page, offering WhatsApp where its shop does."""
    return ContactForm(data, whatsapp=offers_whatsapp(receipt.merchant_id))


def _scan_error(request: HttpRequest, code: str, message: str, status: int) -> HttpResponse:
    context = {**_scan_context(), "code": code.strip()[:64], "error": message}
    return render(request, "receipts/scan.html", context, status=status)


def _as_typed(reference: str) -> str:
    """A reference that found nothing, to repeat to the reader: cut to the longest a token
    may be, so that a pasted page of text does not become one."""
    return reference.strip()[:64]


def _scan_context() -> dict:
    return {"web_url": settings.RECECO_WEB_URL, "code_pattern": SHORT_CODE_PATTERN}


def _find(request: HttpRequest, raw_reference: str) -> Receipt:
    """The receipt a page names, as the API finds it: its short codes held to the same
    budget of misses per client address; pages that only show it read a replica, if any.
    Raises InvalidInput, NotFound or RateLimited."""
    reader = Admission.for_address(client_ip(request))
    return find_receipt(raw_reference, reader, replica=request.method in ("GET", "HEAD"))


def _limited_words(refused: Planned) -> str:
    """A daily delivery limit's refusal (messaging.limits) in a customer's words."""
    if refused.whole_receipt:
        return "This receipt has been sent as often as it can be today. Try again tomorrow."
    what = "address" if refused.field == "email" else "number"
    return f"This {what} has been sent as many receipts as we can send it today. Try again tomorrow."


def _retry_after(response: HttpResponse, seconds: int) -> HttpResponse:
    response["Retry-After"] = str(seconds)
    return response


def _form_limit_words() -> str:
    """The send form's refusal, with its limit as RECECO_CONTACT_FORM_RATE says it."""
    rate = parse_rate(settings.RECECO_CONTACT_FORM_RATE)
    return f"Too many requests from your network: at most {rate.describe()}. Wait a while, then try again."


def _form_limited(request: HttpRequest) -> bool:
    """Count one post of the send form against RECECO_CONTACT_FORM_RATE for the client.

    Fails open when the shared cache is down: customers still get their receipts, and
    the per-receipt delivery limit, kept in the database, still holds.
    """
    return _client_limited(request, "receipts.send", settings.RECECO_CONTACT_FORM_RATE)


def _wallet_limited(request: HttpRequest) -> bool:
    """Count one wallet pass, of either wallet, against RECECO_WALLET_PASS_RATE for the
    client; fails open as the send form's limit does."""
    return _client_limited(request, "receipts.wallet", settings.RECECO_WALLET_PASS_RATE)


def _client_limited(request: HttpRequest, group: str, rate: str) -> bool:
    """Count one request of ``group`` against ``rate`` for the client's address
    (receco.lib.formlimits); False when the cache cannot be reached."""
    return formlimits.refused(request, group, rate) is not None


def _wallet_refused(request: HttpRequest, receipt: Receipt) -> HttpResponse:
    """The receipt page again, 429, the refusal stating the limit beside the wallet buttons."""
    metrics.rate_limit_refused("wallet_pass")
    rate = parse_rate(settings.RECECO_WALLET_PASS_RATE)
    words = (
        f"Too many wallet passes asked for from your network: at most {rate.describe()}. Wait a while, then try again."
    )
    response = _render_receipt(request, receipt, _contact_form(receipt), status=429, wallet_error=words)
    return _retry_after(response, rate.window)


def _qr_headers(response: HttpResponse, etag: str) -> HttpResponse:
    response["ETag"] = etag
    response["Cache-Control"] = QR_CACHE_CONTROL
    return response
