"""Admission: the one place that decides whether a call is let through, and what its
caller is (merchants.admission.admit). Its parts: the limits (limits), the failed-look-up
budget (budget), the memory of keys and merchants (memory), and the store their counters
and version live in (store). This package imports none of them itself, so that each can
be imported alone."""
