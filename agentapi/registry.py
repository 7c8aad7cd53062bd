"""Procedure registry: which names exist and whether each is a query or a mutation."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest

from merchants.admission.admit import Admission


@dataclass(frozen=True)
class Call:
    """One procedure call: the HTTP request it arrived in, its parsed input, and who made
    it, as the router admitted it."""

    request: HttpRequest
    path: str
    input: Any
    admission: Admission


@dataclass(frozen=True)
class Procedure:
    kind: str  # "query" (GET) or "mutation" (POST)
    func: Callable[[Call], Any]

    @property
    def method(self) -> str:
        return "GET" if self.kind == "query" else "POST"


PROCEDURES: dict[str, Procedure] = {}


def _register(kind: str, name: str):
    def decorator(func):
        PROCEDURES[name] = Procedure(kind, func)
        return func

    return decorator


def query(name: str):
    """Register ``func`` as a GET procedure named ``name``."""
    return _register("query", name)


def mutation(name: str):
    """Register ``func`` as a POST procedure named ``name``."""
    return _register("mutation", name)
