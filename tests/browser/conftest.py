"""Browser tests: Playwright for Python driving the system's Chromium, headless.

The browser is the machine's (Debian's ``chromium`` package, or RECECO_CHROMIUM), never
one downloaded by ``playwright install``. Without one these tests are skipped, except in
CI (CI=true), where that is a failure. ``./dev test`` and ``.ci/run`` install it.
"""

import io
import os
import shutil
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from PIL import Image, ImageDraw

# Playwright's sync API runs an event loop in the test thread; the ORM calls the tests
# make between page actions are still plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PHONE = {"width": 360, "height": 740}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    configured = os.environ.get("RECECO_CHROMIUM")
    if configured:
        return configured
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def chromium_executable():
    path = chromium_path()
    if path is None:
        message = "browser tests need Chromium: apt-get install chromium, or set RECECO_CHROMIUM=/path/to/chromium"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def playwright_instance(chromium_executable):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(playwright_instance, chromium_executable):
    browser = playwright_instance.chromium.launch(executable_path=chromium_executable, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


def logo_png() -> bytes:
    """The merchant's logo as its CDN would serve it."""
    image = Image.new("RGB", (112, 112), "#c2410c")
    draw = ImageDraw.Draw(image)
    draw.ellipse((16, 16, 96, 96), fill="#ffffff")
    draw.ellipse((36, 36, 76, 76), fill="#c2410c")
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


LOGO_URL = "https://cdn.example.com/mama-put.png"  # the merchant fixture's logo


def serve_from_here(target, origin: str, external: list[str]) -> None:
    """Let a page or a browser context fetch from ``origin`` and ``data:`` URLs, and the
    merchant's logo from its CDN (no test reaches the internet: logo_png() answers for
    it); refuse anything else. What it fetched or tried to fetch elsewhere goes into
    ``external``."""
    logo = logo_png()

    def route(route):
        url = route.request.url
        if url.startswith(origin) or url.startswith("data:"):
            route.continue_()
        elif url == LOGO_URL:
            external.append(url)
            route.fulfill(status=200, content_type="image/png", body=logo)
        else:
            external.append(url)
            route.abort()

    target.route("**/*", route)


class Visit:
    """A phone-sized page that records what it fetched from elsewhere and what it complained about."""

    def __init__(self, context, origin: str):
        self.page = context.new_page()
        self.external = []
        self.console = []
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))
        serve_from_here(self.page, origin, self.external)


@pytest.fixture
def phone(browser, live_server, settings):
    """A fresh phone-sized browser tab; receipt links point at the live server."""
    settings.RECECO_WEB_URL = live_server.url
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    visit = Visit(context, live_server.url)
    yield visit
    context.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def wallets(settings, tmp_path, live_server):
    """Apple and Google Wallet configured with a certificate chain and a service-account key
    made for the test; the pass's chain and the Google key, to check what they sign."""
    from tests.receipts.wallet.support import apple_chain, configure_apple, configure_google

    chain = apple_chain(tmp_path / "apple")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    configure_apple(settings, chain)
    configure_google(settings, key)
    settings.RECECO_GOOGLE_WALLET_ORIGINS = [live_server.url]
    return chain, key
