"""Headers the service makes itself, set on a response without Django's checks of each one.

``response[name] = value`` checks that the name and the value are text a header may hold
(Latin-1, no line break: no header injection), about half a microsecond a header. An API
answer carries five to seven headers beyond its type, every one made by the service: a
constant, a number, a request id that passed its own check on the way in
(receco.ops.requestid). ``set_made`` puts such a header where ``response[name] = value``
would, in the same order, without the checks. Anything else, above all what a request
sent, goes through ``response[name] = value``.
"""

from django.http import HttpResponse


def set_made(response: HttpResponse, name: str, value: str) -> None:
    """Set the header ``name`` to ``value``, both ASCII text without a line break that the
    service made (not read from a request), as ``response[name] = value`` would."""
    response.headers._store[name.lower()] = (name, value)
