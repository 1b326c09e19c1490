"""Students' copies of the reference with a mistake written in, and what the self-check says."""

from __future__ import annotations

from pathlib import Path

import pytest
import warm_selfcheck

from grader.build.sync import released_text
from minimodel.course import find_lab
from minimodel.implementation import REFERENCE_DIR, STUBS_DIR
from minimodel.selfcheck import runner

# seconds per check: generous, so that a loaded machine does not turn "todo" into "timeout"
TIMEOUT = 120


def released_stubs(tmp_path: Path) -> Path:
    """The stubs as students receive them, in a folder of their own: never the files in
    ``src/minimodel/positional/``, where a self-study reader's own work may be."""
    folder = tmp_path / "released-stubs"
    folder.mkdir()
    for source in REFERENCE_DIR.glob("*.py"):
        (folder / source.name).write_text(released_text(STUBS_DIR / source.name))
    return folder


def statuses(results) -> dict[str, str]:
    return {result.check.name: result.status for result in results}


def student_copy(tmp_path: Path, module: str, *edits: tuple[str, str]) -> Path:
    """Every reference file, as a student's folder, with each ``(old, new)`` edit in ``module``."""
    folder = tmp_path / "student"
    folder.mkdir()
    for source in REFERENCE_DIR.glob("*.py"):
        (folder / source.name).write_text(source.read_text())
    text = (folder / f"{module}.py").read_text()
    for old, new in edits:
        assert old in text, f"the reference no longer contains {old!r}"
        text = text.replace(old, new, 1)
    (folder / f"{module}.py").write_text(text)
    return folder


def checked(lab_id: str, folder: Path, timeout: float = TIMEOUT) -> list[runner.Result]:
    """``minimodel check LAB`` on the implementation in ``folder``, its child forked from a warm
    process (``warm_selfcheck``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "spawn", warm_selfcheck.spawn)
        return runner.run_checks(find_lab(lab_id), str(folder), timeout=timeout)


def self_check(lab_id: str, folder: Path) -> dict:
    """Check name -> result of ``minimodel check LAB`` on the implementation in ``folder``."""
    return {r.check.name: r for r in checked(lab_id, folder)}


def diagnose(tmp_path: Path, lab_id: str, module: str, *edits: tuple[str, str]) -> dict:
    """The self-check of ``lab_id`` on a copy of the reference with ``edits`` in ``module``."""
    return self_check(lab_id, student_copy(tmp_path, module, *edits))
