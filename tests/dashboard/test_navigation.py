"""The dashboard's navigation by task: on every page, only the pages the user may open,
the page shown marked as the current one."""

import re

import pytest

pytestmark = pytest.mark.django_db


def _tasks(html: str) -> list[tuple[str, str, bool]]:
    nav = re.search(r'<nav class="tasks" aria-label="Dashboard">(.*?)</nav>', html, re.S)
    assert nav, "no task navigation on the page"
    return [
        (label, url, bool(current))
        for url, current, label in re.findall(r'<a href="([^"]+)"( aria-current="page")?>([^<]+)</a>', nav.group(1))
    ]


def test_an_owner_is_offered_every_task_of_a_shop(client, owner, merchant):
    client.force_login(owner)
    tasks = _tasks(client.get("/admin/").content.decode())
    assert tasks == [
        ("Today", "/admin/", True),
        ("Find a sale", "/admin/receipts/receipt/?find=1", False),
        ("Receipts", "/admin/receipts/receipt/", False),
        ("Refunds", "/admin/receipts/receipt/?type=refund", False),
        ("API keys", "/admin/merchants/apikey/", False),
        ("Webhooks", "/admin/webhooks/endpoint/", False),
        ("E-invoicing", "/admin/einvoicing/einvoicing/", False),
        ("Team", "/admin/merchants/merchantmembership/", False),
        ("Audit trail", "/admin/merchants/auditentry/", False),
        ("Shop details", f"/admin/merchants/merchant/{merchant.pk}/change/", False),
    ]
    for _, url, _ in tasks:
        assert client.get(url.split("#")[0]).status_code == 200, url


def test_a_member_is_not_offered_the_audit_trail(client, member):
    client.force_login(member)
    labels = [label for label, _, _ in _tasks(client.get("/admin/").content.decode())]
    assert "Audit trail" not in labels
    assert client.get("/admin/merchants/auditentry/").status_code == 403


def test_the_operator_goes_to_the_list_of_merchants(client, superuser, merchant):
    client.force_login(superuser)
    tasks = _tasks(client.get("/admin/").content.decode())
    assert tasks[-1] == ("Merchants", "/admin/merchants/merchant/", False)


@pytest.mark.parametrize(
    ("url", "current"),
    [
        ("/admin/receipts/receipt/", "Receipts"),
        ("/admin/receipts/receipt/?type=refund", "Refunds"),
        ("/admin/merchants/apikey/", "API keys"),
        ("/admin/merchants/apikey/add/", "API keys"),
        ("/admin/webhooks/delivery/", "Webhooks"),
        ("/admin/einvoicing/einvoicing/add/", "E-invoicing"),
        ("/admin/merchants/invitation/", "Team"),
        ("/admin/merchants/auditentry/", "Audit trail"),
        ("USAGE", "Shop details"),
    ],
)
def test_the_page_shown_is_marked(client, owner, merchant, url, current):
    client.force_login(owner)
    url = f"/admin/merchants/merchant/{merchant.pk}/usage/" if url == "USAGE" else url
    response = client.get(url)
    assert response.status_code == 200
    assert [label for label, _, here in _tasks(response.content.decode()) if here] == [current]


def test_signing_in_shows_no_navigation(client, db):
    assert '<nav class="tasks"' not in client.get("/admin/login/").content.decode()


def _breadcrumbs(html: str) -> list[tuple[str, str | None]]:
    """Each crumb's text and link (None for the page itself, the last)."""
    trail = re.search(r'<div class="breadcrumbs">(.*?)</div>', html, re.S)
    assert trail, "no breadcrumbs on the page"
    crumbs = []
    for part in trail.group(1).split("&rsaquo;"):
        link = re.search(r'<a href="([^"]+)">([^<]+)</a>', part)
        crumbs.append((link[2], link[1]) if link else (" ".join(part.split()), None))
    return crumbs


def test_a_record_pages_breadcrumbs_name_its_section_as_the_bar_does(client, owner, receipt_factory):
    receipt = receipt_factory()
    client.force_login(owner)
    response = client.get(f"/admin/receipts/receipt/{receipt.pk}/change/")
    assert response.status_code == 200
    assert _breadcrumbs(response.content.decode()) == [
        ("Today", "/admin/"),
        ("Receipts", "/admin/receipts/receipt/"),
        ("K7P2QX Mama Put Kitchen", None),
    ]


@pytest.mark.parametrize(
    ("url", "crumbs"),
    [
        ("/admin/receipts/receipt/", [("Today", "/admin/"), ("Receipts", None)]),
        ("/admin/receipts/receipt/?type=refund", [("Today", "/admin/"), ("Refunds", None)]),
        ("/admin/merchants/apikey/", [("Today", "/admin/"), ("API keys", None)]),
        (
            "/admin/webhooks/attempt/",
            [("Today", "/admin/"), ("Webhooks", "/admin/webhooks/endpoint/"), ("Webhook attempts", None)],
        ),
        (
            "/admin/merchants/invitation/",
            [("Today", "/admin/"), ("Team", "/admin/merchants/merchantmembership/"), ("Invitations", None)],
        ),
    ],
)
def test_a_list_pages_breadcrumbs_name_its_section_as_the_bar_does(client, owner, url, crumbs):
    client.force_login(owner)
    response = client.get(url)
    assert response.status_code == 200
    assert _breadcrumbs(response.content.decode()) == crumbs


def test_a_shops_own_pages_are_under_its_details(client, owner, merchant):
    client.force_login(owner)
    details = f"/admin/merchants/merchant/{merchant.pk}/change/"
    page = client.get(details).content.decode()
    assert _breadcrumbs(page) == [
        ("Today", "/admin/"),
        ("Shop details", details),
        ("Mama Put Kitchen (mama-put)", None),
    ]
    usage = client.get(f"/admin/merchants/merchant/{merchant.pk}/usage/").content.decode()
    assert _breadcrumbs(usage) == [
        ("Today", "/admin/"),
        ("Shop details", details),
        ("Mama Put Kitchen (mama-put)", details),
        ("Usage", None),
    ]


def test_a_page_of_no_section_keeps_the_admins_app_and_model(client, superuser):
    client.force_login(superuser)
    response = client.get("/admin/messaging/delivery/")
    assert response.status_code == 200
    assert _breadcrumbs(response.content.decode()) == [
        ("Today", "/admin/"),
        ("Messages", "/admin/messaging/"),
        ("Deliveries", None),
    ]
