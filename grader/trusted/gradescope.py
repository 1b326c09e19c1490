"""One submission graded inside Gradescope's autograder container; ``results.json`` written.

Gradescope's layout (https://gradescope-autograders.readthedocs.io/en/latest/specs/), under
``ROOT`` = ``/autograder`` (``$MINIMODEL_AUTOGRADER_ROOT`` elsewhere, e.g. in the tests):

- ``ROOT/source``: the bundle that ``minimodel-grader gradescope`` built
  (``grader/build/gradescope.py``), its settings in ``gradescope.json``, its Python in ``.venv``;
- ``ROOT/submission``: what the student handed in (the ``make submit`` archive, or the files);
- ``ROOT/results/results.json``: written here, once, by this module (``run_autograder`` runs
  ``python -m grader.trusted.gradescope`` as root).

Gradescope's containers may refuse namespaces. The sandbox then takes its fallback (see
``Capabilities.mode``): student code runs as a user of its own, under the limits, and every
process of that user is killed after each run. Before grading, :func:`lock_down` takes away that
user's access to everything under ``ROOT`` but the way to the Python environment: the bundle
(hidden checks and reference outputs), the submission and the results folder. The mode used is
printed (Gradescope shows ``stdout`` to instructors) and kept in ``extra_data``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from grader.trusted import feedback, gradebook
from grader.trusted.grading import Options, grade
from grader.trusted.sandbox import Limits, probe_capabilities, python_roots
from grader.trusted.status import Item, flag_reason, is_flagged
from minimodel.messages import bilingual

ROOT_ENV = "MINIMODEL_AUTOGRADER_ROOT"
SETTINGS = "gradescope.json"
STUDENT = "submission"
TIMEOUT_S = 600  # Gradescope's default time-out for one submission (its settings go to 40 min)
MARGIN_S = 90  # of the time-out, left for start-up, judging, feedback and results.json
MIN_TIMEOUT_S = 240  # below this, a full submission would not fit with its margin
MEMORY_MB = 768  # Gradescope's default container memory
PEAK_PSS_MB = 640  # the process tree's peak for a correct full submission (measured; README)


def limits_within(timeout_s: float) -> Limits:
    """The limits of a run that must end within Gradescope's ``timeout_s``: the wall-clock time
    a student's runs may hold the grader leaves :data:`MARGIN_S`, and the CPU cap, which decides
    where a long submission is cut (the same item every run), is half of that, so that it binds
    first even where the container's CPU is slower than its clock."""
    if timeout_s < MIN_TIMEOUT_S:
        raise ValueError(bilingual(
            f"Un tiempo límite de {timeout_s:g} s no basta: el corrector necesita al menos "
            f"{MIN_TIMEOUT_S} s por entrega en Gradescope.",
            f"A time-out of {timeout_s:g} s is too short: the grader needs at least "
            f"{MIN_TIMEOUT_S} s per submission on Gradescope."))
    wall = float(timeout_s) - MARGIN_S
    return replace(Limits(), student_wall_s=wall,
                   student_cpu_s=min(Limits().student_cpu_s, round(wall / 2)))


def automatic_part(record: dict) -> dict:
    """``record`` as Gradescope shows it: only the automatic items and totals (written answers
    are the assignment's own questions there, graded by hand in Gradescope), so that the
    feedback's maximum is ``results.json``'s."""
    shown = json.loads(json.dumps(record))
    for lab in shown.get("labs", {}).values():
        lab["items"] = [v for v in lab.get("items", []) if v.get("kind") != "manual"]
    gradebook.recompute_totals(shown)
    return shown


def autograder_root() -> Path:
    return Path(os.environ.get(ROOT_ENV) or "/autograder")


def lock_down(root: Path) -> None:
    """Leave ``root``'s folders to root alone (no read, write or listing by anyone else), except
    the path to the Python environment that runs the sandbox, which stays readable."""
    python = [Path(p) for p in python_roots()]

    def needed(path: Path) -> bool:
        real = path.resolve()
        return any(p == real or p.is_relative_to(real) for p in python)

    for folder in (root, root / "source"):
        os.chmod(folder, 0o711)  # others may pass through to the environment, not list
    for entry in [*(root / "source").iterdir(), root / "submission", root / "results"]:
        info = entry.lstat()
        if stat.S_ISLNK(info.st_mode) or needed(entry):
            continue  # a link's own mode means nothing; its target is checked where it is
        os.chmod(entry, stat.S_IMODE(info.st_mode) & 0o700)


def results(record: dict, mode: tuple[str, str], seconds: float) -> dict:
    """Gradescope's ``results.json`` for one graded ``record``: one test per automatic item,
    the feedback in both languages as the submission's output, 0 for a flagged submission."""
    record = automatic_part(record)
    flagged = is_flagged(record["status"])
    tests = []
    for lab_id, lab in record["labs"].items():
        for verdict in lab["items"]:
            es, en = (feedback.item_texts(record, verdict, lang) for lang in ("es", "en"))
            tests.append({
                "name": f"{lab_id} · {verdict['title_es']} / {verdict['title_en']}",
                "score": 0.0 if flagged else float(verdict.get("score") or 0.0),
                "max_score": float(verdict["points"]),
                "status": Item.PASSED if verdict.get("status") == Item.PASSED else Item.FAILED,
                "output": bilingual("\n".join(es), "\n".join(en)) if es or en else "",
                "visibility": "visible"})
    output = [feedback.markdown(record, "es"), feedback.markdown(record, "en")]
    if flagged:
        reason = flag_reason(record["status"])
        output.insert(0, bilingual(f"**Entrega marcada: puntuación 0.** Motivo: {reason}",
                                   f"**Submission flagged: score 0.** Reason: {reason}"))
    return {"score": 0.0 if flagged else float(record["auto"]),
            "execution_time": round(seconds), "output": "\n\n---\n\n".join(output),
            "output_format": "md", "visibility": "visible", "stdout_visibility": "hidden",
            "tests": tests,
            "extra_data": {"isolation": mode[1], "device": record.get("device"),
                           "status": record["status"]}}


def run(root: Path) -> dict:
    """Grade ``root/submission`` with the bundle's settings; write and return the results."""
    start = time.monotonic()
    settings = json.loads((root / "source" / SETTINGS).read_text(encoding="utf-8"))
    lock_down(root)
    mode = probe_capabilities().mode()
    print(f"isolation / aislamiento: {mode[1]} / {mode[0]}", flush=True)
    with tempfile.TemporaryDirectory(prefix="mmg-gradescope-") as work:  # root's alone
        submissions = Path(work) / "class"
        submissions.mkdir()
        handed = [p for p in (root / "submission").iterdir() if not p.name.startswith(".")]
        if len(handed) == 1 and handed[0].suffix.lower() == ".zip" and handed[0].is_file():
            shutil.copyfile(handed[0], submissions / f"{STUDENT}.zip")  # make submit's archive
        else:
            shutil.copytree(root / "submission", submissions / STUDENT, symlinks=True)
        out = Path(work) / "out"
        limits = limits_within(settings.get("timeout_s", TIMEOUT_S))
        grade(submissions, out, Options(workers=1, device=settings.get("device", "auto"),
                                        labs=settings.get("labs"), progress=False,
                                        limits=limits, in_process=True))
        (record,) = gradebook.load_records(out)
    data = results(record, mode, time.monotonic() - start)
    path = root / "results" / "results.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    os.chmod(path, 0o600)
    return data


if __name__ == "__main__":
    data = run(autograder_root())
    print(f"score {data['score']:g}; results.json written / results.json escrito")
    sys.exit(0)
