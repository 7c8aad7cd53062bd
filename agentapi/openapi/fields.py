"""JSON Schema (2020-12, the dialect of OpenAPI 3.1) for the DRF serializers of the
procedures' inputs.

Only the fields those serializers use are converted; any other field raises TypeError,
so that a serializer gaining a new kind of field cannot be described wrongly in silence.
Each schema says what the field itself checks: type, null, required, bounds, lengths and
a RegexValidator's pattern.
Rules a serializer adds in ``validate_<field>`` (a token's pattern, an email at a public
domain) are in the descriptions, not the schema.
"""

from typing import Any

from django.core.validators import RegexValidator
from rest_framework import fields, serializers

Schema = dict[str, Any]


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
        schema = {"enum": list(field.choices)}
    elif isinstance(field, fields.CharField):
        schema = {"type": "string"}
        minimum = field.min_length if field.min_length is not None else (0 if field.allow_blank else 1)
        if minimum:
            schema["minLength"] = minimum
        if field.max_length is not None:
            schema["maxLength"] = field.max_length
        patterns = [validator.regex.pattern for validator in field.validators if isinstance(validator, RegexValidator)]
        if patterns:
            (schema["pattern"],) = patterns
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
