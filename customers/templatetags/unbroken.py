"""Filters that keep what a reader takes in at a glance on one line, on a narrow phone
and on paper: ``{{ date|unbroken_time }}`` keeps a date's clock time with its zone
(``18:02 WAT``), ``{{ text|unbroken }}`` keeps the whole of a short text (a card,
``Visa •••• 4242``; a receipt number, ``DEMOSH-2026-000063``). What they wrap is escaped;
the class ``keep`` (static/receipts/site.css) is ``white-space: nowrap``."""

import re

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()

# The end of a date as receipts.rendering.display writes it: "…, 18:02 WAT", "…, 18:02 +01".
_CLOCK_AND_ZONE = re.compile(r"(\d{1,2}:\d{2}(?::\d{2})?(?: \S+)?)$")


@register.filter
def unbroken(text) -> SafeString:
    """``text`` in a span that never breaks across lines."""
    return format_html('<span class="keep">{}</span>', text)


@register.filter
def unbroken_time(text) -> SafeString:
    """A date whose clock time and zone stay together; the date before them may wrap."""
    text = str(text)
    found = _CLOCK_AND_ZONE.search(text)
    if found is None:
        return format_html("{}", text)
    return format_html('{}<span class="keep">{}</span>', text[: found.start()], found.group(1))
