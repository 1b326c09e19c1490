"""``minimodel-grader gradescope BUNDLE.zip``: the autograder bundle Gradescope asks for.

The zip holds, at its root, what Gradescope's specification names
(https://gradescope-autograders.readthedocs.io/en/latest/specs/): ``setup.sh`` (run once, as
root, when Gradescope builds the image: it installs Python 3.11 and ``make install``s the course)
and ``run_autograder`` (run for every submission: ``python -m grader.trusted.gradescope``), next
to the instructor repository's last commit (``git archive HEAD``, as the release; without the
lessons, tests and benchmarks) and ``gradescope.json``, the settings of the run (labs, device, the
assignment's time-out, within which the grader sets each student's budgets).
Gradescope unpacks all of it into ``/autograder/source``.
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path

from grader.build.release import export_commit
from grader.hidden import chosen
from grader.trusted.gradescope import (
    MEMORY_MB,
    PEAK_PSS_MB,
    ROOT_ENV,
    SETTINGS,
    TIMEOUT_S,
    limits_within,
)
from grader.trusted.grading import GradingError
from minimodel.implementation import REPO_ROOT
from minimodel.messages import bilingual

LEFT_OUT = ("docs_es/", "docs_en/", "tests/", "benchmarks/", ".github/", ".ci/")

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 22.04).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v python3.11 >/dev/null || ! command -v make >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y python3.11 python3.11-venv make
fi
make install PYTHON=python3.11
echo "{settings}"
"""


def settings_note(timeout_s: float) -> str:
    """What the instructor sets in the assignment's autograder settings on Gradescope, with the
    figures measured for a correct full submission (printed by ``setup.sh`` and the command)."""
    limits = limits_within(timeout_s)
    return bilingual(
        f"En Gradescope: tiempo límite {timeout_s:g} s (el corrector se ciñe a "
        f"{limits.student_wall_s:g} s por entrega, {limits.student_cpu_s:g} s de CPU); memoria "
        f"{MEMORY_MB} MB o más (una entrega correcta completa usa como mucho {PEAK_PSS_MB} MiB); "
        "el corrector usa un solo núcleo a la vez.",
        f"On Gradescope: time-out {timeout_s:g} s (the grader keeps to "
        f"{limits.student_wall_s:g} s per submission, {limits.student_cpu_s:g} s of CPU); "
        f"memory {MEMORY_MB} MB or more (a correct full submission peaks at {PEAK_PSS_MB} MiB); "
        "the grader uses one core at a time.")

RUN = f"""#!/usr/bin/env bash
# Gradescope runs this for every submission, as root: it grades ROOT/submission and writes
# ROOT/results/results.json (ROOT: /autograder, or ${ROOT_ENV}).
set -euo pipefail
root=${{{ROOT_ENV}:-/autograder}}
cd "$root/source"
export PYTHONPATH="$root/source/src:$root/source"
exec "$root/source/.venv/bin/python" -m grader.trusted.gradescope
"""


def _add(bundle: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o100000 | mode) << 16
    bundle.writestr(info, data)


def build_bundle(path: Path, labs: list[str] | None = None, device: str = "auto", *,
                 force: bool = False, root: Path = REPO_ROOT,
                 timeout_s: float = TIMEOUT_S) -> list[str]:
    """Write the bundle to ``path`` for an assignment whose Gradescope time-out is ``timeout_s``;
    return the names it holds."""
    chosen(labs)  # an unknown lab is refused before anything is written
    try:
        note = settings_note(timeout_s)
    except ValueError as error:
        raise GradingError(str(error)) from None
    if path.exists() and not force:
        raise GradingError(bilingual(f"{path} ya existe; usa --force para sustituirlo.",
                                     f"{path} already exists; use --force to replace it."))
    with tempfile.TemporaryDirectory(prefix="mmg-bundle-") as tmp:
        tree = export_commit(root, Path(tmp))
        names = []
        with zipfile.ZipFile(path.with_suffix(".partial"), "w") as bundle:
            _add(bundle, "setup.sh", SETUP.format(settings=note).encode(), 0o755)
            _add(bundle, "run_autograder", RUN.encode(), 0o755)
            settings = {"labs": labs, "device": device, "timeout_s": timeout_s}
            _add(bundle, SETTINGS, json.dumps(settings, indent=1).encode(), 0o644)
            for file in sorted(p for p in tree.rglob("*") if p.is_file()):
                name = file.relative_to(tree).as_posix()
                if not name.startswith(LEFT_OUT):
                    _add(bundle, name, file.read_bytes(), file.stat().st_mode & 0o777)
            names = bundle.namelist()
        path.with_suffix(".partial").replace(path)
    return names
