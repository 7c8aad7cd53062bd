"""Bar charts as plain geometry for a server-rendered SVG (no script, no CDN).

The template draws what these functions compute; every label goes through the
template's escaping, so merchant text cannot inject markup.
"""

from dataclasses import dataclass
from datetime import date

# Colour-blind-safe palette (Okabe-Ito), cycled per series.
PALETTE = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#000000"]

# On a phone the chart is drawn at about 0.43 of this size, and its labels are enlarged
# (static/dashboard/dashboard.css) to stay 11 CSS pixels: the margins leave them room.
WIDTH, HEIGHT = 760, 240
LEFT, RIGHT, TOP, BOTTOM = 84, 48, 16, 44


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    color: str
    title: str  # shown as the bar's tooltip


@dataclass(frozen=True)
class Tick:
    position: float
    label: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    legend: list[tuple[str, str]]  # (colour, label)
    baseline: float
    left: int
    right: int


def _nice_top(value: int) -> int:
    """The smallest 1, 2 or 5 × 10^n at or above ``value`` (at least 1)."""
    top = 1
    while True:
        for step in (1, 2, 5):
            if step * top >= value:
                return step * top
        top *= 10


def stacked_bars(days: list[date], series: list[tuple[str, list[int]]]) -> Chart:
    """One bar per day, stacked by series (label, counts per day)."""
    totals = [sum(values[index] for _, values in series) for index in range(len(days))]
    top = _nice_top(max(totals, default=0))
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_width / max(len(days), 1)
    bar_width = max(slot * 0.75, 1)
    baseline = TOP + plot_height
    bars = []
    for index, day in enumerate(days):
        y = baseline
        for number, (label, values) in enumerate(series):
            count = values[index]
            if not count:
                continue
            height = count / top * plot_height
            y -= height
            color = PALETTE[number % len(PALETTE)]
            bars.append(
                Bar(
                    LEFT + index * slot + (slot - bar_width) / 2,
                    y,
                    bar_width,
                    height,
                    color,
                    f"{day}: {label}: {count}",
                )
            )
    steps = (0, top // 2, top) if top > 1 else (0, top)
    y_ticks = [Tick(baseline - step / top * plot_height, f"{step:,}") for step in steps]
    every = max(1, len(days) // 6)
    x_ticks = [
        Tick(LEFT + index * slot + slot / 2, day.strftime("%d %b"))
        for index, day in enumerate(days)
        if (len(days) - 1 - index) % every == 0
    ]
    legend = [(PALETTE[number % len(PALETTE)], label) for number, (label, _) in enumerate(series)]
    return Chart(WIDTH, HEIGHT, bars, y_ticks, x_ticks, legend, baseline, LEFT, WIDTH - RIGHT)
