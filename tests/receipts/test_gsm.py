"""The GSM alphabet of text messages: how many places a text takes, and a shop's name in
plain letters that take one place each."""

import pytest

from receipts import gsm


@pytest.mark.parametrize(
    ("text", "places"),
    [
        ("Receipt from Mama Put Kitchen, NGN 1,300.00", 43),
        ("Café Olá", None),  # "á" is not in the alphabet: the whole text would go in UCS-2
        ("Prices in €", 12),  # "€" is an extension character: two places
        ("[x]", 5),
        ("₦1,300.00", None),
        ("https://receco.ng/n/K7P2QX?k=pPOuq1HZZ:1xWWUv:6RG8Y11n-miIDJTO", 62),
        ("", 0),
    ],
)
def test_septets(text, places):
    assert gsm.septets(text) == places


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("Mama Put Kitchen", "Mama Put Kitchen"),
        ("Café Ọlá", "Café Ola"),  # é is in the alphabet; Ọ and á are not, their letters are
        ("Ade’s “Best” Suya – Ikeja…", 'Ade\'s "Best" Suya - Ikeja...'),
        ("Shop [VI] {2} ~ a|b \\ ^", "Shop (VI) (2) - a/b / '"),
        ("Chop ₦ Go", "Chop NGN Go"),
        ("Bukka 🍲", "Bukka ?"),
        ("食堂", "??"),
    ],
)
def test_plain_takes_one_place_a_character(name, written):
    assert gsm.plain(name) == written
    assert gsm.septets(written) == len(written)


@pytest.mark.parametrize(
    ("text", "room", "parts"),
    [
        ("a" * 160, 0, 1),
        ("a" * 161, -1, 2),  # then 153 a part
        ("a" * 306, -146, 2),
        ("a" * 307, -147, 3),
        ("€" * 80, 0, 1),  # two places each
        ("Olá" + "a" * 67, 0, 1),  # UCS-2: 70 a part
        ("Olá" + "a" * 68, -1, 2),  # then 67 a part
        ("🍲" * 35, 0, 1),  # two UTF-16 units each
        ("", 160, 1),
    ],
)
def test_room_and_parts(text, room, parts):
    assert gsm.room(text) == room
    assert gsm.parts(text) == parts
