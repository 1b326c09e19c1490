"""Build the course sites: Spanish into ``site/es``, English into ``site/en``, both ``--strict``.

Usage (from the repository root; ``make docs`` runs the first form)::

    .venv/bin/python docs_site/build.py                # both languages into site/
    .venv/bin/python docs_site/build.py --out build/x  # somewhere else
    .venv/bin/python docs_site/build.py --lang en      # one language only

``site/index.html`` sends visitors to the Spanish site. KaTeX and Vega are fetched once from the
npm registry and cached under ``build/npm/`` (see ``hooks/vendor_assets.py``); after that the build
needs no network. The lessons' figures are drawn first, both languages at once, from the reference
code and the recorded results (``figures/``, cached under ``build/docs-figures/``). Open
``site/index.html`` in a browser, or serve the folder:
``python -m http.server -d site``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LANGUAGES = ("es", "en")

sys.path.insert(0, str(HERE / "hooks"))
sys.path.insert(0, str(HERE))
from figures import render  # noqa: E402
from vendor_assets import NpmUnavailable, fetch_all  # noqa: E402

REDIRECT = """<!doctype html>
<html lang="es">
<head>
  <meta charset="utf-8">
  <title>Codificación posicional en Transformers · Positional encoding in Transformers</title>
  <meta http-equiv="refresh" content="0; url=es/index.html">
  <link rel="alternate" hreflang="es" href="es/index.html">
  <link rel="alternate" hreflang="en" href="en/index.html">
</head>
<body>
  <p><a href="es/index.html">Español</a> · <a href="en/index.html" lang="en">English</a></p>
</body>
</html>
"""


def mkdocs_command(config: Path, site_dir: Path) -> list[str]:
    """The ``mkdocs build`` command for one site.

    No ``--quiet``: it would hide the warnings, and ``--strict`` only fails on warnings it sees.
    """
    return [
        sys.executable, "-m", "mkdocs", "build", "--strict",
        "--config-file", str(config), "--site-dir", str(site_dir),
    ]  # fmt: skip


def _progress(line: str) -> None:
    print(line, flush=True)


def draw_figures(languages: tuple[str, ...]) -> None:
    """Draw (or find cached) every figure of each language, the languages in parallel."""
    start = time.perf_counter()
    print("Figuras de las lecciones / Lesson figures:", flush=True)
    with concurrent.futures.ProcessPoolExecutor(len(languages)) as pool:
        for done in [pool.submit(render.rendered, lang, _progress) for lang in languages]:
            done.result()
    found = render.figures().values()
    interactive = sum(figure.kind == "interactive" for figure in found)
    print(
        f"  {len(found) - interactive} estáticas y {interactive} interactivas por idioma / "
        f"{len(found) - interactive} static and {interactive} interactive per language "
        f"({time.perf_counter() - start:.1f} s)",
        flush=True,
    )


def build(out: Path, languages: tuple[str, ...] = LANGUAGES) -> None:
    """Draw the figures, build each language with ``mkdocs build --strict`` (in parallel) and
    write the redirect.

    Raises:
        SystemExit: a build failed; its log is printed first.
    """
    try:
        fetch_all()  # fetch once here, not in two builds at the same time
    except NpmUnavailable as error:
        raise SystemExit(str(error)) from None
    draw_figures(languages)
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    runs = {
        lang: subprocess.Popen(
            mkdocs_command(HERE / f"mkdocs.{lang}.yml", out / lang),
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for lang in languages
    }
    failed = []
    for lang, run in runs.items():
        log, _ = run.communicate()
        if run.returncode != 0:
            failed.append(lang)
            print(f"--- mkdocs build --strict ({lang}) failed:\n{log}", file=sys.stderr)
    if failed:
        raise SystemExit(f"docs build failed for: {', '.join(failed)}")
    (out / "index.html").write_text(REDIRECT, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="output folder (site/)")
    parser.add_argument("--lang", nargs="+", choices=LANGUAGES, default=list(LANGUAGES))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    build(args.out, tuple(args.lang))
    print(f"Built {', '.join(args.lang)} into {args.out} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
