"""The procedures fuzzed from their OpenAPI document with schemathesis: inputs that fit
the document and inputs that break it, each answered without a 5xx and as the document
says (status, body, content type, required headers); an input that breaks the document
is refused (so the document is no stricter than the service).

The service runs in this process, as a WSGI application on the test database. The rate
limits are lifted so that the fuzzing reaches the procedures rather than the limiter
(the 429s are documented, and tests/agentapi/test_openapi_answers.py checks real ones).
The run is deterministic (derandomized) and bounded (MAX_EXAMPLES per procedure).
"""

import copy
import json
from urllib.parse import urlsplit

import hypothesis
import pytest
import schemathesis
from django.conf import settings as django_settings
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from agentapi.openapi.inputs import SALE_EXAMPLE

MAX_EXAMPLES = 60
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
]
UNLIMITED = "1000000/m"


# The service's own host name: Django refuses any other (ALLOWED_HOSTS).
HOST = {"Host": urlsplit(django_settings.RECECO_WEB_URL).hostname}
# Loaded from the URL that serves it, as an integrator's tool would.
schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application(), headers=HOST)


def _input_as_content(document: dict) -> dict:
    """The document with each query's input declared by its contentSchema under "content".
    The served document declares it as a string holding JSON (for generators that drop
    "content"), for which schemathesis makes any JSON at all; declared so, the inputs it
    makes fit the input's schema, and reach past "Invalid token format"."""
    document = copy.deepcopy(document)
    for item in document["paths"].values():
        for parameter in item.get("get", {}).get("parameters", []):
            parameter["content"] = {"application/json": {"schema": parameter.pop("schema")["contentSchema"]}}
    return document


queries = schemathesis.openapi.from_dict(_input_as_content(schema.raw_schema)).include(method="GET")
queries.app = schema.app


@pytest.fixture
def service(db, client, settings):
    """The service with its rate limits lifted and the sale of the document's examples stored."""
    settings.RECECO_RATELIMIT_ANONYMOUS = [UNLIMITED]
    settings.RECECO_RATELIMIT_FAILED_LOOKUPS = UNLIMITED
    settings.RECECO_RATELIMIT_TEST_MERCHANTS = UNLIMITED
    # The document's examples name this sale: its receipt exists, so they reach past "not found".
    response = client.post("/api/trpc/createReceiptFromPOS", json.dumps(SALE_EXAMPLE), content_type="application/json")
    assert response.status_code == 200, response.content
    # Requests through the WSGI application close the database connection when they end,
    # and with it the test's transaction; Django's test client keeps it open the same way.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@hypothesis.settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
)
def test_every_answer_is_as_documented(case, service):
    case.call_and_validate(headers=HOST, checks=CHECKS)


@queries.parametrize()
@hypothesis.settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(hypothesis.HealthCheck),
)
def test_every_answer_to_an_input_made_from_its_schema_is_as_documented(case, service):
    case.call_and_validate(headers=HOST, checks=CHECKS)
