"""``minimodel-grader gradescope BUNDLE.zip``: the autograder bundle Gradescope asks for.

The zip holds, at its root, what Gradescope's specification names
(https://gradescope-autograders.readthedocs.io/en/latest/specs/): ``setup.sh`` (run once, as
root, when Gradescope builds the image: it installs Python 3.11 and ``make install``s the course)
and ``run_autograder`` (run for every submission: ``python -m grader.trusted.gradescope``), next
to the instructor repository's last commit (``git archive HEAD``, as the release; without the
lessons, tests and benchmarks) and ``gradescope.json``, the settings of the run (labs, device).
Gradescope unpacks all of it into ``/autograder/source``.
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path

from grader.build.release import export_commit
from grader.hidden import chosen
from grader.trusted.gradescope import ROOT_ENV, SETTINGS
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
"""

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
                 force: bool = False, root: Path = REPO_ROOT) -> list[str]:
    """Write the bundle to ``path``; return the names it holds."""
    chosen(labs)  # an unknown lab is refused before anything is written
    if path.exists() and not force:
        raise GradingError(bilingual(f"{path} ya existe; usa --force para sustituirlo.",
                                     f"{path} already exists; use --force to replace it."))
    with tempfile.TemporaryDirectory(prefix="mmg-bundle-") as tmp:
        tree = export_commit(root, Path(tmp))
        names = []
        with zipfile.ZipFile(path.with_suffix(".partial"), "w") as bundle:
            _add(bundle, "setup.sh", SETUP.encode(), 0o755)
            _add(bundle, "run_autograder", RUN.encode(), 0o755)
            settings = {"labs": labs, "device": device}
            _add(bundle, SETTINGS, json.dumps(settings, indent=1).encode(), 0o644)
            for file in sorted(p for p in tree.rglob("*") if p.is_file()):
                name = file.relative_to(tree).as_posix()
                if not name.startswith(LEFT_OUT):
                    _add(bundle, name, file.read_bytes(), file.stat().st_mode & 0o777)
            names = bundle.namelist()
        path.with_suffix(".partial").replace(path)
    return names
