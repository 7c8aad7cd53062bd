"""The OpenAPI 3.1 document of the procedures, built from the registry (receco.lib.trpc:
names and methods), the input serializers (agentapi.openapi.inputs) and the answers'
schemas (agentapi.openapi.outputs), once per process.

One path per procedure under /api/trpc/<name>: queries are GET with the input as
URL-encoded JSON in ``input``, mutations POST with a JSON body. Batching (several
procedures in one path, ``batch=1``) is described in the text, not as paths.
"""

import functools

import orjson
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from agentapi import procedures  # noqa: F401  (registers the procedures)
from agentapi.openapi.fields import serializer_schema
from agentapi.openapi.inputs import INPUTS, NOTES
from agentapi.openapi.outputs import OUTPUTS, SCHEMAS
from agentapi.openapi.rules import ACROSS, FIELDS
from merchants.admission import limits
from receco.lib.trpc import API_PREFIX, HTTP_STATUS, JSONRPC_ERROR_CODE, PROCEDURES, Procedure

TITLE = "Receco API"
VERSION = "1.0.0"
DESCRIPTION = """\
Receco's procedures, called over HTTP in the convention of tRPC. A success is
`{"result": {"data": …}}` with status 200; every failure, whatever it is, is
`{"error": {"message", "code": -32603, "data": {"code", "httpStatus", "path"}}}`:
read `error.data.code`. Queries are GET with the input as URL-encoded JSON in the
`input` query parameter; mutations are POST with a JSON body.

Send `Authorization: Bearer <API key>` when you have a key (a bare `Authorization: <key>`
works too). Reading a receipt and attaching a contact need none; refunds and voids need
the merchant's key, and so does creating receipts for a merchant that requires it.
Amounts are integers in minor units (kobo, cents). An integer may be written as a number
with no fraction (`1556.0` is 1556, as JSON Schema reads it); `1556.5` and `"1556"` are
refused.

Batching, as tRPC's httpBatchLink does it: `/api/trpc/getReceipt,getReceipt?batch=1`
with the inputs keyed `{"0": …, "1": …}` (in `input` for queries, in the body for
mutations), at most 50 calls; the answer is an array of envelopes in call order, with
their common status, or 207 when the statuses differ.

Rate limits (each call of a batch counts): {limits}. Going over answers 429 with
Retry-After; calls with a live key carry the RateLimit-Policy and RateLimit headers.
"""

# The answers of every procedure call that fails, as (status, error.data.code, name, when).
ERRORS = [
    (400, "INVALID_INPUT", "InvalidInput", "Unparseable JSON, a missing or ill-typed field (the message names it), "
     "`Invalid token format`, a batch of more than 50 calls, a malformed header or chunked body"),
    (401, "UNAUTHORIZED", "Unauthorized", "A malformed, unknown, revoked or expired API key (the message says "
     "which), an unsupported Authorization scheme, or no key where the merchant requires one"),
    (403, "FORBIDDEN", "Forbidden", "The merchant is suspended, the key belongs to another merchant (creating its "
     "receipts), or a test key asked for a live receipt"),
    (404, "NOT_FOUND", "NotFound", "`Receipt not found` (also another merchant's receipt, to its key), "
     "`Merchant not found`, or of the log: no checkpoint (of that size) yet, or a receipt not in it yet (with "
     "Retry-After: ask again then)"),
    (405, "METHOD_NOT_SUPPORTED", "MethodNotSupported", "Any other method than the procedure's (GET for a query, "
     "POST for a mutation), which the Allow header names"),
    (409, "CONFLICT", "Conflict", "The request contradicts an earlier one"),
    (413, "PAYLOAD_TOO_LARGE", "PayloadTooLarge", "The body is over the service's limit (1 MiB unless configured)"),
    (414, "PAYLOAD_TOO_LARGE", "UriTooLong", "The request line is over 8190 bytes (refused by the HTTP server; "
     "no `path`): send large batches with POST"),
    (429, "TOO_MANY_REQUESTS", "TooManyRequests", "A rate limit, the limit of short codes that find nothing, of new "
     "test- merchants, or a daily delivery limit; Retry-After says when to try again"),
    (431, "PAYLOAD_TOO_LARGE", "HeaderTooLarge", "A request header over 8190 bytes, or too many of them (refused by "
     "the HTTP server; no `path`)"),
    (500, "INTERNAL_SERVER_ERROR", "InternalServerError", "Anything unexpected (logged; no details)"),
    (501, "INVALID_INPUT", "NotImplemented", "An unsupported Transfer-Encoding (refused by the HTTP server; "
     "no `path`)"),
    (503, "SERVICE_UNAVAILABLE", "ServiceUnavailable", "The database is not answering; Retry-After says when to "
     "try again"),
]  # fmt: skip
_NAMES = {status: name for status, _, name, _ in ERRORS}
# Answered whatever the procedure; 409 and 413 depend on it (_error_statuses).
_EVERY_CALL = (400, 401, 403, 404, 405, 414, 429, 431, 500, 501, 503)
_RETRY_AFTER = (429, 503)


def document() -> dict:
    """The document, built on first use, and again when the limits it states change."""
    return _document(limits.current(), settings.RECECO_WEB_URL)


def document_json() -> bytes:
    """The document as the JSON /api/openapi.json serves."""
    return _document_json(limits.current(), settings.RECECO_WEB_URL)


@functools.lru_cache(maxsize=4)  # keyed by what the document reads from the settings
def _document(_limits: tuple, _web_url: str) -> dict:
    return build()


@functools.lru_cache(maxsize=4)
def _document_json(limits_now: tuple, web_url: str) -> bytes:
    return orjson.dumps(_document(limits_now, web_url))


def _with_limits(text: str) -> str:
    """``text`` with {limits} (all of them) and each limit's {live_key}, {anonymous},
    {failed_lookups}, {test_merchants} in words, as the settings say now."""
    words = {
        setting.removeprefix("RECECO_RATELIMIT_").lower(): limits.in_words(setting) for setting, *_ in limits.DECLARED
    }
    for name, said in {**words, "limits": limits.summary()}.items():
        text = text.replace(f"{{{name}}}", said)
    return text


def build(registry: dict[str, Procedure] = PROCEDURES) -> dict:
    """Build the document for the procedures of ``registry``.

    Raises ImproperlyConfigured if a procedure has no input or output description here.
    """
    undescribed = sorted(set(registry) - set(INPUTS) | set(registry) - set(OUTPUTS))
    if undescribed:
        raise ImproperlyConfigured(f"agentapi.openapi describes no input or output of {', '.join(undescribed)}")
    return {
        "openapi": "3.1.0",
        "info": {"title": TITLE, "version": VERSION, "description": _with_limits(DESCRIPTION)},
        # Code generators take their clients' default base URL from here.
        "servers": [{"url": settings.RECECO_WEB_URL, "description": "This service (RECECO_WEB_URL)"}],
        "paths": {f"{API_PREFIX}{name}": _path(name, procedure) for name, procedure in registry.items()},
        "components": {
            "schemas": {**SCHEMAS, "Error": _error_schema()},
            "responses": {name: _error_response(status, code, when) for status, code, name, when in ERRORS},
            "headers": _headers(),
            "securitySchemes": {
                "apiKey": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A merchant's API key: postest_… or poslive_… (58 characters)",
                }
            },
        },
        # A key is optional: [{}] lets a call go without one.
        "security": [{}, {"apiKey": []}],
    }


def _path(name: str, procedure: Procedure) -> dict:
    described = INPUTS[name]
    schema = _annotated(serializer_schema(described.serializer()), NOTES.get(name, {}))
    schema = {**_stated(schema, FIELDS.get(name, {})), **ACROSS.get(name, {})}
    operation = {
        "operationId": name,
        "summary": described.summary,
        "description": _with_limits(described.description),
        "responses": {"200": _success(name), **_error_responses(name, procedure)},
    }
    if procedure.kind == "query":
        # The input is one query value holding JSON. Declared as a string whose content is
        # JSON (contentMediaType, contentSchema), not with "content": common generators
        # (openapi-python-client among them) drop a parameter declared with "content", and
        # leave their users no way to send it.
        schema["examples"] = [described.example]
        # An input with no required field may be left out (or be null): {} is read then.
        required = bool(schema.get("required"))
        if not required:
            schema["type"] = ["object", "null"]
        operation["parameters"] = [
            {
                "name": "input",
                "in": "query",
                "required": required,
                "description": "The input as JSON, URL-encoded like any query value: " + _json(described.example),
                "schema": {
                    "type": "string",
                    "contentMediaType": "application/json",
                    "contentSchema": schema,
                    "examples": [_json(described.example)],
                },
            }
        ]
    else:
        media = {"application/json": {"schema": schema, "example": described.example}}
        operation["requestBody"] = {"required": True, "content": media}
    return {procedure.method.lower(): operation}


def _json(value: object) -> str:
    return orjson.dumps(value).decode()


def input_of(operation: dict) -> tuple[dict, dict]:
    """The schema of an operation's input, and its example, whether it is sent in the query
    (queries) or as the body (mutations)."""
    if "requestBody" in operation:
        media = operation["requestBody"]["content"]["application/json"]
        return media["schema"], media["example"]
    schema = operation["parameters"][0]["schema"]["contentSchema"]
    return schema, schema["examples"][0]


def _field(schema: dict, path: str) -> dict:
    """The schema of the field ``path`` names (``items[].sku``, ``payment_details.card_last4``)
    inside ``schema``; raises KeyError for a field it does not have."""
    node = schema
    for part in path.split("."):
        node = node["properties"][part.removesuffix("[]")]
        if part.endswith("[]"):
            node = node["items"]
    return node


def _stated(schema: dict, rules: dict[str, dict]) -> dict:
    """``schema`` with each field's rules (agentapi.openapi.rules) merged into its schema."""
    for path, rule in rules.items():
        _field(schema, path).update(rule)
    return schema


def _annotated(schema: dict, notes: dict[str, str]) -> dict:
    """``schema`` with the description of each field ``notes`` names (``items[].sku``,
    ``payment_details.card_last4``); raises KeyError for a field it does not have."""
    for path, note in notes.items():
        _field(schema, path)["description"] = note
    return schema


def _success(name: str) -> dict:
    data = {
        "type": "object",
        "properties": {"result": _closed({"data": OUTPUTS[name]})},
        "required": ["result"],
        "additionalProperties": False,
    }
    return {
        "description": "The procedure's answer in result.data",
        "headers": {
            "RateLimit-Policy": {"$ref": "#/components/headers/RateLimit-Policy"},
            "RateLimit": {"$ref": "#/components/headers/RateLimit"},
        },
        "content": {"application/json": {"schema": data}},
    }


def _error_responses(name: str, procedure: Procedure) -> dict:
    described = INPUTS[name]
    statuses = list(_EVERY_CALL)
    if procedure.kind == "mutation":
        statuses.append(413)
    if described.conflicts:
        statuses.append(409)
    responses = {str(status): {"$ref": f"#/components/responses/{_NAMES[status]}"} for status in sorted(statuses)}
    if described.conflicts:
        responses["409"] = {**responses["409"], "description": described.conflicts}
    return responses


def _closed(properties: dict) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _error_schema() -> dict:
    data = _closed(
        {
            "code": {"enum": list(HTTP_STATUS)},
            "httpStatus": {"type": "integer"},
            "path": {"type": "string", "description": "The procedure called, whenever one was addressed"},
        }
    )
    data["required"] = ["code", "httpStatus"]
    error = _closed({"message": {"type": "string"}, "code": {"const": JSONRPC_ERROR_CODE}, "data": data})
    return {**_closed({"error": error}), "description": "Every failure, whatever it is"}


def _error_response(status: int, code: str, when: str) -> dict:
    specific = {"code": {"const": code}, "httpStatus": {"const": status}}
    schema = {
        "allOf": [
            {"$ref": "#/components/schemas/Error"},
            {"properties": {"error": {"properties": {"data": {"properties": specific}}}}},
        ]
    }
    response = {"description": f"{code}: {when}", "content": {"application/json": {"schema": schema}}}
    if status in _RETRY_AFTER:
        response["headers"] = {"Retry-After": {"$ref": "#/components/headers/Retry-After"}}
    return response


def _headers() -> dict:
    return {
        "Retry-After": {
            "description": "Seconds to wait before trying again",
            "required": True,
            "schema": {"type": "integer", "minimum": 1},
        },
        "RateLimit-Policy": {
            "description": f"A live key's limits (draft-ietf-httpapi-ratelimit-headers): {limits.policy_header()}",
            "schema": {"type": "string"},
        },
        "RateLimit": {
            "description": 'Where a live key stands against them: "minute";r=<calls left>;t=<seconds left>, …',
            "schema": {"type": "string"},
        },
    }
