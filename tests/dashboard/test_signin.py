"""Dashboard sign-in is throttled (django-axes): replays the review's 100 wrong passwords
followed by the right one."""

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/?next=/admin/"
PASSWORD = "not-used-in-tests"


def _sign_in(client, username, password, ip="203.0.113.7"):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_the_right_password_signs_in(client, owner):
    response = _sign_in(client, owner.username, PASSWORD)
    assert response.status_code == 302
    assert response["Location"] == "/admin/"


def test_repeated_wrong_passwords_lock_the_user_out_from_that_address(client, owner):
    assert [_sign_in(client, owner.username, f"guess-{n}").status_code for n in range(4)] == [200] * 4
    response = _sign_in(client, owner.username, "guess-5")
    assert response.status_code == 429
    # The right password no longer works from there, for the pause.
    response = _sign_in(client, owner.username, PASSWORD)
    assert response.status_code == 429
    assert "Too many sign-in attempts" in response.content.decode()
    assert int(response["Retry-After"]) == 15 * 60
    assert "_auth_user_id" not in client.session


def test_the_lock_is_per_user_and_address(client, owner, member):
    for n in range(5):
        _sign_in(client, owner.username, f"guess-{n}")
    assert _sign_in(client, owner.username, PASSWORD, ip="198.51.100.4").status_code == 302
    client.logout()
    assert _sign_in(client, member.username, PASSWORD).status_code == 302


def test_an_operator_unlocks_with_a_command(client, owner):
    for n in range(5):
        _sign_in(client, owner.username, f"guess-{n}")
    call_command("axes_reset_username", owner.username)
    assert _sign_in(client, owner.username, PASSWORD).status_code == 302


def test_the_limits_are_settings(client, owner, settings):
    settings.AXES_FAILURE_LIMIT = 2
    assert [_sign_in(client, owner.username, f"guess-{n}").status_code for n in range(2)] == [200, 429]


def test_the_log_names_neither_user_nor_address(client, owner, caplog):
    for n in range(5):
        _sign_in(client, owner.username, f"guess-{n}")
    assert "AXES" in caplog.text
    assert owner.username not in caplog.text
    assert "203.0.113.7" not in caplog.text


def test_a_client_without_an_address_signs_in(client, owner):
    # gunicorn on a Unix socket with no proxy header in front: there is no address to count.
    assert _sign_in(client, owner.username, PASSWORD, ip="").status_code == 302


def test_an_address_spraying_many_user_names_is_locked_out(client, owner):
    """Issue 19.17: twelve user names from one address, one wrong password each, met no lock-out."""
    names = [f"staff-{n}" for n in range(11)] + [owner.username]
    statuses = [_sign_in(client, name, "Summer2026!").status_code for name in names]
    assert statuses == [200] * 9 + [429] * 3
    # Every user name is refused from there for the pause, the right password included...
    response = _sign_in(client, owner.username, PASSWORD)
    assert response.status_code == 429
    assert int(response["Retry-After"]) == 15 * 60
    # ...and nowhere else.
    assert _sign_in(client, owner.username, PASSWORD, ip="198.51.100.4").status_code == 302


def test_a_right_password_does_not_wipe_the_address_count(client, owner, member):
    for n in range(8):
        _sign_in(client, f"staff-{n}", "guess")
    assert _sign_in(client, member.username, PASSWORD).status_code == 302  # the sprayer's own account
    client.logout()
    assert _sign_in(client, "staff-8", "guess").status_code == 200
    assert _sign_in(client, "staff-9", "guess").status_code == 429


def test_the_address_limit_is_a_setting(client, owner, settings):
    settings.RECECO_LOGIN_ADDRESS_FAILURE_LIMIT = 3
    assert [_sign_in(client, f"staff-{n}", "guess").status_code for n in range(3)] == [200, 200, 429]


def test_an_operator_unlocks_an_address_with_a_command(client, owner):
    for n in range(10):
        _sign_in(client, f"staff-{n}", "guess")
    call_command("axes_reset_ip", "203.0.113.7")
    assert _sign_in(client, owner.username, PASSWORD).status_code == 302
