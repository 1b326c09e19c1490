"""Run a lab's code in the sandbox: probe groups on the worker's zygote, notebooks in a
sandboxed kernel, each charged to the student's :class:`~grader.trusted.budget.StudentBudget`.
:class:`LabRun` is the one driver: grading runs a student's code through it, and
``grader.build.references`` the reference solutions and the classic mistakes.

A grade must not depend on the machine's load, the number of workers or an interruption. So a
run stopped by a wall-clock limit is run once more with a larger wall budget before a time-out
is scored (the CPU limits, which the load does not change, decide). :func:`workers_that_fit`
says how many workers the machine's memory holds at the memory limits, where an allocation always
fails on its limit, the same way every run, never on the system's out-of-memory killer (the run
warns when it uses more).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.child import probe_runner
from grader.hidden import module_name
from grader.hidden.spec import LabChecks
from grader.trusted import nbexec
from grader.trusted.budget import DescendantCpu, StudentBudget
from grader.trusted.forkservers import KernelServer, Zygote, sandbox_config
from grader.trusted.out_of_time import OutOfTime, case_cpu_s
from grader.trusted.safe_io import Beneath, OutputCap, read_group
from grader.trusted.sandbox import Capabilities, ItemFolders, Limits, matplotlib_cache
from grader.trusted.status import Notebook, Report, Run
from grader.trusted.verdicts import Finding, GroupOutcome

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


_SERVERS: dict[type, Zygote] = {}


def _server(kind: type[Zygote], ctx, **options) -> Zygote:
    if kind not in _SERVERS:
        home = ctx.scratch_root / f"worker-{os.getpid()}"
        _SERVERS[kind] = kind(home, ctx.out / "logs" / f"worker-{os.getpid()}.log", **options)
    return _SERVERS[kind]


def close_servers() -> None:
    """Stop this process's sandbox servers (a worker's die with it)."""
    for server in _SERVERS.values():
        server.close()
    _SERVERS.clear()


def zygote(ctx) -> Zygote:
    """This worker's zygote (one per worker process, started on first use): the kernel server,
    which serves probe groups too (one warm process, not two: half the memory), except on a CUDA
    run, whose probe groups need a server that lets them see the GPU."""
    return _server(Zygote, ctx, cuda=True) if ctx.cuda else kernel_server(ctx)


def kernel_server(ctx) -> KernelServer:
    """This worker's kernel server (one per worker process, started on first use)."""
    return _server(KernelServer, ctx)


@dataclass
class LabRun:
    """Runs one lab's code on one course tree and reads back what it wrote: the one driver of a
    grading run (a student's modules and notebook) and of the reference outputs
    (``grader.build.references``: the reference solutions and each classic mistake).

    With a ``zygote`` each probe group runs in the sandbox of ``scratch`` (a
    :class:`~grader.trusted.sandbox.Scratch`, its limits ``limits.group()``); without one, in this
    process from ``package`` (the plain path, for the course's own code only). What a run used is
    charged to ``budget``; once it is spent, the items not yet run are not run.
    """

    checks: LabChecks
    scratch: ItemFolders
    inputs: Path  # the lab's hidden inputs, ``Scratch.add_inputs``
    limits: Limits = field(default_factory=Limits)
    budget: StudentBudget = field(default_factory=lambda: StudentBudget(0))
    zygote: Zygote | None = None
    caps: Capabilities | None = None
    extra_hide: list[Path] = field(default_factory=list)
    cuda: bool = False
    log_path: Path | None = None  # the instructor-only log of what the runs printed
    package: str = "minimodel.positional"
    reports: dict[str, dict] = field(default_factory=dict)  # "<lab>/<group>/<variant>" -> run
    out_of_time: OutOfTime = field(default_factory=lambda: OutOfTime({}))  # the student's
    outputs: OutputCap = field(default_factory=OutputCap)  # what its probe groups leave to read

    def log(self, text: str) -> None:
        if self.log_path:
            with open(self.log_path, "a", encoding="utf-8", errors="replace") as log:
                log.write(text.rstrip("\n")[:8000] + "\n")

    def groups(self, variants=lambda group: ("cpu",),
               not_run: dict[str, Finding] | None = None) -> dict[str, dict[str, GroupOutcome]]:
        """Every probe group on every one of its ``variants(group)``: group key -> variant ->
        what it gave. A group of a module in ``not_run`` (module -> why) is scored like the
        stub without running. How each run went is logged and kept in ``reports``."""
        not_run = not_run or {}
        sandbox = sandbox_config(self.scratch, self.caps, extra_hide=self.extra_hide,
                                 cuda=self.cuda) if self.zygote else None
        outcomes: dict[str, dict[str, GroupOutcome]] = {}
        for group in self.checks.groups:
            n = len(group.cases)
            if group.module in not_run:
                outcomes[group.key] = {v: GroupOutcome.absent(v, Run.MISSING, n,
                                                              [not_run[group.module]])
                                       for v in variants(group)}
                continue
            outcomes[group.key] = {}
            for variant in variants(group):
                if self.budget.spent():
                    self.budget.skipped.append(f"{self.checks.lab_id}/{group.key}/{variant}")
                    outcomes[group.key][variant] = GroupOutcome.absent(
                        variant, Run.CAPPED, n, [self.budget.finding()])
                    continue
                outcome = outcomes[group.key][variant] = self._group(group, variant, sandbox)
                report = outcome.report
                self.reports[f"{self.checks.lab_id}/{group.key}/{variant}"] = {
                    k: v for k, v in report.items() if k != "output_head"}
                self.log(f"-- {self.checks.lab_id} {group.key} [{variant}]: {outcome.status}, "
                         f"{report.get('wall_s', '?')} s, {report.get('output_bytes', 0)} "
                         f"bytes of output\n{report.get('output_head') or ''}")
        return outcomes

    def _group(self, group, variant: str, sandbox: dict | None) -> GroupOutcome:
        """One probe group on one variant. A group stopped by the wall clock runs once more
        with a wall budget the CPU limit decides (four times it, plus 10 s; the CPU limit
        unchanged) before a time-out is scored, so that a busy machine does not change the
        grade; no run holds the worker beyond the student's wall-clock budget. The functions
        that ran out of their time before are not run (``out_of_time``); a run in which one
        does is charged its CPU limit, as if that had stopped it."""
        n = len(group.cases)
        limits = self.limits.group()
        limits["case_cpu_s"] = case_cpu_s(limits)
        for attempt in (1, 2):
            limits = {**limits, "wall_s": min(float(limits["wall_s"]), self.budget.wall_left())}
            request = {"dir": self.scratch.new_item_dir(f"{group.key}-{variant}"),
                       "module": group.module, "variant": variant, "inputs": str(self.inputs),
                       "cases": [c.to_json() for c in group.cases], "limits": limits,
                       "sandbox": sandbox, "dead": self.out_of_time.request()}
            if self.zygote is None:
                (self.scratch.items / request["dir"]).mkdir(parents=True)
                probe_runner.run(request, str(self.scratch.items / request["dir"]), self.package)
                report = {"status": Report.EXITED}
            else:
                report = self.zygote.run(request, timeout=float(limits["wall_s"]) + 30)
            if report.get("status") == Report.GRADER_ERROR:
                return GroupOutcome.absent(variant, Run.ERROR, n)
            stopped = report.get("status") == Report.TIMEOUT
            retry = stopped and attempt == 1 and self.budget.left() > float(limits["wall_s"]) \
                and self.budget.wall_left() > float(limits["wall_s"])
            died = not retry and self.out_of_time.take(Beneath(self.scratch.items) / request["dir"])
            self.budget.charge(0.0 if retry else float(limits["cpu_s"]) if died
                               else _group_charge(report, limits), float(report.get("wall_s", 0)))
            if not retry:
                break
            wall = max(3 * float(limits["wall_s"]), 4 * float(limits["cpu_s"]) + 10)
            limits = {**limits, "wall_s": min(wall, self.budget.left())}
        report["attempts"] = attempt
        data = read_group(Beneath(self.scratch.items) / request["dir"], n, self.scratch.sources,
                          self.outputs)
        return GroupOutcome.from_run(variant, report, data)

    def notebook(self, source, student, kernels: KernelServer,
                 mpl_cache: Path) -> tuple[dict, dict, dict]:
        """Run the lab's notebook (``student=None``: the source's own solutions) in a sandboxed
        kernel forked by ``kernels``, charging its CPU time to the budget: (what it recorded,
        ``nbexec.read_records``; how the run went, with ``unsafe``, what could not be read
        safely; what was taken from where).

        A run that hits a wall-clock limit (a cell's or the notebook's) runs once more with three
        times the time (at most what is left of the budget) before a time-out is scored.
        """
        limits = self.limits
        if self.budget.wall_left() < limits.notebook_wall_s:
            limits = replace(limits, notebook_wall_s=max(1, int(self.budget.wall_left())))
        kernels.ensure()  # its own start-up is charged to nobody
        measured_apart = {z.process.pid for z in (self.zygote, kernels)
                          if z is not None and z.alive()}
        for attempt in (1, 2):
            name = module_name(self.checks.lab_id) + ("" if attempt == 1 else "-again")
            notebook, build = nbexec.build_run_notebook(
                source, student, self.checks.notebook, str(self.scratch.runner),
                str(self.scratch.items / f"nb-{name}"), dead=self.out_of_time.request())
            fonts = matplotlib_cache(mpl_cache)  # built once per run, charged to nobody
            sources = nbexec.notebook_sources(self.scratch.sources, notebook)
            with DescendantCpu(exclude=measured_apart) as meter:
                folder, outcome = nbexec.run_notebook(
                    notebook, scratch=self.scratch, name=name, caps=self.caps, limits=limits,
                    extra_hide=self.extra_hide, log_path=self.log_path, kernels=kernels,
                    mpl_cache=fonts, sources=sources)
            outcome["cpu_s"] = meter.seconds
            stopped = _notebook_charge(outcome, limits)
            retry = bool(stopped) and attempt == 1 and \
                min(self.budget.left(), self.budget.wall_left()) > limits.notebook_wall_s
            self.budget.charge(0.0 if retry else stopped or meter.seconds,
                               float(outcome.get("wall_s", 0)))
            if not retry:
                break
            limits = replace(limits, cell_timeout_s=3 * limits.cell_timeout_s,
                             notebook_wall_s=int(min(3 * limits.notebook_wall_s,
                                                     self.budget.left(),
                                                     self.budget.wall_left())))
        outcome["attempts"] = attempt
        self.log(f"-- {self.checks.lab_id} notebook: {outcome.get('status')}, "
                 f"{outcome.get('wall_s', '?')} s; cell errors: "
                 + "; ".join(f"{e.get('grade_id') or e.get('index')}: {e.get('ename')}"
                             f" {e.get('evalue', '')[:200]}"
                             for e in outcome.get("cell_errors", [])))
        records = nbexec.read_records(folder, self.checks.notebook, outcome["unsafe"], sources)
        return records, outcome, build


def _group_charge(report: dict, limits: dict) -> float:
    """What a probe group's run is charged (``grader.trusted.budget``): the limit that stopped
    it, else the CPU time it used. A run stopped on time is charged its CPU limit at most: the
    load decides whether the wall clock or the CPU limit strikes first, not the charge."""
    if report.get("status") == Report.CPU:
        return float(limits["cpu_s"])
    if report.get("status") == Report.TIMEOUT:
        return min(float(limits["wall_s"]), float(limits["cpu_s"]))
    return float(report.get("cpu_s", 0))


def _notebook_charge(outcome: dict, limits: Limits) -> float:
    """What a notebook run stopped on time is charged: the notebook's wall limit, or the cell
    limit once per cell stopped (0: it was not stopped, its CPU time is charged)."""
    if outcome.get("status") == Notebook.TIMEOUT:
        return float(limits.notebook_wall_s)
    stopped = sum(e.get("ename") == nbexec.TIMEOUT for e in outcome.get("cell_errors", []))
    return float(stopped * limits.cell_timeout_s)
