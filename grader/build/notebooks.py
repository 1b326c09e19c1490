"""Generate the student notebooks in ``labs/`` from the lab sources in ``solutions/labs/*/``.

A lab source is a Jupytext percent file (``solutions/labs/<slug>/notebook.py``) whose cells
carry short nbgrader metadata (``grade_id`` plus ``solution``/``grade``/``locked``/``points``).
``grader.trusted.nbexec.read_source`` completes that metadata and gives every cell a stable id
(the grader reads the sources the same way); this module runs nbgrader's ``generate_assignment``
in a scratch course folder: solutions and hidden tests are removed, outputs stripped, checksums
added. The result is written with sorted keys so it diffs cleanly.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import tempfile
from pathlib import Path

import nbformat

from grader.trusted import nbexec
from minimodel import generated
from minimodel.course import LABS
from minimodel.implementation import REPO_ROOT

CODE_STUB = "# TU CÓDIGO AQUÍ / YOUR CODE HERE\nraise NotImplementedError()"
TEXT_STUB = "*[es] Escribe aquí tu respuesta. · [en] Write your answer here.*"
CACHE_DIR = REPO_ROOT / "build" / "cache" / "notebooks"


def _clean(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop everything that is not content: outputs, counts, volatile metadata. A locked cell
    (the lab's text, its given code and its tests) is read-only in JupyterLab, which honours
    ``editable`` and ``deletable``; the grader checks it anyway, from nbgrader's checksums."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata = {
            key: cell.metadata[key] for key in ("nbgrader", "tags") if key in cell.metadata
        }
        if cell.metadata.get("nbgrader", {}).get("locked"):
            cell.metadata.update(editable=False, deletable=False)
    return notebook


def release_text(source: Path) -> str:
    """The student notebook (as text) that nbgrader releases for one lab source.

    nbgrader takes a few seconds per notebook, so each result is kept in ``build/cache/`` under a
    key made of everything it depends on (the source, this module and the one that reads sources,
    the fingerprint rules and nbgrader's version): ``make sync``, the drift check and a release
    reuse it.
    """
    import nbgrader

    key = hashlib.sha256(b"\0".join([
        source.read_bytes(), Path(__file__).read_bytes(), Path(nbexec.__file__).read_bytes(),
        Path(generated.__file__).read_bytes(),
        nbgrader.__version__.encode()])).hexdigest()[:20]
    cached = CACHE_DIR / f"{source.parent.name}-{key}.ipynb"
    if cached.exists():
        return cached.read_text(encoding="utf-8")
    text = _release(source)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    partial = cached.with_name(f"{cached.name}.{os.getpid()}")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, cached)
    return text


def _release(source: Path) -> str:
    slug = source.parent.name
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / "source" / slug).mkdir(parents=True)
        nbformat.write(nbexec.read_source(source), root / "source" / slug / f"{slug}.ipynb")
        _run_nbgrader(root, slug)
        released = nbformat.read(root / "release" / slug / f"{slug}.ipynb", as_version=4)
    released = _clean(released)
    released.metadata["minimodel"] = {"generated": generated.BLANK}
    return generated.stamped(nbformat.writes(released, version=4) + "\n", ".ipynb")


def nbgrader_on_path() -> None:
    """nbgrader runs the `alembic` executable next to this Python: make it findable."""
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


def nbgrader_api(root: Path, **course_directory: str):
    """nbgrader's API for the course folder ``root`` (``course_directory``: more of its
    ``CourseDirectory`` settings), clearing solutions to this course's stubs."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    nbgrader_on_path()
    config = Config()
    config.CourseDirectory.root = str(root)
    for key, value in course_directory.items():
        setattr(config.CourseDirectory, key, value)
    config.GenerateAssignment.create_assignment = True
    config.ClearSolutions.code_stub = {"python": CODE_STUB}
    config.ClearSolutions.text_stub = TEXT_STUB
    api = NbGraderAPI(config=config)
    api.log.setLevel(logging.ERROR)
    return api


def _run_nbgrader(root: Path, slug: str) -> None:
    api = nbgrader_api(root, db_url=f"sqlite:///{root / 'gradebook.db'}")
    result = api.generate_assignment(slug, force=True)
    if not result["success"]:
        raise RuntimeError(f"nbgrader generate_assignment failed for {slug}:\n{result['log']}")


def generate(root: Path) -> dict[Path, str]:
    """Map each student notebook ``labs/<slug>.ipynb`` of the repository at ``root`` to the text
    ``make sync`` writes there.

    A lab whose source is not written yet is left out here.
    """
    return {root / "labs" / f"{lab.slug}.ipynb": release_text(root / lab.source)
            for lab in LABS if (root / lab.source).exists()}
