"""Run a student's code in the sandbox: probe groups on the worker's zygote, notebooks in a
sandboxed kernel, each charged to the student's :class:`~grader.budget.StudentBudget`.

A grade must not depend on the machine's load, the number of workers or an interruption. So a
run stopped by a wall-clock limit is run once more with a larger wall budget before a time-out
is scored (the CPU limits, which the load does not change, decide). :func:`workers_that_fit`
says how many workers the machine's memory holds at the memory limits, where an allocation always
fails on its limit, the same way every run, never on the system's out-of-memory killer (the run
warns when it uses more).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from grader import nbexec
from grader.budget import DescendantCpu, StudentBudget
from grader.forkservers import KernelServer, Zygote
from grader.hidden import module_name
from grader.safe_io import read_group
from grader.sandbox import Limits, matplotlib_cache
from grader.verdicts import GroupOutcome

WORKER_OVERHEAD_MB = 1024  # a worker, its zygote (NumPy, PyTorch) and a probe group


def workers_that_fit(limits: Limits) -> int:
    """How many workers can all use their memory limit at once without the machine running out
    (the kernel's out-of-memory killer would stop whichever process it picks, a different one
    each run): an allocation then fails on its limit, the same way every time."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            fields = dict(line.split(":", 1) for line in meminfo)
        total_mb = int(fields["MemTotal"].split()[0]) // 1024
    except (OSError, KeyError, ValueError):
        return 1 << 10
    return max(1, total_mb // (limits.kernel_memory_mb + WORKER_OVERHEAD_MB))


_ZYGOTE: Zygote | None = None
_KERNELS: KernelServer | None = None


def zygote(ctx) -> Zygote:
    """This worker's zygote (one per worker process, started on first use)."""
    global _ZYGOTE
    if _ZYGOTE is None:
        home = ctx.scratch_root / f"worker-{os.getpid()}"
        _ZYGOTE = Zygote(home, ctx.out / "logs" / f"worker-{os.getpid()}.log", cuda=ctx.cuda)
    return _ZYGOTE


def kernel_server(ctx) -> KernelServer:
    """This worker's kernel server (one per worker process, started on first use)."""
    global _KERNELS
    if _KERNELS is None:
        home = ctx.scratch_root / f"worker-{os.getpid()}"
        _KERNELS = KernelServer(home, ctx.out / "logs" / f"worker-{os.getpid()}.log")
    return _KERNELS


def run_group(group, variant, inputs_path, scratch, ctx, sandbox: dict, limits: dict,
              budget: StudentBudget) -> GroupOutcome:
    """Run one probe group. A group stopped by the wall clock runs once more with a wall
    budget the CPU limit decides (four times it, plus 10 s; the CPU limit unchanged) before a
    time-out is scored, so that a busy machine does not change the grade."""
    n = len(group.cases)
    for attempt in (1, 2):
        request = {"dir": scratch.new_item_dir(f"{group.key}-{variant}"),
                   "module": group.module, "variant": variant, "inputs": str(inputs_path),
                   "cases": [c.to_json() for c in group.cases], "limits": limits,
                   "sandbox": sandbox}
        report = zygote(ctx).run(request, timeout=float(limits["wall_s"]) + 30)
        if report.get("status") == "grader-error":
            return GroupOutcome.absent(variant, "error", n)
        stopped = report.get("status") == "timeout"
        retry = stopped and attempt == 1 and budget.left() > float(limits["wall_s"])
        budget.charge(float(report.get("cpu_s", 0)), float(report.get("wall_s", 0)),
                      stopped_on_time=stopped and not retry)
        if not retry:
            break
        wall = max(3 * float(limits["wall_s"]), 4 * float(limits["cpu_s"]) + 10)
        limits = {**limits, "wall_s": min(wall, budget.left())}
    report["attempts"] = attempt
    data = read_group(scratch.items / request["dir"], n)
    return GroupOutcome.from_run(variant, report, data)


def timed_out(outcome: dict) -> bool:
    """Whether a notebook run was stopped by a wall-clock limit (its own, or a cell's)."""
    return outcome.get("status") == "timeout" or any(
        e.get("ename") == "CellTimeout" for e in outcome.get("cell_errors", []))


def run_notebook(lab_id, checks, source, student, scratch, ctx, log_path: Path,
                 budget: StudentBudget) -> tuple[Path, dict, dict]:
    """Run a student's notebook in the sandbox, charging its kernel's CPU time to the budget.

    A run that hits a wall-clock limit (a cell's or the notebook's) runs once more with three
    times the time (at most what is left of the student's budget) before a time-out is scored.
    """
    limits = ctx.limits
    kernels = kernel_server(ctx)
    kernels.ensure()  # its own start-up is charged to nobody
    measured_apart = {z.process.pid for z in (_ZYGOTE, kernels) if z is not None and z.alive()}
    for attempt in (1, 2):
        name = module_name(lab_id) + ("" if attempt == 1 else "-again")
        notebook, build = nbexec.build_run_notebook(
            source, student, checks.notebook, str(scratch.runner),
            str(scratch.items / f"nb-{name}"))
        fonts = matplotlib_cache(ctx.mpl_cache)  # built once per run, charged to nobody
        with DescendantCpu(exclude=measured_apart) as meter:
            folder, outcome = nbexec.run_notebook(
                notebook, scratch=scratch, name=name, caps=ctx.caps, limits=limits,
                extra_hide=ctx.extra_hide, log_path=log_path, kernels=kernels,
                mpl_cache=fonts)
        outcome["cpu_s"] = meter.seconds
        stopped = timed_out(outcome)
        retry = stopped and attempt == 1 and budget.left() > limits.notebook_wall_s
        budget.charge(meter.seconds, float(outcome.get("wall_s", 0)),
                      stopped_on_time=stopped and not retry)
        if not retry:
            break
        limits = replace(limits, cell_timeout_s=3 * limits.cell_timeout_s,
                         notebook_wall_s=int(min(3 * limits.notebook_wall_s, budget.left())))
    outcome["attempts"] = attempt
    return folder, outcome, build
