"""The converter from DRF serializers to the JSON Schemas of the OpenAPI document."""

import pytest
from django.core.validators import RegexValidator
from rest_framework import serializers

from agentapi.openapi.fields import SPACE, field_schema, serializer_schema, text_pattern
from agentapi.openapi.inputs import REFERENCE_RE
from receco.errors import InvalidInput
from receipts.codes import parse_reference
from receipts.validation import StrictBooleanField, StrictCharField, StrictIntegerField, StrictNumberField


class Line(serializers.Serializer):
    name = StrictCharField(max_length=100)
    inclusive = StrictBooleanField(required=False, default=False)


class Everything(serializers.Serializer):
    code = StrictCharField(max_length=6, validators=[RegexValidator(r"^[A-Z]{6}$")], help_text="Six letters")
    note = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=200)
    amount = StrictIntegerField(min_value=0, max_value=10**15)
    rate = StrictNumberField(min_value=0, max_value=100)
    format = serializers.ChoiceField(choices=["orf"], required=False, allow_null=True)
    lines = serializers.ListSerializer(child=Line(), required=False, allow_null=True, max_length=20)
    many = Line(many=True, allow_empty=False)
    card = Line(required=False, allow_null=True)


def test_it_describes_each_kind_of_field():
    assert serializer_schema(Everything()) == {
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "pattern": "^[A-Z]{6}$",
                "x-minLength": 1,
                "x-maxLength": 6,
                "description": "Six letters",
            },
            "note": {"type": ["string", "null"], "pattern": text_pattern(200, True), "x-maxLength": 200},
            "amount": {"type": "integer", "minimum": 0, "maximum": 10**15},
            "rate": {"type": "number", "minimum": 0, "maximum": 100},
            "format": {"enum": ["orf", None]},
            "lines": {"type": ["array", "null"], "items": _LINE, "maxItems": 20},
            "many": {"type": "array", "items": _LINE, "minItems": 1},
            "card": {**_LINE, "type": ["object", "null"]},
        },
        "required": ["code", "amount", "rate", "many"],
    }


_LINE = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": text_pattern(100, False), "x-minLength": 1, "x-maxLength": 100},
        "inclusive": {"type": "boolean", "default": False},
    },
    "required": ["name"],
}


def test_a_list_of_lines_that_allow_null_says_so():
    # many=True hands the lines the list's arguments: they allow null as the list does.
    lines = Line(many=True, required=False, allow_null=True)
    assert field_schema(lines)["items"]["type"] == ["object", "null"]


def test_a_field_it_cannot_describe_is_an_error():
    with pytest.raises(TypeError, match=r"No JSON Schema for DateTimeField \(when\)"):
        serializer_schema(type("Dated", (serializers.Serializer,), {"when": serializers.DateTimeField()})())


@pytest.mark.parametrize(
    "reference",
    [
        "K7P2QX",
        "k7p2qx",
        "  k7p2qx ",
        "\x1ck7p2qx\t",
        "rcpt_mfx3k2a1_q8z0lp",
        " rcpt_mfx3k2a1_q8z0lp\n",
        "a" * 64,
        "a" * 65,
        "abc-de",
        "K7P2Q",
        "no!",
        "ſſſſſſ",
        "K7P2QX\u00a0",
        "",
    ],
)
def test_the_reference_pattern_accepts_what_parse_reference_reads(reference):
    try:
        parse_reference(reference)
        readable = True
    except InvalidInput:
        readable = False
    assert bool(REFERENCE_RE.match(reference)) == readable


TEXTS = [
    "",
    " ",
    "\u00a0",
    "\x1c",
    "\u3000",
    "\ufeff",
    "a",
    " a ",
    "\u2003a\u2003",
    "a\x00",
    "\x00",
    "ab",
    "a b",
    "abc",
    "abcd",
    " abcd ",
    "abcde",
    "\nabcd\t",
    "a\u0085",
    "\u200bab",
    "é" * 4,
    "😀😀😀😀",
    "😀" * 5,
    "a\nb",
]


@pytest.mark.parametrize("blank", [True, False])
@pytest.mark.parametrize("max_length", [1, 2, 4, None])
def test_the_text_pattern_reads_text_as_drfs_charfield_does(max_length, blank):
    """DRF trims, then counts and refuses blank, and refuses NUL anywhere: maxLength and
    minLength alone counted the spaces it trims (issue 32.14: schemathesis both ways)."""
    import re

    field = StrictCharField(max_length=max_length, allow_blank=blank)
    pattern = re.compile(text_pattern(max_length, blank))
    for text in TEXTS:
        try:
            field.run_validation(text)
            accepted = True
        except serializers.ValidationError:
            accepted = False
        assert bool(pattern.search(text)) == accepted, (text, max_length, blank)


def test_the_whitespace_class_is_what_str_strip_removes():
    import re

    space = re.compile(SPACE)
    assert [chr(code) for code in range(0x110000) if space.fullmatch(chr(code))] == [
        chr(code) for code in range(0x110000) if chr(code).isspace()
    ]
