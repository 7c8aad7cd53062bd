"""Contact data: only addresses at a public domain, numbers in E.164, masks that hide them."""

import pytest

from receipts.contacts import mask_destination, normalize_email

PUBLIC = "Not a valid email address at a public domain"


@pytest.mark.parametrize(
    "address",
    [
        "a@localhost",
        "a@[127.0.0.1]",
        "a@[IPv6:::1]",
        "a@10.0.0.1",
        "a@mail.internal",
        "a@printer.lan",
        "a@box.localdomain",
        "a@shop.local",
        "a@site.test",
        "a@foo.localhost",
        "a@x.onion",
        "a@1.0.0.127.in-addr.arpa",
        "a@intranet",
        "customer@",
        "ü@example.com",
    ],
)
def test_it_refuses_addresses_that_are_not_at_a_public_domain(address):
    with pytest.raises(ValueError, match=PUBLIC):
        normalize_email(address)


@pytest.mark.parametrize(
    ("address", "normal"),
    [
        ("Ada@Example.COM", "Ada@example.com"),
        ("  ade.o+receipts@mail.example.ng ", "ade.o+receipts@mail.example.ng"),
        ("a@xn--bcher-kva.com", "a@xn--bcher-kva.com"),
    ],
)
def test_it_accepts_public_addresses_with_the_domain_lowercased(address, normal):
    assert normalize_email(address) == normal


def test_it_masks_each_channel():
    assert mask_destination("email", "customer@example.com") == "c*******@example.com"
    assert mask_destination("sms", "+2348031234589") == "+234*******89"
