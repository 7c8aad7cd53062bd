"""The customer's steps to sign in to the receipt locker with a texted code, as the
locker tests and the whole journey's test take them."""

import re

from messaging import sms

NUMBER = "+2348031234567"
TYPED = "0803 123 4567"  # NUMBER as a customer types it


def texted_code(number: str = NUMBER) -> str:
    """The last sign-in code texted to the number."""
    codes = [re.match(r"(\d{6}) is your Receco code", m.body) for m in sms.outbox if m.to == number]
    return [found[1] for found in codes if found][-1]


def ask_for_a_code(page, url: str, typed: str = TYPED) -> None:
    """On the locker's sign-in page: type the number and continue to the code's page."""
    page.get_by_label("Mobile number or email address").fill(typed)
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url(f"{url}/app/my/code")


def enter_the_code(page, code: str) -> None:
    """On the code's page: type a code and sign in with it."""
    page.get_by_label("Code").fill(code)
    page.get_by_role("button", name="Sign in").click()


def sign_in_by_code(page, url: str) -> None:
    """From the locker's sign-in page to the signed-in list, with the code texted to NUMBER."""
    ask_for_a_code(page, url)
    enter_the_code(page, texted_code())
    page.wait_for_url(f"{url}/app/my")
