"""JSON Schema (2020-12, the dialect of OpenAPI 3.1) for the DRF serializers of the
procedures' inputs.

Only the fields those serializers use are converted; any other field raises TypeError,
so that a serializer gaining a new kind of field cannot be described wrongly in silence.
Each schema says exactly what the field itself checks, neither more nor less
(schemathesis holds the document to the service both ways): type, null, required, bounds,
and for text what DRF's CharField checks, which no length keyword says alone: surrounding
whitespace is trimmed first, then the length is counted and blank text refused, and a NUL
character is refused (``text_pattern``); or a RegexValidator's pattern.
What a serializer adds in ``validate_<field>`` (a token's form) or across fields is stated
by agentapi.openapi.rules; what no schema can say (an email at a public domain) is in the
descriptions.
"""

from typing import Any

from django.core.validators import RegexValidator
from rest_framework import fields, serializers

Schema = dict[str, Any]

# What str.strip() removes, which DRF's CharField trims: a regex class in \uXXXX escapes
# that ECMA-262 (JSON Schema's regexes), Python and Rust read alike.
SPACE = "[" + "".join(f"\\u{code:04x}" for code in range(0x10000) if chr(code).isspace()) + "]"
_SOLID = SPACE.replace("[", "[^\\u0000", 1)  # neither whitespace nor NUL
_ANY = "[^\\u0000]"


def spells_out_trimming(pattern: str) -> bool:
    """Whether ``pattern`` holds the whitespace class (text_pattern's and the rules'):
    a machine's reading of what the schema's x-minLength, x-maxLength and description say."""
    return SPACE in pattern


def text_pattern(max_length: int | None, allow_blank: bool) -> str:
    """The pattern of text as CharField reads it: NUL refused, then trimmed, then at most
    ``max_length`` characters, blank (empty once trimmed) only if ``allow_blank``."""
    if max_length is None:
        core = f"{_SOLID}(?:{_ANY}*{_SOLID})?"
    elif max_length == 1:
        core = _SOLID
    else:
        core = f"{_SOLID}(?:{_ANY}{{0,{max_length - 2}}}{_SOLID})?"
    return f"^{SPACE}*(?:{core}){'?' if allow_blank else ''}{SPACE}*$"


def serializer_schema(serializer: serializers.BaseSerializer) -> Schema:
    """The schema of what ``serializer`` accepts: an object, or an array for ``many=True``."""
    if isinstance(serializer, serializers.ListSerializer):
        schema: Schema = {"type": "array", "items": _nullable(serializer_schema(serializer.child), serializer.child)}
        if not serializer.allow_empty:
            schema["minItems"] = 1
        if serializer.min_length is not None:
            schema["minItems"] = serializer.min_length
        if serializer.max_length is not None:
            schema["maxItems"] = serializer.max_length
        return _nullable(schema, serializer)
    properties = {name: field_schema(field) for name, field in serializer.fields.items() if not field.read_only}
    schema = {"type": "object", "properties": properties}
    required = [name for name, field in serializer.fields.items() if field.required]
    if required:
        schema["required"] = required
    return schema


def field_schema(field: fields.Field) -> Schema:
    """The schema of one field (a nested serializer included)."""
    if isinstance(field, serializers.BaseSerializer):
        schema = serializer_schema(field)
        return _nullable(schema, field) if not isinstance(field, serializers.ListSerializer) else schema
    if isinstance(field, fields.BooleanField):
        schema = {"type": "boolean"}
    elif isinstance(field, fields.IntegerField):
        schema = _bounded({"type": "integer"}, field.min_value, field.max_value)
    elif isinstance(field, fields.FloatField):
        schema = _bounded({"type": "number"}, field.min_value, field.max_value)
    elif isinstance(field, fields.ChoiceField):
        # blank, where the field allows it, is a value the service accepts (as absent)
        schema = {"enum": [*field.choices, *([""] if field.allow_blank else [])]}
    elif isinstance(field, fields.CharField):
        if field.min_length is not None:
            raise TypeError(f"No JSON Schema for a CharField with min_length ({field.field_name})")
        schema = {"type": "string"}
        patterns = [validator.regex.pattern for validator in field.validators if isinstance(validator, RegexValidator)]
        if patterns:
            (schema["pattern"],) = patterns
        else:
            schema["pattern"] = text_pattern(field.max_length, field.allow_blank)
        # For readers (the reference page): what the pattern says, counted once trimmed. As
        # maxLength and minLength they would count the spaces the service trims.
        if not field.allow_blank:
            schema["x-minLength"] = 1
        if field.max_length is not None:
            schema["x-maxLength"] = field.max_length
    else:
        raise TypeError(f"No JSON Schema for {type(field).__name__} ({field.field_name})")
    if field.help_text:
        schema["description"] = str(field.help_text)
    default = field.default
    if default is not fields.empty and default is not None:
        schema["default"] = default
    return _nullable(schema, field)


def _bounded(schema: Schema, minimum, maximum) -> Schema:
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def _nullable(schema: Schema, field: fields.Field) -> Schema:
    if not field.allow_null:
        return schema
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None]}
    return {**schema, "type": [schema["type"], "null"]}
