"""Grade a lab's notebook on a few submissions, once per lab: real kernels, real judges.

Each entry holds every course module (the reference, or with ``modules="stub"`` the released
stubs of the lab's own modules) and the lab notebook: the released notebook with some cells
filled (``solved(slug)``: the solutions; ``mistaken(slug, ...)``: the solutions with mistakes
written in), or untouched (``None``). The entries are graded by ``grader.trusted.grading.grade``
restricted to the lab, once per test run: the first xdist worker that needs them grades them
under a file lock and the others read the same records.

A :class:`LabNotebook` says what one lab's three submissions (solved, released, mistaken) must
show; :func:`grade_lab` grades them and the ``check_*`` functions check their records.
"""

from __future__ import annotations

import fcntl
import io
import json
from contextlib import redirect_stderr
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from grader_corpus import shared_dir

from grader.build.demo import fill_notebook
from grader.build.sync import released_text
from grader.trusted import gradebook, nbexec
from grader.trusted.grading import Options, grade
from grader.trusted.sandbox import Limits
from minimodel.course import encoding_modules, find_lab
from minimodel.implementation import REFERENCE_DIR, REPO_ROOT, STUBS_DIR

LIMITS = Limits(cell_timeout_s=60, notebook_wall_s=240)
NOT_RUN = {"not-recorded", "not-implemented", "exception"}  # what an unfilled cell is told


def solved(slug: str) -> dict[str, str]:
    """The solution code cells of the solved lab source, by grade_id."""
    source = nbexec.source_notebook(slug)
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
            if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"}


def mistaken(slug: str, mistakes: dict[str, list[tuple[str, str]]]) -> dict[str, str]:
    """The solution cells with each ``(old, new)`` of ``mistakes[grade_id]`` replaced (``old``
    there exactly once)."""
    cells = solved(slug)
    for grade_id, replacements in mistakes.items():
        for old, new in replacements:
            assert cells[grade_id].count(old) == 1, f"{old!r} is not once in {grade_id}"
            cells[grade_id] = cells[grade_id].replace(old, new)
    return cells


@dataclass
class NotebookEntry:
    name: str
    cells: dict[str, str] | None  # filled cells; None: the released notebook untouched
    modules: str = "reference"  # "stub": the lab's own modules are the released stubs

    def build(self, folder: Path, lab_id: str, slug: str) -> None:
        root = folder / self.name
        positional = root / "src" / "minimodel" / "positional"
        positional.mkdir(parents=True)
        stubbed = find_lab(lab_id).modules if self.modules == "stub" else ()
        for module in encoding_modules():
            text = (released_text(STUBS_DIR / f"{module}.py") if module in stubbed
                    else (REFERENCE_DIR / f"{module}.py").read_text(encoding="utf-8"))
            (positional / f"{module}.py").write_text(text, encoding="utf-8")
        (root / "labs").mkdir()
        notebook = nbformat.reads(released_text(REPO_ROOT / "labs" / f"{slug}.ipynb"),
                                  as_version=4)
        notebook = fill_notebook(notebook, self.cells or {})
        nbformat.write(notebook, root / "labs" / f"{slug}.ipynb")


def grade_notebooks(tmp_path_factory, lab_id: str, slug: str,
                    entries: list[NotebookEntry]) -> dict[str, dict]:
    """Grade ``entries`` on lab ``lab_id`` once per test run: records by entry name."""
    root = shared_dir(tmp_path_factory) / f"notebook-{lab_id}"
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root / "done.json"
        if not done.exists():
            folder, out = root / "submissions", root / "out"
            folder.mkdir(exist_ok=True)
            for entry in entries:
                entry.build(folder, lab_id, slug)
            log = io.StringIO()
            with redirect_stderr(log):
                summary = grade(folder, out, Options(workers=2, limits=LIMITS, progress=False,
                                                     labs=[lab_id]), stream=log)
            done.write_text(json.dumps({"failed": summary["failed"], "log": log.getvalue()}))
    info = json.loads(done.read_text())
    assert not info["failed"], info["log"]
    return {r["student_id"]: r for r in gradebook.load_records(root / "out")}


def notebook_items(record: dict, lab_id: str) -> dict[str, dict]:
    """The auto-graded notebook cells of the lab: key (``nb/<grade_id>``) -> verdict."""
    return {v["key"]: v for v in record["labs"][lab_id]["items"]
            if v["key"].startswith("nb/") and v.get("kind", "auto") == "auto"}


def codes(verdict: dict) -> set[str]:
    return {f["code"] for f in verdict.get("findings", [])}


def notebook_seconds(record: dict, lab_id: str) -> float:
    """How long the notebook ran in the sandboxed kernel."""
    return record["instructor"]["notebooks"][lab_id]["wall_s"]


def _auto_cells(slug: str) -> set[str]:
    graded = nbexec.graded_cells(nbexec.source_notebook(slug))
    return {f"nb/{gid}" for gid, info in graded.items() if info["kind"] == "auto"}


@dataclass(frozen=True)
class LabNotebook:
    """What a lab's notebook must show when graded solved, released untouched and mistaken.

    ``mistakes``: grade_id -> ``(old, new)`` replacements written into the solutions;
    ``diagnosed``: item key -> the finding code (or codes) the mistakes must bring, the item
    losing points (keeping some when listed in ``partial``); ``intact``: items the mistakes leave
    at full marks; ``unsaid_on_released``: item key -> a code the released notebook must not
    get (nothing ran, no mistake to blame); ``mentions``: ``(item key, code)`` -> a word the
    English text of that finding must hold; ``items`` / ``total``: when given, every item key of
    the solved lab (written answers too) and its auto-graded score and maximum.
    """

    id: str
    slug: str
    mistakes: dict[str, list[tuple[str, str]]]
    diagnosed: dict[str, str | frozenset[str]]
    partial: frozenset[str] = frozenset()
    intact: tuple[str, ...] = ()
    unsaid_on_released: dict[str, str] = field(default_factory=dict)
    mentions: dict[tuple[str, str], str] = field(default_factory=dict)
    items: frozenset[str] | None = None
    total: int | None = None


def grade_lab(tmp_path_factory, lab: LabNotebook) -> dict[str, dict]:
    """The lab's notebook graded solved, released untouched (with the released stubs) and with
    its mistakes written in: records by entry name."""
    return grade_notebooks(tmp_path_factory, lab.id, lab.slug, [
        NotebookEntry("solved", solved(lab.slug)),
        NotebookEntry("released", None, modules="stub"),
        NotebookEntry("mistakes", mistaken(lab.slug, lab.mistakes)),
    ])


def check_reference(record: dict, lab: LabNotebook) -> None:
    """Every auto-graded cell at full marks, nothing to report about the run."""
    items = notebook_items(record, lab.id)
    assert set(items) == _auto_cells(lab.slug)
    for key, verdict in items.items():
        assert verdict["score"] == verdict["points"], (key, verdict["findings"])
    graded = record["labs"][lab.id]
    assert graded["notebook"]["status"] == "finished"
    if lab.items is not None:
        assert {v["key"] for v in graded["items"]} == lab.items
    if lab.total is not None:  # auto-graded points; written answers by hand
        assert graded["auto"] == graded["auto_max"] == lab.total


def check_released(record: dict, lab: LabNotebook) -> None:
    """Every auto-graded cell at 0, each saying why (not implemented, never computed)."""
    items = notebook_items(record, lab.id)
    assert set(items) == _auto_cells(lab.slug)
    for key, verdict in items.items():
        assert verdict["score"] == 0, (key, verdict)
        assert codes(verdict) & NOT_RUN, (key, verdict["findings"])
    said = {f["code"] for f in record["labs"][lab.id]["notebook"]["findings"]}
    assert "nb-cell-error" in said
    for key, code in lab.unsaid_on_released.items():
        assert code not in codes(items[key]), (key, items[key]["findings"])


def check_mistakes(record: dict, lab: LabNotebook) -> None:
    """Each mistaken cell loses points with its diagnosis; the others keep full marks."""
    items = notebook_items(record, lab.id)
    for key, expected in lab.diagnosed.items():
        verdict = items[key]
        assert verdict["score"] < verdict["points"], (key, verdict)
        if key in lab.partial:  # the rest of the cell is right
            assert verdict["score"] > 0, (key, verdict)
        expected = {expected} if isinstance(expected, str) else set(expected)
        assert expected <= codes(verdict), (key, verdict["findings"])
    for (key, code), word in lab.mentions.items():
        assert word in next(f["en"] for f in items[key]["findings"] if f["code"] == code), key
    for key in lab.intact:
        assert items[key]["score"] == items[key]["points"], (key, items[key]["findings"])
