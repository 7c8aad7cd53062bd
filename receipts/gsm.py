"""The GSM 03.38 alphabet that text messages are sent in: a message written only in it is
sent 160 characters a part (153 each when it takes several); one character outside it
sends the whole message in UCS-2, 70 a part (67 each when it takes several). Its
extension characters (``€ [ ] { } \\ ^ ~ |``) take two places each."""

import math
import unicodedata

BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿"
    "abcdefghijklmnopqrstuvwxyzäöñüà"
)
EXTENSION = frozenset("€[]{}\\^~|\f")
# One part of a message in the alphabet, and each part of one that takes several.
PART = 160
CONCATENATED_PART = 153
# The same in UCS-2, counted in UTF-16 code units.
UCS2_PART = 70
UCS2_CONCATENATED_PART = 67
# Shop names are written with plain look-alikes of extension characters, which take two places.
_PLAIN = {"[": "(", "]": ")", "{": "(", "}": ")", "\\": "/", "^": "'", "~": "-", "|": "/", "€": "EUR", "\f": " "}
_LOOK_ALIKES = {"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "…": "...", "₦": "NGN"}


def septets(text: str) -> int | None:
    """The places ``text`` takes in the GSM alphabet; None when it is not written in it."""
    total = 0
    for character in text:
        if character in BASIC:
            total += 1
        elif character in EXTENSION:
            total += 2
        else:
            return None
    return total


def _ucs2_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def room(text: str) -> int:
    """The places ``text`` leaves in one part: of 160 in the alphabet, else of 70 in UCS-2
    (negative when it takes more than one). A character of ``plain`` takes one place in
    either."""
    places = septets(text)
    return PART - places if places is not None else UCS2_PART - _ucs2_units(text)


def parts(text: str) -> int:
    """How many parts ``text`` is sent in."""
    places = septets(text)
    if places is None:
        places, one, each = _ucs2_units(text), UCS2_PART, UCS2_CONCATENATED_PART
    else:
        one, each = PART, CONCATENATED_PART
    return 1 if places <= one else math.ceil(places / each)


def plain(text: str) -> str:
    """``text`` in the alphabet's basic characters, one place each: accents the alphabet
    lacks taken off (``Café Olá`` -> ``Café Ola``), common look-alikes replaced, anything
    else a ``?``."""
    found = []
    for character in text:
        if character in BASIC:
            found.append(character)
            continue
        character = _PLAIN.get(character) or _LOOK_ALIKES.get(character) or character
        if all(part in BASIC for part in character):
            found.append(character)
            continue
        base = unicodedata.normalize("NFKD", character).encode("ascii", "ignore").decode()
        found.append(base if base and all(part in BASIC for part in base) else "?")
    return "".join(found)
