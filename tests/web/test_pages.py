"""What every page owes its readers, checked without a browser: the colours of the style sheet
meet WCAG AA contrast (4.5:1 for text), and the vendored libraries are the versions the docs
name, with their licences."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from assay.web.app import STATIC

CSS = (STATIC / "app.css").read_text()
COLOURS = dict(re.findall(r"--([a-z]+):\s*(#[0-9a-f]{6});", CSS))


def luminance(colour: str) -> float:
    """WCAG 2's relative luminance of an sRGB colour."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_contrast_is_computed_as_wcag_says() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the classic near miss


@pytest.mark.parametrize("name", ["ink", "muted", "link", "passed", "failed", "config", "system", "skipped"])
def test_text_colours_read_on_white_and_on_the_wash(name: str) -> None:
    assert contrast(COLOURS[name], COLOURS["paper"]) >= 4.5
    assert contrast(COLOURS[name], COLOURS["wash"]) >= 4.5


@pytest.mark.parametrize("name", ["passed", "failed", "system", "link"])
def test_white_marks_read_on_filled_cells_and_buttons(name: str) -> None:
    assert contrast("#ffffff", COLOURS[name]) >= 4.5


def test_the_vendored_libraries_are_the_versions_named_with_their_licences() -> None:
    vendor = STATIC / "vendor"
    assert sorted(p.name for p in vendor.iterdir()) == [
        "LICENSE.htmx",
        "LICENSE.uPlot",
        "htmx-2.0.11.min.js",
        "uPlot-1.6.32.iife.min.js",
        "uPlot-1.6.32.min.css",
    ]
    docs = (Path(__file__).resolve().parents[2] / "docs" / "web.md").read_text()
    assert (
        "htmx](https://htmx.org) 2.0.11" in docs
        and "uPlot](https://github.com/leeoniya/uPlot) 1.6.32" in docs
    )
    base = (STATIC.parent / "templates" / "base.html").read_text()
    assert {f"/static/vendor/{n}" for n in ("htmx-2.0.11.min.js", "uPlot-1.6.32.iife.min.js")} <= set(
        re.findall(r'src="([^"]+)"', base)
    )
