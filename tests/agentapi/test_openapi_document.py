"""The OpenAPI document at /api/openapi.json: a valid OpenAPI 3.1 document, one path per
registered procedure, and true to the serializers that validate each input."""

import json

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.validators import RegexValidator
from openapi_spec_validator import validate
from rest_framework import fields, serializers

from agentapi.openapi import rules
from agentapi.openapi.document import build, document, input_of
from agentapi.openapi.fields import text_pattern
from agentapi.openapi.inputs import INPUTS
from receco.lib.trpc import HTTP_STATUS, PROCEDURES, Procedure


def test_it_is_a_valid_openapi_3_1_document():
    assert document()["openapi"] == "3.1.0"
    validate(document())


def test_it_is_served_at_api_openapi_json(client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == build()


def test_it_has_one_path_per_procedure_with_the_procedures_method():
    paths = document()["paths"]
    assert set(paths) == {f"/api/trpc/{name}" for name in PROCEDURES}
    for name, procedure in PROCEDURES.items():
        (method,) = paths[f"/api/trpc/{name}"]
        assert (name, method) == (name, "get" if procedure.kind == "query" else "post")


def test_queries_take_their_input_as_json_in_the_input_parameter():
    (parameter,) = document()["paths"]["/api/trpc/getReceipt"]["get"]["parameters"]
    assert parameter["name"] == "input"
    assert parameter["in"] == "query"
    assert parameter["required"] is True
    # A string holding JSON, not "content": generators such as openapi-python-client drop a
    # parameter declared with "content" (tests/agentapi/test_openapi_clients.py).
    assert "content" not in parameter
    assert parameter["schema"]["type"] == "string"
    assert parameter["schema"]["contentMediaType"] == "application/json"
    assert parameter["schema"]["contentSchema"]["required"] == ["token"]
    assert json.loads(parameter["schema"]["examples"][0]) == {"token": "K7P2QX"}


@pytest.mark.parametrize(
    ("name", "required"),
    [("getReceipt", True), ("getReceiptProof", True), ("getLogConsistency", True), ("getLogCheckpoint", False)],
)
def test_an_input_with_no_required_field_is_optional(name, required):
    """getLogCheckpoint's input was marked required; left out, it is the latest checkpoint."""
    (parameter,) = document()["paths"][f"/api/trpc/{name}"]["get"]["parameters"]
    assert parameter["required"] is required
    kinds = parameter["schema"]["contentSchema"]["type"]
    assert kinds == ("object" if required else ["object", "null"])


def test_it_names_the_service_as_its_server():
    assert document()["servers"] == [{"url": settings.RECECO_WEB_URL, "description": "This service (RECECO_WEB_URL)"}]


def test_a_procedure_it_cannot_describe_stops_the_build():
    registry = {**PROCEDURES, "mystery": Procedure("query", lambda call: None)}
    with pytest.raises(ImproperlyConfigured, match="describes no input or output of mystery"):
        build(registry)


def test_the_api_key_is_a_bearer_scheme_and_optional():
    components = document()["components"]
    assert components["securitySchemes"]["apiKey"]["type"] == "http"
    assert components["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    assert document()["security"] == [{}, {"apiKey": []}]


def test_every_error_code_the_router_knows_is_documented():
    documented = {
        response["content"]["application/json"]["schema"]["allOf"][1]["properties"]["error"]["properties"]["data"][
            "properties"
        ]["code"]["const"]
        for response in document()["components"]["responses"].values()
    }
    assert documented == set(HTTP_STATUS)


def test_a_query_documents_each_status_the_service_or_its_proxy_answers_and_no_other():
    """No 417: the proxy passes on no Expect header (tests/deploy/test_proxy.py), so gunicorn
    never refuses one; no 415: a body is JSON whatever its Content-Type."""
    responses = document()["paths"]["/api/trpc/getReceipt"]["get"]["responses"]
    assert sorted(responses) == ["200", "400", "401", "403", "404", "405", "414", "429", "431", "500", "501", "503"]


def test_mutations_document_413_and_queries_do_not():
    paths = document()["paths"]
    assert "413" not in paths["/api/trpc/getReceipt"]["get"]["responses"]
    for name in ("createReceiptFromPOS", "updateReceiptContact", "refundReceipt", "voidReceipt"):
        assert "413" in paths[f"/api/trpc/{name}"]["post"]["responses"]


def test_409_is_documented_where_a_conflict_can_happen():
    paths = document()["paths"]
    with_conflicts = {name for name, item in paths.items() if "409" in next(iter(item.values()))["responses"]}
    assert with_conflicts == {"/api/trpc/createReceiptFromPOS", "/api/trpc/refundReceipt", "/api/trpc/voidReceipt"}
    assert paths["/api/trpc/voidReceipt"]["post"]["responses"]["409"]["description"] == (
        "The sale has refunds, or is itself a refund"
    )


def test_429_and_503_require_retry_after():
    responses = document()["components"]["responses"]
    for name in ("TooManyRequests", "ServiceUnavailable"):
        header = _resolve(responses[name]["headers"]["Retry-After"])
        assert header["required"] is True
        assert header["schema"] == {"type": "integer", "minimum": 1}


# --- the inputs, field by field, against the serializers that validate them ---


def _input_schema(name: str) -> dict:
    (operation,) = document()["paths"][f"/api/trpc/{name}"].values()
    return input_of(operation)[0]


def _serializer_fields(serializer: serializers.Serializer, prefix=""):
    """(path, field, schema-path) for every field, nested ones included."""
    for name, field in serializer.fields.items():
        yield f"{prefix}{name}", field
        if isinstance(field, serializers.ListSerializer):
            yield from _serializer_fields(field.child, f"{prefix}{name}[].")
        elif isinstance(field, serializers.Serializer):
            yield from _serializer_fields(field, f"{prefix}{name}.")


def _schema_at(schema: dict, path: str) -> tuple[dict, dict]:
    """(the object schema holding the field, the field's schema) at ``items[].name``."""
    parent = schema
    parts = path.split(".")
    for part in parts[:-1]:
        parent = parent["properties"][part.removesuffix("[]")]
        if part.endswith("[]"):
            parent = parent["items"]
    return parent, parent["properties"][parts[-1]]


def _types(schema: dict) -> set:
    if "enum" in schema:
        return {type(value).__name__ for value in schema["enum"]}
    kinds = schema["type"]
    return set(kinds) if isinstance(kinds, list) else {kinds}


CASES = [(name, path, field) for name in INPUTS for path, field in _serializer_fields(INPUTS[name].serializer())]


@pytest.mark.parametrize(("name", "path", "field"), CASES, ids=[f"{name}:{path}" for name, path, _ in CASES])
def test_every_field_is_described_as_its_serializer_reads_it(name, path, field):
    parent, schema = _schema_at(_input_schema(name), path)
    assert (path.split(".")[-1] in parent.get("required", [])) == field.required
    types = _types(schema)
    assert ("null" in types or "NoneType" in types) == field.allow_null
    if isinstance(field, serializers.ListSerializer):
        assert "array" in types
        assert schema.get("maxItems") == field.max_length
        assert schema.get("minItems", 0) == (0 if field.allow_empty else 1)
    elif isinstance(field, serializers.Serializer):
        assert "object" in types
        assert set(schema["properties"]) == set(field.fields)
    elif isinstance(field, fields.BooleanField):
        assert types - {"null"} == {"boolean"}
    elif isinstance(field, fields.IntegerField):
        assert types - {"null"} == {"integer"}
        assert (schema.get("minimum"), schema.get("maximum")) == (field.min_value, field.max_value)
    elif isinstance(field, fields.FloatField):
        assert types - {"null"} == {"number"}
        assert (schema.get("minimum"), schema.get("maximum")) == (field.min_value, field.max_value)
    elif isinstance(field, fields.ChoiceField):
        # blank is in the enum exactly where the service takes it (as absent)
        assert set(schema["enum"]) - {None} == set(field.choices) | ({""} if field.allow_blank else set())
    else:
        assert isinstance(field, fields.CharField)
        assert types - {"null"} == {"string"}
        # Lengths count the trimmed text: for readers only (the pattern says them to machines).
        assert "maxLength" not in schema
        assert schema.get("x-maxLength") == field.max_length
        assert schema.get("x-minLength", 0) == (0 if field.allow_blank else 1)
        patterns = [validator.regex.pattern for validator in field.validators if isinstance(validator, RegexValidator)]
        stated = rules.FIELDS.get(name, {}).get(path, {}).get("pattern")
        assert schema["pattern"] == (
            stated or (patterns[0] if patterns else text_pattern(field.max_length, field.allow_blank))
        )


def test_each_input_has_no_field_its_serializer_lacks():
    for name, described in INPUTS.items():
        described_paths = set(_schema_paths(_input_schema(name)))
        assert described_paths == {path for path, _ in _serializer_fields(described.serializer())}, name


def _schema_paths(schema: dict, prefix=""):
    for name, field in schema.get("properties", {}).items():
        yield f"{prefix}{name}"
        if "items" in field:
            yield from _schema_paths(field["items"], f"{prefix}{name}[].")
        elif "properties" in field:
            yield from _schema_paths(field, f"{prefix}{name}.")


def test_each_example_is_valid_input_for_its_serializer():
    for name, described in INPUTS.items():
        serializer = described.serializer(data=described.example)
        assert serializer.is_valid(), (name, serializer.errors)


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        target = document()
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def test_the_sale_may_name_its_till():
    terminal = _input_schema("createReceiptFromPOS")["properties"]["terminal_id"]
    assert terminal["x-maxLength"] == 32
    assert "numbered in its own series" in terminal["description"]
    assert "terminal_id" not in _input_schema("createReceiptFromPOS")["required"]
