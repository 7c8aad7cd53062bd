"""The API reference page's content, read from the OpenAPI document: per procedure its
fields, answer, errors and an example, as rows a template can show without logic."""

import json
from dataclasses import dataclass
from urllib.parse import quote

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from agentapi.openapi.document import ERRORS, document, input_of
from agentapi.openapi.fields import spells_out_trimming


@dataclass(frozen=True)
class Row:
    name: str  # a path into the JSON: items[].quantity
    type: str  # integer, string or null, one of "orf"
    required: bool
    rules: str  # minimum 0 · maximum 1000000000000000
    description: str


@dataclass(frozen=True)
class Failure:
    status: str
    code: str
    when: SafeString  # `code` spans shown as <code>


@dataclass(frozen=True)
class Operation:
    name: str
    method: str
    path: str
    summary: str
    description: str
    fields: list[Row]
    answer: list[Row]
    failures: list[Failure]
    example: str  # a curl command


def operations(base_url: str) -> list[Operation]:
    """Every procedure of the document, in its order; examples call ``base_url``."""
    doc = document()
    found = []
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            found.append(_operation(doc, base_url, path, method, operation))
    return found


def _operation(doc: dict, base_url: str, path: str, method: str, operation: dict) -> Operation:
    schema, example = input_of(operation)
    success = operation["responses"]["200"]["content"]["application/json"]["schema"]
    data = success["properties"]["result"]["properties"]["data"]
    failures = []
    for status, response in operation["responses"].items():
        if status == "200":
            continue
        code, when = _ERRORS[int(status)]
        failures.append(Failure(status, code, _with_code(response.get("description", when))))
    return Operation(
        name=operation["operationId"],
        method=method.upper(),
        path=path,
        summary=operation["summary"],
        description=operation["description"],
        fields=list(_rows(doc, schema, "")),
        answer=list(_rows(doc, data, "")),
        failures=failures,
        example=_curl(base_url, path, method, example),
    )


def introduction() -> list[SafeString]:
    """The document's description as paragraphs, its `code` spans as <code>."""
    return [_with_code(" ".join(paragraph.split())) for paragraph in document()["info"]["description"].split("\n\n")]


def _with_code(text: str) -> SafeString:
    pieces = [format_html("<code>{}</code>", part) if odd else part for odd, part in _alternating(text.split("`"))]
    return format_html_join("", "{}", ((piece,) for piece in pieces))


def _alternating(parts: list[str]):
    return ((index % 2 == 1, part) for index, part in enumerate(parts))


def failures() -> list[Failure]:
    """Every error status the API answers, with its code and when."""
    return [Failure(str(status), code, _with_code(when)) for status, code, _, when in ERRORS]


_ERRORS = {status: (code, when) for status, code, _, when in ERRORS}


def _resolve(doc: dict, schema: dict) -> dict:
    while "$ref" in schema:
        node = doc
        for part in schema["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def _rows(doc: dict, schema: dict, prefix: str):
    """Rows for the properties of an object schema, nested objects and arrays of them flattened."""
    schema = _resolve(doc, schema)
    if "oneOf" in schema:  # getReceipt: the receipt (the ORF document is its own format)
        schema = _resolve(doc, schema["oneOf"][0])
    required = set(schema.get("required", ()))
    for name, field in schema.get("properties", {}).items():
        field = _resolve(doc, field)
        path = f"{prefix}{name}"
        yield Row(path, _type(doc, field), name in required, _rules(field), field.get("description", ""))
        inner = _object_part(doc, field)
        if inner is not None:
            yield from _rows(doc, inner, f"{path}[]." if _is_array(field) else f"{path}.")


def _is_array(schema: dict) -> bool:
    kinds = schema.get("type")
    return kinds == "array" or (isinstance(kinds, list) and "array" in kinds)


def _object_part(doc: dict, schema: dict) -> dict | None:
    if _is_array(schema):
        schema = _resolve(doc, schema["items"])
    for option in schema.get("oneOf", ()):
        option = _resolve(doc, option)
        if option.get("type") == "object":
            return option
    return schema if "properties" in schema else None


def _type(doc: dict, schema: dict) -> str:
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(value) for value in schema["enum"])
    if "oneOf" in schema:
        return " or ".join(_type(doc, _resolve(doc, option)) for option in schema["oneOf"])
    kinds = schema.get("type", "any")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    words = []
    for kind in kinds:
        if kind == "array" and "items" in schema:
            item = _resolve(doc, schema["items"])
            kind = "array of objects" if item.get("type") == "object" else f"array of {_type(doc, item)}"
        words.append(kind)
    return " or ".join(words)


_RULES = [
    ("minimum", "at least {}"),
    ("maximum", "at most {}"),
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("x-maxLength", "at most {} characters, surrounding spaces trimmed"),
    ("minItems", "at least {} of them"),
    ("maxItems", "at most {} of them"),
    ("pattern", "matches {}"),
    ("format", "{}"),
]


def _rules(schema: dict) -> str:
    rules = [
        text.format(f"{schema[key]:,}" if isinstance(schema[key], int) else schema[key])
        for key, text in _RULES
        if key in schema
        and not (key == "minLength" and schema[key] == 1)
        and not (key == "pattern" and spells_out_trimming(schema[key]))
    ]
    if schema.get("minLength") == 1 or schema.get("x-minLength") == 1:
        rules.insert(0, "not blank")
    if "default" in schema:
        rules.append(f"default {json.dumps(schema['default'])}")
    return " · ".join(rules)


def _curl(base_url: str, path: str, method: str, example: dict) -> str:
    if method == "get":
        encoded = quote(json.dumps(example, separators=(",", ":")), safe="")
        return f"curl -s '{base_url}{path}?input={encoded}'"
    body = json.dumps(example, indent=2, ensure_ascii=False)
    return f"curl -s -X POST {base_url}{path} \\\n  -H 'Content-Type: application/json' \\\n  -d '{body}'"
