"""The lesson pages in a real browser: math rendered with the network off, language switcher.

Headless Chromium loads the built site from a local web server, with every host name except
localhost made unresolvable, and dumps the DOM after the scripts have run. It also saves a
screenshot of each page to ``build/screenshots/``.

Without Chromium the tests are skipped, unless ``MINIMODEL_REQUIRE_BROWSER=1`` (set by CI, which
installs it), in which case they fail.
"""

from __future__ import annotations

import functools
import html
import http.server
import os
import re
import shutil
import subprocess
import threading
import urllib.request
from pathlib import Path
from urllib.parse import urljoin

import pytest
from docs_pages import LANGS, LESSON, pages

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "build" / "screenshots"
LESSON_HTML = LESSON.replace(".md", ".html")

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def chromium() -> str:
    """Path of the Chromium binary; skips (or fails, when required) before anything is built."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    reason = "headless Chromium not found (apt-get install chromium)"
    if os.environ.get("MINIMODEL_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason}; MINIMODEL_REQUIRE_BROWSER=1 requires it", pytrace=False)
    pytest.skip(reason)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def server(chromium, built_site):
    """``http://127.0.0.1:<port>/`` serving the built site, for this module."""
    handler = functools.partial(_QuietHandler, directory=str(built_site["site"]))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def run_chromium(chromium: str, url: str, profile: Path, *args: str) -> str:
    """Load ``url`` in headless Chromium with no network but localhost; return its stdout."""
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=4000",
        *args,
        url,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)
    assert result.returncode == 0, f"chromium failed on {url}:\n{result.stderr[-2000:]}"
    return result.stdout


def visible_text(dom: str) -> str:
    """Text a reader sees: no scripts, styles, or KaTeX's hidden MathML copy of each formula."""
    for tag in ("script", "style", "annotation", "math"):
        dom = re.sub(rf"<{tag}\b.*?</{tag}>", " ", dom, flags=re.DOTALL | re.IGNORECASE)
    return html.unescape(re.sub(r"<[^>]+>", " ", dom))


def check_rendered(dom: str, lang: str) -> None:
    formulas = len(pages(LESSON)[lang].math)
    rendered = len(re.findall(r'class="katex"', dom))
    containers = len(re.findall(r'class="arithmatex"', dom))
    assert containers >= formulas, f"{containers} math elements for {formulas} formulas"
    assert rendered == containers, f"KaTeX rendered {rendered} of {containers} formulas"
    assert "katex-error" not in dom, "KaTeX could not parse a formula"
    text = visible_text(dom)
    for raw in ("\\(", "\\)", "\\[", "\\]", "$$"):
        where = text.find(raw)
        assert where < 0, (
            f"raw math left in the page: ...{text[max(0, where - 60) : where + 60]}..."
        )


def switcher_links(dom: str) -> dict[str, str]:
    links = re.findall(r"<a\b[^>]*>", dom)
    found = {}
    for tag in links:
        if "md-select__link" in tag:
            href = re.search(r'href="([^"]+)"', tag).group(1)
            found[re.search(r'hreflang="(\w+)"', tag).group(1)] = html.unescape(href)
    return found


@pytest.mark.parametrize("lang", LANGS)
def test_lesson_renders_and_switches_language_over_http(chromium, server, lang, tmp_path):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / f"17-01-sinusoidal-{lang}.png"
    shot.unlink(missing_ok=True)
    url = urljoin(server, f"{lang}/{LESSON_HTML}")
    dom = run_chromium(
        chromium,
        url,
        tmp_path / "profile",
        "--dump-dom",
        f"--screenshot={shot}",
        "--window-size=1280,2200",
        "--hide-scrollbars",
    )
    check_rendered(dom, lang)
    assert re.search(rf'<html[^>]*\slang="{lang}"', dom)
    assert shot.is_file() and shot.stat().st_size > 20_000, "screenshot missing or empty"

    other = "en" if lang == "es" else "es"
    target = urljoin(url, switcher_links(dom)[other])
    assert target == urljoin(server, f"{other}/{LESSON_HTML}"), "switcher leaves the page"
    with urllib.request.urlopen(target, timeout=10) as response:
        assert response.status == 200
        assert f'<html lang="{other}"' in response.read().decode("utf-8")


def test_lesson_renders_from_the_file_system(chromium, built_site, tmp_path):
    page = built_site["site"] / "es" / LESSON_HTML
    dom = run_chromium(chromium, page.as_uri(), tmp_path / "profile", "--dump-dom")
    check_rendered(dom, "es")
    target = (page.parent / switcher_links(dom)["en"]).resolve()
    assert target == (built_site["site"] / "en" / LESSON_HTML).resolve()
    assert target.is_file()
