"""The lessons' figures: referenced by id in both languages, drawn by the build, with alt text.

Pages mark a figure with ``<div class="course-figure" data-figure="ID"></div>`` (the same line in
both languages); ``docs_site/hooks/lesson_figures.py`` replaces it with the figure drawn by
``docs_site/figures/`` from the reference code or the recorded results. These tests check the
built sites, not the committed files: each referenced figure is in both sites, is what the
figure code draws now, is not a committed file, and has its alt text and caption in the page's
language; no page with its data weighs over 2 MB.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_pages import DOCS, LANGS, ROOT, markdown_files

sys.path.insert(0, str(ROOT / "docs_site"))
from figures import render  # noqa: E402
from figures.core import text_for  # noqa: E402

sys.path.insert(0, str(ROOT / "docs_site" / "hooks"))
from lesson_figures import caption_html  # noqa: E402

MARKER = re.compile(r'<div class="course-figure" data-figure="([a-z0-9-]+)"></div>')
LESSON = re.compile(r"^1[789]/\d\d-[a-z0-9-]+\.md$")
LESSONS = sorted(page for page in markdown_files("es") if LESSON.match(page))
FIGURES = render.figures()
MAX_PAGE_BYTES = 2 * 1024 * 1024
LOADED = re.compile(r"""<(?:script|img)\b[^>]*\ssrc="([^"]+)"|<link\b[^>]*\shref="([^"]+\.css)\"""")


def referenced(page: str, lang: str) -> list[str]:
    return MARKER.findall((DOCS[lang] / page).read_text(encoding="utf-8"))


def built(site: Path, lang: str, page: str) -> str:
    return (site / lang / page.replace(".md", ".html")).read_text(encoding="utf-8")


def figure_elements(page_html: str) -> dict[str, str]:
    """``id -> <figure>...</figure>`` of every lesson figure in a built page."""
    found = re.findall(
        r'(<figure class="course-figure[^"]*" id="fig-[^"]+" '
        r'data-figure="([a-z0-9-]+)">.*?</figure>)',
        page_html,
        flags=re.DOTALL,
    )
    return {figure_id: element for element, figure_id in found}


def test_every_lesson_has_figures_and_both_languages_use_the_same_ones():
    assert len(LESSONS) == 12
    for page in LESSONS:
        ids = {lang: referenced(page, lang) for lang in LANGS}
        assert ids["es"] == ids["en"], f"{page}: the languages reference different figures"
        assert len(ids["es"]) >= 2, f"{page} has {len(ids['es'])} figures"
        assert len(set(ids["es"])) == len(ids["es"]), f"{page} shows a figure twice"
        for figure_id in ids["es"]:
            assert figure_id in FIGURES, f"{page} references unknown figure {figure_id}"
            assert FIGURES[figure_id].lesson == page[:5].replace("/", "."), (page, figure_id)
    shown = [figure_id for page in LESSONS for figure_id in referenced(page, "es")]
    assert len(shown) >= 30
    assert sum(FIGURES[f].kind == "interactive" for f in shown) >= 6
    assert set(shown) == set(FIGURES), "a figure is defined but no page shows it"


@pytest.mark.parametrize("lang", LANGS)
def test_referenced_figures_are_in_the_built_site_with_alt_text_and_caption(built_site, lang):
    site = built_site["site"]
    for page in LESSONS:
        page_html = built(site, lang, page)
        assert not MARKER.search(page_html), f"{page}: a figure marker was left unexpanded"
        elements = figure_elements(page_html)
        assert list(elements) == referenced(page, lang), f"{page}: figures missing or reordered"
        for figure_id, element in elements.items():
            figure = FIGURES[figure_id]
            alt = html.escape(figure.alt(lang))
            assert len(figure.alt(lang)) > 40 and figure.alt("es") != figure.alt("en")
            assert caption_html(figure.title(lang)) in element, f"{figure_id}: caption"
            if figure.kind == "static":
                [src] = re.findall(r'<img src="([^"]+)"', element)
                assert f'alt="{alt}"' in element, f"{figure_id}: alt text"
                image = (site / lang / page).parent / src
                assert image.resolve().is_file(), f"{page}: {src} is not in the site"
                assert image.read_text(encoding="utf-8").lstrip().startswith("<?xml")
            else:
                assert f'role="img" aria-label="{alt}"' in element, f"{figure_id}: alt text"
                assert f'<script type="application/json" id="spec-{figure_id}">' in element


def test_captions_typeset_math_and_escape_the_rest():
    """A title's ``$...$`` is the lessons' inline math (KaTeX typesets it in the page): real
    subscripts, not ``q_m·k_n``; everything else is text."""
    assert caption_html("the logit $q_m \\cdot k_n$ & <b>") == (
        'the logit <span class="arithmatex">\\(q_m \\cdot k_n\\)</span> &amp; &lt;b&gt;'
    )
    for figure in FIGURES.values():
        for lang in LANGS:
            text = re.sub(r"\$[^$]+\$", "", figure.title(lang))
            assert not re.search(r"(?<!\w)[A-Za-zα-ω]'?_\w(?!\w)", text), f"{figure.id}: x_i"


def test_figures_are_drawn_by_the_build_not_committed(built_site):
    tracked = subprocess.run(
        ["git", "ls-files", "*.svg", "*.png", "*.json"], cwd=ROOT, capture_output=True,
        text=True, check=True,
    ).stdout.split()  # fmt: skip
    names = {Path(path).stem for path in tracked}
    assert not names & set(FIGURES), "a figure file is committed"
    # The site's SVG is exactly what the figure code draws now (one figure per lesson).
    first = {}
    for figure in FIGURES.values():
        if figure.kind == "static":
            first.setdefault(figure.lesson, figure)
    for lang in LANGS:
        for figure in first.values():
            drawn = Path(built_site["site"]) / lang / "assets" / "figures" / f"{figure.id}.svg"
            fresh = Path(built_site["site"]).parent / f"fresh-{lang}-{figure.id}.svg"
            render.draw_svg(figure, lang, fresh)
            assert fresh.read_bytes() == drawn.read_bytes(), f"{figure.id} ({lang}) is stale"
            fresh.unlink()


def test_static_figures_are_labelled_in_each_language(built_site):
    for figure in FIGURES.values():
        if figure.kind != "static":
            continue
        svgs = {
            lang: (built_site["site"] / lang / "assets" / "figures" / f"{figure.id}.svg").read_text(
                encoding="utf-8"
            )
            for lang in LANGS
        }
        assert svgs["es"] != svgs["en"], f"{figure.id}: the same image in both languages"
        assert "<text" in svgs["es"], f"{figure.id}: text must stay text (svg.fonttype none)"


def test_interactive_specs_have_controls_labelled_in_each_language():
    for figure in FIGURES.values():
        if figure.kind != "interactive":
            continue
        labels = {
            lang: [p["bind"]["name"] for p in figure.make(text_for(lang))["params"] if "bind" in p]
            for lang in LANGS
        }
        assert len(labels["es"]) >= 2, f"{figure.id}: fewer than two controls"
        assert labels["es"] != labels["en"], f"{figure.id}: controls not translated"


def page_weight(site: Path, page: Path) -> int:
    """Bytes of a built page and of the scripts, stylesheets and images it loads from the site.

    The page's figure data is inside it. Fonts are left out: the browser fetches only those a
    page uses.
    """
    text = page.read_text(encoding="utf-8")
    total = len(text.encode())
    for match in LOADED.finditer(text):
        url = (match.group(1) or match.group(2)).split("?")[0].split("#")[0]
        if re.match(r"(?:https?:)?//", url):
            continue
        target = (page.parent / url).resolve()
        if target.is_file() and site in target.parents:
            total += target.stat().st_size
    return total


@pytest.mark.parametrize("lang", LANGS)
def test_no_page_with_its_data_weighs_over_2_mb(built_site, lang):
    site = (built_site["site"] / lang).resolve()
    weights = {page: page_weight(site, page) for page in site.rglob("*.html")}
    heaviest = max(weights, key=weights.get)
    print(f"heaviest page ({lang}): {heaviest.relative_to(site)} {weights[heaviest] / 1e6:.2f} MB")
    assert weights[heaviest] <= MAX_PAGE_BYTES, (
        f"{heaviest.relative_to(site)} weighs {weights[heaviest] / 1e6:.2f} MB"
    )
    for page in weights:
        text = page.read_text(encoding="utf-8")
        uses_vega = "vendor/vega/vega.min.js" in text
        has_interactive = 'class="course-vega"' in text
        assert uses_vega == has_interactive, f"{page.name}: Vega loaded without need, or missing"


def test_an_unknown_figure_fails_the_build(tmp_path):
    here = ROOT / "docs_site"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(
        '# Home {#home}\n\n<div class="course-figure" data-figure="17-01-no-such-figure"></div>\n'
    )
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        f"INHERIT: {here / 'mkdocs.en.yml'}\n"
        f"docs_dir: {docs}\n"
        f"hooks: [{here / 'hooks' / 'vendor_assets.py'}, {here / 'hooks' / 'lesson_figures.py'}]\n"
        f"theme:\n  custom_dir: {here / 'overrides'}\n"
        "nav: [index.md]\n"
    )
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
               "-d", str(tmp_path / "site")]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode != 0
    assert "17-01-no-such-figure" in result.stdout + result.stderr
