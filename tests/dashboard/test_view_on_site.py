"""The admin's "view on site" shortcut (/admin/r/<content type>/<id>/) leads only to pages
of objects the user may see. Replays the review's walk: a member of merchant A opening
merchant B's receipts through it, and a malformed id answering 500."""

import pytest
from django.contrib.contenttypes.models import ContentType

from receipts.models import Receipt

pytestmark = pytest.mark.django_db


def _shortcut(model, object_id) -> str:
    return f"/admin/r/{ContentType.objects.get_for_model(model).pk}/{object_id}/"


@pytest.fixture
def their_receipts(other_merchant, sale):
    from receipts.creation import create_receipt
    from receipts.validation import validate_sale

    body = {**sale, "merchant_string_id": other_merchant.string_id, "short_code": None}
    return [
        create_receipt(other_merchant, validate_sale({**body, "token": f"rcpt_theirs{n:02d}_aaaaaa"})).receipt
        for n in range(5)
    ]


def test_it_leads_a_member_to_their_own_receipt(client, member, stored):
    client.force_login(member)
    response = client.get(_shortcut(Receipt, stored.pk))
    assert response.status_code == 302
    assert response["Location"] == f"/app/receipt/{stored.token}"


def test_walking_the_ids_finds_nothing_of_another_merchant(client, member, stored, their_receipts):
    client.force_login(member)
    answers = {pk: client.get(_shortcut(Receipt, pk)) for pk in range(1, their_receipts[-1].pk + 3)}
    found = {pk for pk, response in answers.items() if response.status_code == 302}
    assert found == {stored.pk}
    assert {response.status_code for pk, response in answers.items() if pk != stored.pk} == {404}
    assert not any(r.token in response.get("Location", "") for r in their_receipts for response in answers.values())


@pytest.mark.parametrize("object_id", ["abc", "1.5", "-1", "9" * 30, "%00"])
def test_a_malformed_id_is_not_found(client, member, stored, object_id):
    client.force_login(member)
    assert client.get(_shortcut(Receipt, object_id)).status_code == 404


def test_models_outside_the_dashboard_are_not_found(client, member, stored):
    from django.contrib.auth.models import User

    client.force_login(member)
    assert client.get(_shortcut(User, member.pk)).status_code == 404
    assert client.get("/admin/r/999999/1/").status_code == 404


def test_the_operator_is_led_anywhere(client, superuser, their_receipts):
    client.force_login(superuser)
    response = client.get(_shortcut(Receipt, their_receipts[0].pk))
    assert response.status_code == 302


def test_it_needs_a_signed_in_staff_user(client, stored):
    response = client.get(_shortcut(Receipt, stored.pk))
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
