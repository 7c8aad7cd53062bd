"""Short codes the service draws (receipts.codes.new_short_code): a letter, then five of
the unambiguous alphabet, every code as likely as any other."""

import secrets

from receipts import codes


def test_a_drawn_code_is_a_letter_then_five_of_the_alphabet():
    for _ in range(2000):
        code = codes.new_short_code()
        assert len(code) == codes.SHORT_CODE_LENGTH
        assert code[0].isalpha()
        assert code[0] in codes.SHORT_CODE_ALPHABET
        assert set(code[1:]) <= set(codes.SHORT_CODE_ALPHABET)
        assert codes.SHORT_CODE_RE.match(code)
        assert not codes.is_derived_form(code)


def test_one_draw_spans_every_code_from_the_first_to_the_last(monkeypatch):
    """One number below the count of codes (23 letters x 31^5) is written in their digits:
    its smallest and largest are the first and last codes, and all between are reachable."""
    drawn = []
    monkeypatch.setattr(secrets, "randbelow", lambda bound: drawn.append(bound) or 0)
    assert codes.new_short_code() == "AAAAAA"
    monkeypatch.setattr(secrets, "randbelow", lambda bound: bound - 1)
    assert codes.new_short_code() == "Z99999"
    monkeypatch.setattr(secrets, "randbelow", lambda bound: 1)
    assert codes.new_short_code() == "BAAAAA"  # the first character turns fastest
    monkeypatch.setattr(secrets, "randbelow", lambda bound: 23)
    assert codes.new_short_code() == "ABAAAA"
    assert drawn == [23 * 31**5]  # one draw a code, below the count of codes


def test_every_letter_and_character_turns_up():
    seen = [set() for _ in range(codes.SHORT_CODE_LENGTH)]
    for _ in range(3000):
        for position, character in enumerate(codes.new_short_code()):
            seen[position].add(character)
    assert seen[0] == {c for c in codes.SHORT_CODE_ALPHABET if c.isalpha()}
    assert all(position == set(codes.SHORT_CODE_ALPHABET) for position in seen[1:])
