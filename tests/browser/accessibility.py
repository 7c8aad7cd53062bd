"""axe-core, run in the page: the accessibility rules every page a person uses must pass.

axe-core is pinned in the repository's package.json and installed from its lock file by
``./dev test`` (``npm ci``); its ``axe.min.js`` is evaluated in the page through the
DevTools protocol, which the pages' Content-Security-Policy does not apply to, so the
pages are checked exactly as they are served.
"""

import functools
import os
from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
# The WCAG 2.x A and AA rules and axe's best practices.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


@functools.cache
def axe_source() -> str:
    if not AXE.is_file():
        message = "the accessibility tests need axe-core: run `npm ci` at the repository root (./dev test does)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    return AXE.read_text()


def violations(page) -> list[str]:
    """What axe-core finds wrong with the page as it is now, one line per element."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(axe_source())
    found = page.evaluate(
        """async (tags) => {
            const options = {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]};
            const result = await axe.run(document, options);
            return result.violations.flatMap(v => v.nodes.map(
                n => `${v.id} (${v.impact}): ${v.help} at ${n.target.join(" ")}`));
        }""",
        TAGS,
    )
    return found


class Audit:
    """Visits pages at one viewport size, keeps axe-core's findings for each and a
    screenshot of it at phone size."""

    def __init__(self, page, size: dict, artifacts: Path):
        self.page = page
        self.size = size
        self.artifacts = artifacts
        self.findings: list[str] = []

    @property
    def is_phone(self) -> bool:
        return self.size["width"] < 600

    def check(self, name: str) -> None:
        """Run axe on the page now shown; at phone size also keep its screenshot and check
        that nothing makes the page scroll sideways."""
        self.page.wait_for_load_state("load")
        self.findings += [f"{name}: {line}" for line in violations(self.page)]
        width = self.page.evaluate("document.documentElement.scrollWidth")
        if width > self.size["width"]:
            self.findings.append(f"{name}: the page is {width} px wide at {self.size['width']} px")
        if self.is_phone:
            self.page.screenshot(path=self.artifacts / f"{name}-360x740.png", full_page=True)

    def visit(self, url: str, name: str) -> None:
        self.page.goto(url)
        self.check(name)

    def assert_clean(self) -> None:
        size = f"{self.size['width']}x{self.size['height']}"
        assert self.findings == [], f"accessibility problems at {size}:\n" + "\n".join(self.findings)
