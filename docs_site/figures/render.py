"""Render every lesson figure for one language: an SVG per static figure, a spec per interactive.

The output of a language is a folder with ``<id>.svg`` files and ``interactive.json`` (``id ->
Vega-Lite spec``). It is cached under ``build/docs-figures/<key>/<lang>/``, where the key is a
hash of everything a figure depends on (this package, the reference code, the library, the
recorded results, Matplotlib's version): change any of them and the figures are drawn again
(and the older drawings are removed).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from figures.core import LANGS, REGISTRY, Figure, text_for
from figures.exclusive import locked

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = ROOT / "build" / "docs-figures"
SOURCES = (HERE, ROOT / "solutions" / "positional", ROOT / "src" / "minimodel",
           ROOT / "benchmarks" / "results")  # fmt: skip
SPECS = "interactive.json"


def figures() -> dict[str, Figure]:
    """Every figure of every lesson, in lesson order (imports the ``lesson_*`` modules)."""
    for module in sorted(HERE.glob("lesson_*.py")):
        importlib.import_module(f"figures.{module.stem}")
    return dict(sorted(REGISTRY.items()))


def cache_key() -> str:
    """Hash of the figures' sources and inputs."""
    import matplotlib

    digest = hashlib.sha256(matplotlib.__version__.encode())
    for folder in SOURCES:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(ROOT).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def draw_svg(figure: Figure, lang: str, path: Path) -> None:
    """Draw one static figure in ``lang`` as an SVG at ``path`` (the same bytes every time)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure as MplFigure

    style = {"svg.fonttype": "none", "svg.hashsalt": figure.id, "font.size": 9.5,
             "axes.spines.top": False, "axes.spines.right": False}  # fmt: skip
    with matplotlib.rc_context(style):
        fig = MplFigure(figsize=figure.size, layout="constrained")
        figure.make(fig, text_for(lang))
        fig.savefig(path, format="svg", metadata={"Date": None})


def render(lang: str, out: Path, progress: Callable[[str], None] = print) -> None:
    """Draw every figure of ``lang`` into ``out`` (created), one progress line per lesson."""
    out.mkdir(parents=True, exist_ok=True)
    specs, lessons = {}, {}
    for figure in figures().values():
        lessons.setdefault(figure.lesson, []).append(figure)
    for lesson, group in lessons.items():
        start = time.perf_counter()
        for figure in group:
            if figure.kind == "static":
                draw_svg(figure, lang, out / f"{figure.id}.svg")
            else:
                specs[figure.id] = figure.make(text_for(lang))
        progress(f"  [{lang}] {lesson}: {len(group)} figuras / figures "
                 f"({time.perf_counter() - start:.1f} s)")  # fmt: skip
    (out / SPECS).write_text(json.dumps(specs, separators=(",", ":")), encoding="utf-8")




def rendered(lang: str, progress: Callable[[str], None] = print) -> Path:
    """Folder with the figures of ``lang``, drawing them first unless they are cached."""
    if lang not in LANGS:
        raise ValueError(f"language must be one of {LANGS}, not {lang!r}")
    folder = CACHE / cache_key() / lang
    with locked(CACHE / f"{lang}.lock"):
        if (folder / SPECS).is_file():
            progress(f"  [{lang}] figuras ya dibujadas / figures already drawn: {folder}")
            return folder
        folder.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
            render(lang, Path(tmp) / lang, progress)
            shutil.rmtree(folder, ignore_errors=True)
            (Path(tmp) / lang).rename(folder)
    for stale in CACHE.iterdir():  # figures of sources that have changed since
        if stale.is_dir() and stale != folder.parent:
            shutil.rmtree(stale, ignore_errors=True)
    return folder
