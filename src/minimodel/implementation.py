"""Which implementation of ``minimodel.positional`` runs: the overlay.

An implementation is a folder holding the encoding files (``sinusoidal.py``, ``rope.py``, ...):

- ``src``: the stubs in ``src/minimodel/positional/`` that the student completes (the default);
- ``reference``: the reference solutions, in the instructors' repository only (tests, demo);
- any other value: a path to a folder, e.g. one student's submission.

Choose it with the environment variable ``MINIMODEL_IMPL`` before ``minimodel.positional`` is
imported; tests, notebooks, the self-check and the grader all go through this one switch.
"""

from __future__ import annotations

import os
from pathlib import Path

from minimodel.messages import bilingual

ENV_VAR = "MINIMODEL_IMPL"
PACKAGE_DIR = Path(__file__).resolve().parent
STUBS_DIR = PACKAGE_DIR / "positional"
REPO_ROOT = PACKAGE_DIR.parent.parent
REFERENCE_DIR = REPO_ROOT / "solutions" / "positional"
CATALOGUE_DIR = REPO_ROOT / "solutions" / "mistakes"  # the classic mistakes of each module


def choices() -> str:
    """The implementations this repository has, for help texts: ``src``, ``reference`` where
    the reference solutions are (the instructors' repository), a folder."""
    if REFERENCE_DIR.is_dir():
        return "src (default) | reference | <folder>"
    return "src (default) | <folder>"


def resolve(choice: str | None = None) -> Path:
    """Folder of the chosen implementation (default: ``$MINIMODEL_IMPL``, else ``src``)."""
    choice = choice if choice is not None else os.environ.get(ENV_VAR, "src")
    if choice in ("", "src"):
        return STUBS_DIR
    folder = REFERENCE_DIR if choice == "reference" else Path(choice).expanduser().resolve()
    if not folder.is_dir():
        named_es, named_en = ("'src', 'reference' o", "'src', 'reference' or") \
            if REFERENCE_DIR.is_dir() else ("'src' o", "'src' or")
        raise FileNotFoundError(
            bilingual(
                f"No encuentro la implementación {choice!r} (carpeta {folder}). "
                f"Usa {named_es} la ruta de una carpeta con los archivos de positional/.",
                f"Cannot find implementation {choice!r} (folder {folder}). "
                f"Use {named_en} the path of a folder with the positional/ files.",
            )
        )
    return folder
