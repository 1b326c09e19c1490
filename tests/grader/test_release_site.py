"""The lessons in the student repository: the release ships the built site, `make docs` there
opens it, and every figure, interactive figure and quiz of the lessons is in it; from the file
system (where the README sends readers) the search works, finds Spanish words typed without
accents, and the language switch keeps the place on the page.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from grader.build.release import SITE, figure_answers, figure_data, site_answers
from minimodel.implementation import REPO_ROOT

LANGS = ("es", "en")


def lessons(lang: str) -> dict[str, tuple[list[str], int]]:
    """``page.html`` -> (the figure ids it shows, its number of quizzes), from the sources."""
    found = {}
    for page in sorted((REPO_ROOT / f"docs_{lang}").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        name = str(page.relative_to(REPO_ROOT / f"docs_{lang}").with_suffix(".html"))
        found[name] = (re.findall(r'data-figure="([^"]+)"', text), text.count("<!-- quiz -->"))
    return found


def test_make_docs_opens_the_shipped_site(released, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(released, repo)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    run = subprocess.run(["make", "docs"], cwd=repo, env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    for lang in LANGS:
        assert f"file://{repo}/site/{lang}/index.html" in run.stdout
    assert "site/" not in (repo / ".gitignore").read_text().split()
    clean = (repo / "Makefile").read_text().split("\nclean:", 1)[1]
    assert " site" not in clean.split("\n\n")[0], "make clean would delete the lessons"


@pytest.mark.parametrize("lang", LANGS)
def test_every_figure_and_quiz_is_in_the_released_site(released, lang):
    site = released / SITE / lang
    assert (site / "search" / "search_index.js").is_file(), "search from the file system"
    specs = figure_data(released / SITE)
    for name, (figures, quizzes) in lessons(lang).items():
        page = (site / name).read_text(encoding="utf-8")
        for figure in figures:
            drawn = re.search(rf'id="fig-{figure}"[^>]*>\s*<img src="([^"]+\.svg)"', page)
            if drawn:
                assert (site / name).parent.joinpath(drawn.group(1)).resolve().is_file()
            else:
                assert f"{name}#{figure}" in {k.split("/", 1)[1] for k in specs
                                              if k.startswith(f"{lang}/")}, (name, figure)
        assert page.count('class="quiz"') == quizzes, name


def test_figure_data_that_shows_a_hidden_answer_is_refused(released, tmp_path):
    from grader.build.leaks import targets

    site = tmp_path / "site"
    shutil.copytree(released / SITE, site)
    assert site_answers(site) == []
    target = next(t for t in targets() if t.id == "17.01/pe/sinusoidal_pe")
    largest = max((output["array"] for outputs in target.outputs for output in outputs),
                  key=np.size)
    answer = np.asarray(largest, dtype=np.float64).ravel()[40:80]
    page = site / "en" / "17" / "01-sinusoidal.html"
    spec = json.dumps({"data": {"values": [{"p": i, "value": round(float(v), 4)}
                                           for i, v in enumerate(answer)]}})
    page.write_text(page.read_text(encoding="utf-8") + '<script type="application/json" '
                    f'id="spec-planted">{spec}</script>', encoding="utf-8")
    found = site_answers(site)
    assert found and "en/17/01-sinusoidal.html#planted" in found[0], found
    assert "17.01/pe/sinusoidal_pe" in found[0]


def test_no_figure_of_the_lessons_shows_a_graded_value():
    """Every interactive figure's data, as the lessons' figures make them, against the hidden
    cases' answers and the values the notebooks' graded cells record (18.02's explorer showed
    the notebook's ratios at the lab's s = 4, L0 = 128; 17.01's, its PE(0)·PE(k) at d = 64)."""
    sys.path.insert(0, str(REPO_ROOT / "docs_site"))
    from figures import render
    from figures.core import text_for

    specs = {figure.id: figure.make(text_for("en")) for figure in render.figures().values()
             if figure.kind == "interactive"}
    assert len(specs) >= 7 and figure_answers(specs) == []


def test_a_notebook_cell_s_graded_value_in_figure_data_is_refused():
    from grader.trusted.references import References

    [ratios] = References("18.02").cell("test-ratios")["ratios"]
    yarn = np.asarray(ratios["array"], dtype=np.float64)[3]  # the methods in the lab's order
    spec = {"data": {"values": [{"pair": i, "rho": round(float(v), 5)}
                                for i, v in enumerate(yarn)]}}
    found = figure_answers({"planted": spec})
    assert found == ["planted: shows the hidden answer 18.02/notebook:test-ratios/ratios"], found
    assert figure_answers({"constant": {"values": [0.03125] * 40}}) == []  # one number only


@pytest.mark.browser
def test_search_and_language_switch_from_the_file_system(released, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        if os.environ.get("MINIMODEL_REQUIRE_BROWSER") == "1":
            pytest.fail("headless Chromium not found", pytrace=False)
        pytest.skip("headless Chromium not found (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    site = released / SITE
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        outside = []
        page.on("request", lambda r: outside.append(r.url)
                if not r.url.startswith("file://") else None)
        page.goto(f"file://{site}/es/index.html")
        box = page.locator("input.md-search__input")
        box.wait_for(state="visible")
        for typed, wanted in (("interpolacion", "interpolación"), ("cache", "caché"),
                              ("rotate_half", "rotate"), ("equivocada", "l₀ equivocada")):
            box.click()
            box.fill("")
            box.press_sequentially(typed)
            first = page.locator(".md-search-result__item").first
            first.wait_for(state="visible", timeout=30_000)
            shown = page.locator(".md-search-result__list").inner_text().lower()
            assert wanted in shown and "\\(" not in shown, (typed, shown[:300])
            page.keyboard.press("Escape")
        page.goto(f"file://{site}/es/17/03-rope.html#conventions")
        link = page.locator('.md-select__link[hreflang="en"]')
        link.dispatch_event("click")
        page.wait_for_url(re.compile(r".*/en/17/03-rope\.html#conventions$"))
        browser.close()
    assert outside == []
