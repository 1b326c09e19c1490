"""The interactive figures in a real browser, with the network off: controls change them, and
the number each one shows is the reference code's value at that setting.

Headless Chromium (driven by Playwright, with the system binary) loads each lesson page from a
local web server; every request to another host is aborted. For each interactive figure and
language, every control (a Vega-Lite param bound to an input) is moved to two settings and the
drawn SVG must differ; then the controls are set to one setting and the figure's readout (the
text mark named ``readout``) must show the value the reference implementation computes here (or,
for 18.01, the value of the recorded results).
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import re
from urllib.parse import urljoin

import pytest
import test_docs_browser as browser
import torch
from docs_pages import LANGS, ROOT

from minimodel.compare import mean_and_spread
from minimodel.positional.alibi import alibi_slopes
from minimodel.positional.cache_positions import chunk_positions
from minimodel.positional.relative_bias import relative_position_bucket
from minimodel.positional.rope import apply_rope, rope_frequencies
from minimodel.positional.scaling import SCALINGS
from minimodel.positional.sinusoidal import sinusoidal_pe

pytestmark = pytest.mark.browser
chromium = browser.chromium  # the fixtures of the other browser tests
server = browser.server


def _sinusoidal(p: int, d: int, base: float) -> float:
    table = sinusoidal_pe(p + 1, d, base)
    return float(table[p] @ table[0])


def _rope_logit(m: int, n: int, base: float) -> float:
    """q_m·k_n for the figure's query and key (seed 0, d = 16)."""
    q, k = torch.randn(2, 16, generator=torch.Generator().manual_seed(0))
    inv_freq = rope_frequencies(16, base)
    rotated_q = apply_rope(q[None, None, None], torch.tensor([m]), inv_freq)
    rotated_k = apply_rope(k[None, None, None], torch.tensor([n]), inv_freq)
    return float(rotated_q.flatten() @ rotated_k.flatten())


def _recorded_mean(encoding: str, length: int) -> float:
    """Mean loss of ``encoding`` at ``length`` in the recorded default comparison."""
    with (ROOT / "benchmarks" / "results" / "compare_default.csv").open(newline="") as handle:
        rows = [
            {**row, "eval_length": int(row["eval_length"]), "mean_loss": float(row["mean_loss"]),
             "mean_loss_se": float(row["mean_loss_se"])}
            for row in csv.DictReader(handle)
        ]  # fmt: skip
    return mean_and_spread(rows, encoding, length)[0]


def _ratio(method: str, factor: float, original: int, pair: int) -> float:
    scaled, _ = SCALINGS[method](32, 10000.0, factor=factor, original_max_len=original)
    return float(scaled.double()[pair] / rope_frequencies(32, 10000.0).double()[pair])


# figure id -> (page, setting, expected value, tolerance of the figure's rounding)
CASES = {
    "17-01-explorer": ("17/01-sinusoidal", {"p": 20, "d": 16, "base": 100.0},
                       _sinusoidal(20, 16, 100.0), 1.1e-3),
    "17-03-explorer": ("17/03-rope", {"m": 5, "n": 12, "base": 100.0},
                       _rope_logit(5, 12, 100.0), 1.1e-3),
    "17-04-explorer": ("17/04-alibi", {"heads": 6, "query": 4},
                       float(alibi_slopes(6)[0]), 1e-6),
    "17-05-explorer": ("17/05-relative-bias",
                       {"buckets": 16, "distance": 64, "mode": "causal", "r": -37},
                       float(relative_position_bucket(torch.tensor(-37), bidirectional=False,
                                                      num_buckets=16, max_distance=64)), 0),
    "18-01-explorer": ("18/01-extrapolation", {"length": 512, "highlight": "alibi"},
                       _recorded_mean("alibi", 512),
                       5e-5),
    "18-02-explorer": ("18/02-rope-scaling",
                       {"method": "ntk", "factor": 8.0, "original": 256, "pair": 5},
                       _ratio("ntk", 8.0, 256, 5), 1e-5),
    "18-03-explorer": ("18/03-kv-cache", {"cache": 5, "chunk": 3},
                       float(chunk_positions(5, 3)[0]), 0),
}  # fmt: skip


@pytest.fixture(scope="module")
def browser_context(chromium, server):
    """A Playwright context in the system Chromium that can reach only the local server."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("MINIMODEL_REQUIRE_BROWSER") == "1":
            pytest.fail("playwright is not installed", pytrace=False)
        pytest.skip("playwright is not installed")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
        )  # fmt: skip
        context = launched.new_context(viewport={"width": 1280, "height": 900})
        context.route(
            "**/*",
            lambda route: (
                route.continue_() if route.request.url.startswith(server) else route.abort()
            ),
        )
        yield context
        launched.close()


@pytest.fixture
def browser_page(browser_context):
    """A fresh page for one test."""
    page = browser_context.new_page()
    yield page
    page.close()


def _open(page, server: str, lang: str, path: str, figure_id: str):
    """Load a lesson page and wait until its figure is drawn; returns the figure's element."""
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(urljoin(server, f"{lang}/{path}.html"))
    container = page.locator(f"#fig-{figure_id} .course-vega")
    page.wait_for_function(
        "(el) => el.dataset.ready === 'true' || el.dataset.error",
        arg=container.element_handle(), timeout=30_000,
    )  # fmt: skip
    assert container.get_attribute("data-error") is None, container.get_attribute("data-error")
    assert not errors, errors
    spec = json.loads(page.locator(f"#spec-{figure_id}").text_content())
    return container, spec


def _controls(spec: dict) -> list[dict]:
    return [param for param in spec["params"] if "bind" in param]


def _set(container, spec: dict, name: str, value) -> None:
    """Move the control of param ``name`` to ``value`` as a reader would."""
    index = [param["name"] for param in _controls(spec)].index(name)
    control = container.locator(".vega-bind").nth(index)
    bind = _controls(spec)[index]["bind"]
    if bind["input"] == "range":
        control.locator("input").evaluate(
            "(input, value) => { input.value = value;"
            " input.dispatchEvent(new Event('input', {bubbles: true})); }",
            str(value),
        )
    elif bind["input"] == "select":
        control.locator("select").select_option(index=bind["options"].index(value))
    else:
        control.locator("input").nth(bind["options"].index(value)).check()


def _drawn(container) -> str:
    return container.locator("svg").first.inner_html()


def _settled(page, container, before: str) -> str:
    """The SVG once Vega has redrawn it (or ``before`` if nothing changed within 3 s)."""
    from playwright.sync_api import TimeoutError as Unchanged

    with contextlib.suppress(Unchanged):
        page.wait_for_function(
            "([el, before]) => el.querySelector('svg').innerHTML !== before",
            arg=[container.element_handle(), before], timeout=3000,
        )  # fmt: skip
    return _drawn(container)


def _two_settings(bind: dict) -> tuple:
    if bind["input"] == "range":
        return bind["min"], bind["max"]
    return bind["options"][0], bind["options"][-1]


def _readout(container) -> float:
    text = container.locator("g.role-mark[class*='readout'] text").first.text_content()
    number = re.findall(r"−?-?\d+(?:\.\d+)?", text.split("=", 1)[1])[0]
    return float(number.replace("−", "-"))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("figure_id", sorted(CASES))
def test_controls_change_the_figure_and_it_shows_the_reference_value(
    browser_page, server, lang, figure_id
):
    path, setting, expected, tolerance = CASES[figure_id]
    container, spec = _open(browser_page, server, lang, path, figure_id)
    controls = _controls(spec)
    assert len(controls) >= 2
    labels = container.locator(".vega-bind-name").all_text_contents()
    assert [label.strip() for label in labels] == [c["bind"]["name"].strip() for c in controls]
    for control in controls:
        first, second = _two_settings(control["bind"])
        before = _drawn(container)
        _set(container, spec, control["name"], first)
        at_first = _settled(browser_page, container, before)
        _set(container, spec, control["name"], second)
        at_second = _settled(browser_page, container, at_first)
        assert at_first != at_second, f"{figure_id}: moving {control['name']} changed nothing"
    for name, value in setting.items():
        before = _drawn(container)
        _set(container, spec, name, value)
        _settled(browser_page, container, before)
    shown = _readout(container)
    assert math.isclose(shown, expected, abs_tol=tolerance + 1e-9), (
        f"{figure_id} ({lang}) shows {shown} at {setting}; the reference gives {expected}"
    )


# The readout, a point of the charts, and the size every text is drawn at, measured in the page.
MEASURE = """(el) => {
  const svg = el.querySelector('svg');
  const scale = svg.getBoundingClientRect().width / svg.width.baseVal.value;
  const box = (node) => { const r = node.getBoundingClientRect();
                          return [r.left, r.top, r.right, r.bottom]; };
  const readout = el.querySelector("g.role-mark[class*='readout'] text");
  return {
    layout: el.dataset.layout,
    smallest: Math.min(...[...svg.querySelectorAll('text')].filter((t) => t.textContent.trim())
                          .map((t) => parseFloat(getComputedStyle(t).fontSize) * scale)),
    right: el.getBoundingClientRect().right, width: window.innerWidth,
    readout: readout ? box(readout) : null,
    points: [...svg.querySelectorAll('g.role-mark.mark-symbol path')].map(box),
  };
}"""
PHONE, DESKTOP = (390, 844), (1280, 900)


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_interactive_figures_read_at_phone_and_desktop_widths(browser_page, server, size):
    """At 390 x 844 the charts are drawn for the narrow column (side-by-side ones stacked), not
    shrunk: no text is drawn smaller than 10 px and no figure is wider than the screen; at
    1280 x 900 they keep their layout. No readout covers a point of its chart."""
    browser_page.set_viewport_size({"width": size[0], "height": size[1]})
    for figure_id, (path, *_) in sorted(CASES.items()):
        container, spec = _open(browser_page, server, "es", path, figure_id)
        found = container.evaluate(MEASURE)
        assert found["layout"] == ("narrow" if size == PHONE else "wide"), figure_id
        assert found["smallest"] >= 10, (figure_id, size, found["smallest"])
        assert found["right"] <= found["width"], (figure_id, size, found["right"])
        covered = [p for p in found["points"] if _overlap(found["readout"], p)]
        assert not covered, (figure_id, size, "the readout covers a point", found["readout"])


# Each display equation's glyphs, and whether the box that scrolls them (if any) shows them all.
EQUATIONS = """() => [...document.querySelectorAll('div.arithmatex')].map((el) => {
  const glyphs = el.querySelector('.katex-html').getBoundingClientRect();
  let box = null;
  for (let n = el.querySelector('.katex-display') || el; n && n !== document.body;
       n = n.parentElement) {
    if (/(auto|scroll)/.test(getComputedStyle(n).overflowX)) { box = n; break; }
  }
  const frame = box ? box.getBoundingClientRect() : null;
  return {tex: el.textContent.slice(0, 60), left: glyphs.left, right: glyphs.right,
          scrolls: !!box && box.scrollWidth >= Math.round(glyphs.width) - 1,
          boxLeft: frame ? frame.left : null, boxRight: frame ? frame.right : null};
})"""


def test_display_equations_fit_a_phone_or_scroll_inside_the_column(browser_page, server):
    """At 390 px, 19.01's parameter counts fit the screen, and an equation of any lesson wider
    than the column scrolls inside a box that is itself on the screen (Material's display math
    bled past the screen's edge)."""
    browser_page.set_viewport_size({"width": PHONE[0], "height": PHONE[1]})
    for lang in ("es", "en"):
        for path in ("19/01-mini-gpt", "17/03-rope", "18/02-rope-scaling", "19/02-experiments"):
            browser_page.goto(urljoin(server, f"{lang}/{path}.html"))
            browser_page.wait_for_function("document.querySelector('.katex-html') !== null")
            for equation in browser_page.evaluate(EQUATIONS):
                on_screen = equation["left"] >= 0 and equation["right"] <= PHONE[0]
                if path == "19/01-mini-gpt":
                    assert on_screen, (lang, path, equation)
                elif not on_screen:
                    assert equation["scrolls"] and equation["boxLeft"] >= 0 and \
                        equation["boxRight"] <= PHONE[0], (lang, path, equation)
