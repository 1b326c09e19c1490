"""What an endless loop costs the grader: lab 17.03 graded for the reference and for a copy whose
apply_rotary never returns, both with the solved notebook, side by side at 2 workers.

    .venv/bin/python benchmarks/loop.py [--out build/bench-loop]

Prints each submission's wall time, score and charged CPU, with the load average before and
after (timings on a busy machine are noisy: compare the ratio within one run).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader.build.demo import fill_stub, reference_bodies  # noqa: E402
from grader.build.sync import released_text  # noqa: E402
from grader.trusted import nbexec  # noqa: E402
from minimodel.implementation import REFERENCE_DIR, STUBS_DIR  # noqa: E402


def write_submissions(folder: Path) -> None:
    notebook = nbformat.writes(nbexec.source_notebook("17_03_rope"))
    loop = fill_stub(released_text(STUBS_DIR / "rope.py"),
                     {**reference_bodies("rope"), "apply_rotary": "while True:\n    pass\n"})
    for name, module in (("honest", (REFERENCE_DIR / "rope.py").read_text()), ("loop", loop)):
        (folder / name / "src/minimodel/positional").mkdir(parents=True)
        (folder / name / "src/minimodel/positional/rope.py").write_text(module)
        (folder / name / "labs").mkdir()
        (folder / name / "labs/17_03_rope.ipynb").write_text(notebook)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "build" / "bench-loop")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    write_submissions(args.out / "subs")
    before = os.getloadavg()
    subprocess.run([sys.executable, "-m", "grader.cli", "grade", str(args.out / "subs"),
                    "--out", str(args.out / "grades"), "--workers", "2", "--lab", "17.03",
                    "--no-progress"], check=True, cwd=REPO, capture_output=True)
    after = os.getloadavg()
    print(f"lab 17.03, 2 workers, load average {before[0]:.1f} before, {after[0]:.1f} after "
          f"({os.cpu_count()} CPUs)")
    walls = {}
    for name in ("honest", "loop"):
        record = json.loads((args.out / "grades/records" / f"{name}.json").read_text())
        budget = record["instructor"]["budget"]
        walls[name] = record["wall_s"]
        print(f"{name:7s} wall {record['wall_s']:7.1f} s  score {record['auto']:6.2f}  "
              f"charged {budget['used_s']:6.1f} CPU s  held {budget['held_s']:6.1f} s")
    print(f"loop / honest: {walls['loop'] / walls['honest']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
