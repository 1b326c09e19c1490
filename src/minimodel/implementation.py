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


def resolve(choice: str | None = None) -> Path:
    """Folder of the chosen implementation (default: ``$MINIMODEL_IMPL``, else ``src``)."""
    choice = choice if choice is not None else os.environ.get(ENV_VAR, "src")
    if choice in ("", "src"):
        return STUBS_DIR
    folder = REFERENCE_DIR if choice == "reference" else Path(choice).expanduser().resolve()
    if not folder.is_dir():
        raise FileNotFoundError(
            bilingual(
                f"No encuentro la implementación {choice!r} (carpeta {folder}). "
                "Usa 'src', 'reference' o la ruta de una carpeta con los archivos de positional/.",
                f"Cannot find implementation {choice!r} (folder {folder}). "
                "Use 'src', 'reference' or the path of a folder with the positional/ files.",
            )
        )
    return folder
