"""Small helpers the lab notebooks share: problem size and where figures go.

- ``MINIMODEL_LAB_SIZE=test`` shrinks every lab (fewer positions, shorter training) so the test
  run executes all of them quickly; the default ``full`` is the size students run.
- ``MINIMODEL_FIGURES=<folder>`` makes ``save_figure`` also write each figure there as PNG
  (``make demo`` collects them in ``build/figures/``).
- ``reload_edited_modules()``: a student's edits to ``src/minimodel/positional/`` reach the
  notebook at the next cell, without restarting the kernel. ``MINIMODEL_AUTORELOAD=0`` turns it
  off where a notebook runs once from top to bottom and nobody edits (``make demo``, the grader):
  checking every loaded module before each cell costs about 15 ms a cell.
"""

from __future__ import annotations

import os
from pathlib import Path

SIZES = ("full", "test")


def lab_size() -> str:
    """``"full"`` (default) or ``"test"``, from ``MINIMODEL_LAB_SIZE``."""
    size = os.environ.get("MINIMODEL_LAB_SIZE", "full")
    return size if size in SIZES else "full"


def sized(full: int, test: int) -> int:
    """``full`` at the student's size, ``test`` in the test run."""
    return test if lab_size() == "test" else full


def save_figure(fig, name: str) -> Path | None:
    """Save ``fig`` as ``<name>.png`` into ``$MINIMODEL_FIGURES`` when that is set."""
    folder = os.environ.get("MINIMODEL_FIGURES")
    if not folder:
        return None
    path = Path(folder) / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    return path


def reload_edited_modules() -> None:
    """Turn on IPython's ``autoreload``: edited modules are reloaded before each cell runs.

    Functions imported with ``from ... import`` are updated too. Does nothing outside IPython,
    e.g. when the lab runs as a plain script. Returns nothing, so that the setup cell that ends
    with it shows no value. Does nothing either with ``MINIMODEL_AUTORELOAD=0``.
    """
    if os.environ.get("MINIMODEL_AUTORELOAD") == "0":
        return
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    if "autoreload" not in shell.extension_manager.loaded:
        shell.extension_manager.load_extension("autoreload")
    shell.run_line_magic("autoreload", "2")
