"""Both sites build with ``mkdocs build --strict`` and are self-contained (no network at all)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest
from docs_pages import LANGS, markdown_files

ROOT = Path(__file__).resolve().parents[2]

# Anything the browser would fetch by itself: scripts, stylesheets, images, fonts, frames.
FETCHED = re.compile(
    r"""<(?:script|img|iframe|source)\b[^>]*\ssrc=["'](?P<src>[^"']+)"""
    r"""|<link\b[^>]*\srel=["'](?:stylesheet|preload|icon|modulepreload)["'][^>]*\shref=["'](?P<href>[^"']+)""",
    re.IGNORECASE,
)


def test_both_languages_build_strict_and_fast(built_site):
    site = built_site["site"]
    for lang in LANGS:
        assert (site / lang / "index.html").is_file(), f"site/{lang}/index.html missing"
    # Figures included. A fresh clone builds in well under 3 minutes on 2 quiet cores; the bound
    # leaves room for the rest of the test run sharing those cores.
    assert built_site["seconds"] < 300, f"docs build took {built_site['seconds']:.0f} s"


def test_root_redirects_to_spanish(built_site):
    root = (built_site["site"] / "index.html").read_text(encoding="utf-8")
    assert 'http-equiv="refresh" content="0; url=es/index.html"' in root
    assert 'href="en/index.html"' in root


@pytest.mark.parametrize("lang", LANGS)
def test_every_page_is_built(built_site, lang):
    site = built_site["site"] / lang
    for page in markdown_files(lang):
        html = site / page.replace(".md", ".html")
        assert html.is_file(), f"{page} was not built into {html}"
        assert f'<html lang="{lang}"' in html.read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", LANGS)
def test_math_assets_are_served_with_the_site(built_site, lang):
    vendor = built_site["site"] / lang / "assets" / "vendor" / "katex"
    for name in ("katex.min.js", "katex.min.css", "LICENSE"):
        assert (vendor / name).is_file(), f"{name} missing: the KaTeX hook did not run"
    fonts = {font.name for font in (vendor / "fonts").iterdir()}
    for font in re.findall(r"url\(fonts/([^)]+)\)", (vendor / "katex.min.css").read_text()):
        assert font in fonts, f"katex.min.css needs fonts/{font}"
    assert (built_site["site"] / lang / "assets" / "javascripts" / "katex-init.js").is_file()


@pytest.mark.parametrize("lang", LANGS)
def test_nothing_is_fetched_from_the_network(built_site, lang):
    site = built_site["site"] / lang
    for html in site.rglob("*.html"):
        for match in FETCHED.finditer(html.read_text(encoding="utf-8")):
            url = match.group("src") or match.group("href")
            assert not re.match(r"(?:https?:)?//", url), f"{html.name} fetches {url}"
    for css in site.rglob("*.css"):
        for url in re.findall(r"url\(\s*['\"]?([^'\")]+)", css.read_text(encoding="utf-8")):
            assert not re.match(r"(?:https?:)?//", url), f"{css.name} fetches {url}"


@pytest.mark.parametrize("lang", LANGS)
def test_switcher_points_to_the_same_page(built_site, lang):
    other = "en" if lang == "es" else "es"
    html = (built_site["site"] / lang / "17" / "01-sinusoidal.html").read_text(encoding="utf-8")
    links = re.findall(r'<a href="([^"]+)" hreflang="(\w+)"[^>]*class="md-select__link', html)
    assert dict((code, href) for href, code in links) == {
        lang: f"../../{lang}/17/01-sinusoidal.html",
        other: f"../../{other}/17/01-sinusoidal.html",
    }


def test_strict_build_fails_on_a_warning(tmp_path):
    """``--strict`` only works if the warnings are logged: the build must not run ``--quiet``."""
    here = ROOT / "docs_site"
    spec = importlib.util.spec_from_file_location("docs_build", here / "build.py")
    docs_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(docs_build)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home {#home}\n\n[broken](missing-page.md)\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        f"INHERIT: {here / 'mkdocs.en.yml'}\n"
        f"docs_dir: {docs}\n"
        f"hooks: [{here / 'hooks' / 'vendor_assets.py'}]\n"
        f"theme:\n  custom_dir: {here / 'overrides'}\n"
    )
    command = docs_build.mkdocs_command(config, tmp_path / "site")
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0, "a broken link did not fail the strict build"
    assert "missing-page.md" in result.stdout + result.stderr
