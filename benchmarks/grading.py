"""Grading speed: seconds per submission, speed-up from 1 to 2 workers, and plain nbgrader.

    .venv/bin/python benchmarks/grading.py --n 8            # full comparison
    .venv/bin/python benchmarks/grading.py --n 4 --skip-nbgrader

It generates N complete submissions (every lab that has hidden checks: the encoding modules and
the lab notebooks), cycling through the bundled samples (reference, buggy, untouched stubs), and
grades them with ``minimodel-grader grade --force`` at 1 and at 2 workers. Then it grades the
same notebooks with plain ``nbgrader autograde`` (serial; notebooks only, since nbgrader does not
grade the ``.py`` modules; each student's encoding files are placed next to the notebook and
selected with ``MINIMODEL_IMPL``). Figures are wall-clock seconds; the machine's load average is
printed with them, since other work on the machine slows every column alike.

Where the time goes is read from the grading records (each probe group's and notebook's wall and
CPU seconds) and from one empty notebook run in the same sandboxed kernel (the start-up and
shutdown every notebook pays). Everything printed is also written to ``--results`` (by default
``benchmarks/results/grading.txt``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader.build.demo import build_sample  # noqa: E402
from grader.hidden import registry  # noqa: E402
from grader.trusted import nbexec  # noqa: E402

VARIANTS = ("reference", "buggy", "stubs")


def make_submissions(folder: Path, n: int) -> list[str]:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    templates = {v: build_sample(v, folder.parent / "templates" / v) for v in VARIANTS}
    names = []
    for index in range(n):
        name = f"student{index:03d}"
        shutil.copytree(templates[VARIANTS[index % len(VARIANTS)]], folder / name)
        names.append(name)
    shutil.rmtree(folder.parent / "templates")
    return names


class Accounting:
    """CPU seconds of a command and all its descendants (a cgroup-v1 ``cpuacct`` group), and,
    with ``priority``, a large ``cpu.shares`` (a ``cpu`` group) so that other work on a shared
    machine does not distort the wall-clock figures. Without cgroups: wall clock only."""

    def __init__(self, name: str, priority: bool):
        self.groups: dict[str, Path] = {}
        wanted = {"cpuacct": "cpuacct.usage"}
        if priority:
            wanted["cpu"] = "cpu.shares"
        for controller, probe in wanted.items():
            for root in (Path("/sys/fs/cgroup") / controller,
                         Path("/sys/fs/cgroup/cpu,cpuacct")):
                if (root / probe).exists() and os.access(root, os.W_OK):
                    group = root / f"minimodel-bench-{os.getpid()}-{name}"
                    group.mkdir(exist_ok=True)
                    self.groups[controller] = group
                    break
        if "cpu" in self.groups:
            (self.groups["cpu"] / "cpu.shares").write_text("262144")

    def enter(self) -> None:  # runs in the child before exec
        for group in dict.fromkeys(self.groups.values()):
            (group / "cgroup.procs").write_text(str(os.getpid()))

    def cpu_seconds(self) -> float | None:
        group = self.groups.get("cpuacct")
        return int((group / "cpuacct.usage").read_text()) / 1e9 if group else None

    def close(self) -> None:
        for group in dict.fromkeys(self.groups.values()):
            for _ in range(50):
                try:
                    group.rmdir()
                    break
                except OSError:  # processes still leaving
                    time.sleep(0.1)


def timed(command: list[str], name: str, priority: bool, **kwargs) -> tuple[float, float | None]:
    accounting = Accounting(name, priority)
    start = time.perf_counter()
    try:
        subprocess.run(command, check=True, capture_output=True, preexec_fn=accounting.enter,
                       **kwargs)
        return time.perf_counter() - start, accounting.cpu_seconds()
    finally:
        accounting.close()


def grade(submissions: Path, out: Path, workers: int, priority: bool):
    if out.exists():
        shutil.rmtree(out)
    return timed([sys.executable, "-m", "grader.cli", "grade", str(submissions), "--out",
                  str(out), "--workers", str(workers), "--force", "--no-progress"],
                 f"w{workers}", priority, cwd=REPO)


def nbgrader_autograde(submissions: Path, names: list[str], work: Path, priority: bool):
    """Plain ``nbgrader autograde`` of the same notebooks, timed (generation not included)."""
    from grader.build.notebooks import _run_nbgrader

    course = work / "course"
    if course.exists():
        shutil.rmtree(course)
    slugs = [c.notebook.slug for c in registry().values() if c.notebook]
    for slug in slugs:
        (course / "source" / slug).mkdir(parents=True)
        import nbformat

        nbformat.write(nbexec.source_notebook(slug),
                       course / "source" / slug / f"{slug}.ipynb")
        _run_nbgrader(course, slug)
    for name in names:
        for slug in slugs:
            target = course / "submitted" / name / slug
            target.mkdir(parents=True)
            shutil.copy2(submissions / name / "labs" / f"{slug}.ipynb", target)
            shutil.copytree(submissions / name / "src" / "minimodel" / "positional",
                            target / "positional")
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        f"c.CourseDirectory.db_url = 'sqlite:///{course / 'gradebook.db'}'\n"
        "c.ExecutePreprocessor.timeout = 120\n")
    env = {**os.environ, "MINIMODEL_IMPL": "positional", "MINIMODEL_LAB_SIZE": "test",
           "MPLBACKEND": "agg",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    command = ["sh", "-c", " && ".join(
        f"{Path(sys.executable).parent / 'nbgrader'} autograde {slug} --create --force"
        for slug in slugs)]
    return timed(command, "nbgrader", priority, cwd=course, env=env)


def kernel_startup_s(work: Path) -> float:
    """Seconds one sandboxed kernel takes to start, run an empty cell and stop."""
    import nbformat

    from grader.trusted.forkservers import KernelServer
    from grader.trusted.sandbox import Limits, Scratch, probe_capabilities

    scratch = Scratch(work / "kernel-probe", {})
    kernels = KernelServer(work / "kernel-server", work / "kernel-probe.log")
    try:
        kernels.ensure()  # once per worker: not part of a notebook's start-up
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")])
        start = time.perf_counter()
        nbexec.run_notebook(notebook, scratch=scratch, name="empty",
                            caps=probe_capabilities(), limits=Limits(), extra_hide=[],
                            log_path=work / "kernel-probe.log", kernels=kernels)
        return time.perf_counter() - start
    finally:
        kernels.close()
        scratch.remove()


def breakdown(out: Path) -> dict:
    """Mean seconds per submission: all, probe groups, notebooks (and their kernels' CPU)."""
    records = [json.loads(p.read_text()) for p in sorted((out / "records").glob("*.json"))]
    sums = dict.fromkeys(("wall", "groups_wall", "groups_cpu", "notebooks_wall",
                          "notebooks_cpu", "kernels", "groups"), 0.0)
    for record in records:
        sums["wall"] += record.get("wall_s", 0)
        for group in record["instructor"]["groups"].values():
            sums["groups_wall"] += group.get("wall_s", 0)
            sums["groups_cpu"] += group.get("cpu_s", 0)
            sums["groups"] += 1
        for notebook in record["instructor"]["notebooks"].values():
            sums["notebooks_wall"] += notebook.get("wall_s", 0)
            sums["notebooks_cpu"] += notebook.get("cpu_s", 0)
            sums["kernels"] += 1
    n = max(len(records), 1)
    return {key: value / n for key, value in sums.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8, help="number of submissions")
    parser.add_argument("--out", type=Path, default=REPO / "build" / "bench-grading")
    parser.add_argument("--skip-nbgrader", action="store_true")
    parser.add_argument("--results", type=Path,
                        default=REPO / "benchmarks" / "results" / "grading.txt")
    parser.add_argument("--priority", action="store_true",
                        help="give the benchmark a large CPU share (cgroup cpu.shares) so that "
                             "other work on a shared machine does not distort the timings")
    args = parser.parse_args(argv)
    subs = args.out / "submissions"
    names = make_submissions(subs, args.n)
    labs = ", ".join(registry())
    lines: list[str] = []

    def say(text: str) -> None:
        print(text, flush=True)
        lines.append(text)

    say(f"{args.n} submissions (labs {labs}), {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}" + (", priority" if args.priority else ""))
    results = {"n": args.n, "load_before": os.getloadavg()[0]}

    def show(label: str, wall: float, cpu: float | None) -> None:
        cpu_text = f", CPU {cpu:6.1f} s ({cpu / args.n:5.2f} s/submission)" if cpu else ""
        say(f"{label:44s} {wall:7.1f} s ({wall / args.n:5.2f} s/submission){cpu_text}  "
            f"load {os.getloadavg()[0]:.1f}")

    for workers in (1, 2):
        wall, cpu = grade(subs, args.out / f"grades-{workers}", workers, args.priority)
        results[f"workers_{workers}"] = {"wall_s": wall, "cpu_s": cpu}
        show(f"minimodel-grader, {workers} worker(s):", wall, cpu)
    speedup = results["workers_1"]["wall_s"] / results["workers_2"]["wall_s"]
    say(f"speed-up 1 -> 2 workers: {speedup:.2f}x")
    results["speedup"] = speedup
    parts = breakdown(args.out / "grades-1")
    startup = kernel_startup_s(args.out)
    results["breakdown_1_worker"] = {**parts, "kernel_startup_s": startup}
    say(f"where the time goes (1 worker, mean per submission): {parts['wall']:.1f} s in all; "
        f"{parts['groups']:.0f} probe groups {parts['groups_wall']:.1f} s "
        f"(CPU {parts['groups_cpu']:.1f} s); {parts['kernels']:.0f} notebooks "
        f"{parts['notebooks_wall']:.1f} s (kernels' CPU {parts['notebooks_cpu']:.1f} s), of "
        f"which kernel start-up and shutdown about {parts['kernels'] * startup:.1f} s "
        f"({startup:.1f} s each); the rest (unpacking, scratch folders, judging, feedback) "
        f"{parts['wall'] - parts['groups_wall'] - parts['notebooks_wall']:.1f} s")
    if not args.skip_nbgrader:
        wall, cpu = nbgrader_autograde(subs, names, args.out, args.priority)
        results["nbgrader"] = {"wall_s": wall, "cpu_s": cpu}
        show("nbgrader autograde (serial, notebooks only):", wall, cpu)
    say(f"load average after: {os.getloadavg()[0]:.1f}")
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
