"""The limits' parts: fixed windows, counter names, the RateLimit headers (merchants.admission.limits)."""

from merchants.admission.limits import Quota, RateState, windows
from receco.lib.rates import parse_rate


def test_the_headers_follow_the_ietf_draft():
    state = RateState((Quota(parse_rate("1000/m"), 997, 42), Quota(parse_rate("100/s"), 99, 1)))
    assert state.headers() == {
        "RateLimit-Policy": '"minute";q=1000;w=60, "second";q=100;w=1',
        "RateLimit": '"minute";r=997;t=42, "second";r=99;t=1',
    }


def test_a_window_is_the_nth_since_the_epoch_and_its_counter_outlives_it():
    (window,) = windows("key", "3kTq9ZxW1bNa", [parse_rate("1000/m")], 1_800_000_017.5)
    assert window.reset == 60 - 1_800_000_017 % 60
    assert window.count.ttl == window.reset + 1
    assert window.count.name.endswith(f":60:{1_800_000_017 // 60}")


def test_counter_names_write_no_address():
    (window,) = windows("ip", "203.0.113.7", [parse_rate("600/m")], 1_800_000_000)
    assert "203.0.113.7" not in window.count.name
    (again,) = windows("ip", "203.0.113.7", [parse_rate("600/m")], 1_800_000_059)
    assert again.count.name == window.count.name
    (other,) = windows("ip", "203.0.113.8", [parse_rate("600/m")], 1_800_000_000)
    assert other.count.name != window.count.name
