"""How long ``make demo`` takes, step by step, on this machine (after installation).

Runs what ``make demo`` runs, in order: every lab at the demo size (quick labs at full size, the
training labs small), then ``minimodel-grader demo``; prints seconds per lab and per step, the
total against the 5-minute aim, and the load average before and after (a busy machine explains a
slow run). ``--full`` also times every lab at full size, which is what ``Lab.full_run_s`` records
(about 22 minutes on 2 quiet cores).

    .venv/bin/python benchmarks/demo.py [--full] [--out benchmarks/results/demo.txt]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from minimodel.course import LABS
from minimodel.labrun import run_lab, size_of

ROOT = Path(__file__).resolve().parent.parent
AIM_S = 300.0


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def time_labs(size: str, folder: Path) -> list[tuple[str, str, float]]:
    rows = []
    for lab in LABS:
        start = time.perf_counter()
        run_lab(lab, impl="reference", size=size, figures=folder / "figures",
                out_dir=folder / "labs")
        rows.append((lab.id, size_of(lab, size), time.perf_counter() - start))
        print(f"{lab.id} {rows[-1][1]:<5} {rows[-1][2]:7.1f} s", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also time every lab at full size")
    parser.add_argument("--out", type=Path, default=None, help="also write the report here")
    args = parser.parse_args(argv)
    lines = [f"load average before: {load()}  ({os.cpu_count()} cores)"]
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        labs = time_labs("demo", folder)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "grader.cli", "demo", "--out", str(folder / "g")],
                       check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        grading = time.perf_counter() - start
        full = time_labs("full", folder) if args.full else []
    lines += ["", "make demo, step by step:", "lab    size       s"]
    lines += [f"{lab:<6} {size:<5} {seconds:7.1f}" for lab, size, seconds in labs]
    lab_total = sum(s for _, _, s in labs)
    total = lab_total + grading
    lines += [f"labs   total {lab_total:7.1f}", f"grader demo  {grading:7.1f}",
              f"make demo    {total:7.1f} s  ({total / AIM_S:.2f} x the {AIM_S:.0f} s aim)"]
    if full:
        lines += ["", "full size (Lab.full_run_s):"]
        lines += [f"{lab:<6} {seconds:7.1f}" for lab, _, seconds in full]
    lines.append(f"\nload average after: {load()}")
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.write_text(report + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
