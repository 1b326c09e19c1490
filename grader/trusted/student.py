"""Grade one student, in a worker: every chosen lab's probe groups and notebook in the sandbox,
each item judged against the lab's reference outputs, one record.

The steps, each a function that returns what it found:

1. :func:`grade_student` unpacks the submission, reads which modules borrow their answers, and
   builds the scratch folder the sandbox sees (:func:`_scratch`);
2. :func:`_grade_lab` runs a lab's probe groups and judges its items (:func:`_judge_items`), then
   runs and judges its notebook (:func:`_grade_notebook`): a :class:`LabResult`;
3. :func:`_record` puts the labs together with the GPU column and the status, a
   :class:`~grader.trusted.record.StudentRecord`; its totals are the gradebook's.

The record is written by the caller (``grader.trusted.pool``).
"""

from __future__ import annotations

import datetime
import shutil
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat

from grader.hidden import chosen, module_name, registry
from grader.hidden.spec import Group, Item, LabChecks
from grader.trusted import gradebook, nbexec, status
from grader.trusted.borrowed import borrowed_modules
from grader.trusted.budget import StudentBudget
from grader.trusted.findings import GRADER_ERROR
from grader.trusted.out_of_time import OutOfTime, case_cpu_s
from grader.trusted.record import Instructor, LabRecord, StudentRecord
from grader.trusted.references import References
from grader.trusted.runs import LabRun, kernel_server, zygote
from grader.trusted.sandbox import Scratch, scratch_name, scratch_size_mb
from grader.trusted.status import Item as ItemStatus
from grader.trusted.status import Notebook, Problem, Run
from grader.trusted.unpack import POSITIONAL, Submission, flag_reason, unpack
from grader.trusted.verdicts import CellContext, Finding, GroupOutcome, JudgeContext, Verdict
from minimodel.course import find_lab
from minimodel.implementation import STUBS_DIR
from minimodel.own_work import CODE as BORROWED

if TYPE_CHECKING:
    from grader.trusted.grading import RunContext


@dataclass
class StudentRun:
    """What every lab of one student is graded with."""

    submission: Submission
    scratch: Scratch
    ctx: RunContext
    log_path: Path
    budget: StudentBudget
    borrowed: dict[str, Finding]  # module -> why it scores 0 (it takes its values from the course)
    out_of_time: OutOfTime  # the functions that ran out of their time: not run again


@dataclass
class NotebookResult:
    """A lab's notebook, run and judged."""

    verdicts: list[Verdict] = field(default_factory=list)
    info: dict = field(default_factory=dict)  # the record's ``labs[lab]["notebook"]``
    run: dict | None = None  # the instructor's ``notebooks[lab]``: how the kernel's run went
    problems: list[Problem] = field(default_factory=list)


@dataclass
class LabResult:
    """One lab of one student, graded."""

    lab: LabRecord
    groups: dict[str, dict]  # the instructor's ``groups``: how each probe group's run went
    notebook_run: dict | None  # the instructor's ``notebooks[lab]``, if the notebook ran
    problems: list[Problem]


_source = cache(nbexec.source_notebook)


def grade_student(student_id: str, path: Path, ctx: RunContext) -> dict:
    """Grade one submission completely and return its record (written by the caller)."""
    start = time.monotonic()
    submission = unpack(student_id, path)
    safe = gradebook.safe_id(student_id)
    log_path = ctx.out / "logs" / f"{safe}.log"
    log_path.write_bytes(f"== {student_id} {datetime.datetime.now().isoformat()}\n".encode())
    own = _own_modules(submission)
    files = {**own, **_stubs_missing(own)}
    student = StudentRun(
        submission=submission, scratch=_scratch(ctx, safe, files), ctx=ctx, log_path=log_path,
        budget=StudentBudget(ctx.limits.student_cpu_s, ctx.limits.student_wall_s),
        # read before anything runs: a module that takes its values from the course scores 0
        borrowed=borrowed_modules(own),
        out_of_time=OutOfTime(files, case_cpu_s(ctx.limits.group())))
    try:
        labs = {lab_id: _grade_lab(lab_id, checks, student)
                for lab_id, checks in chosen(ctx.labs).items()}
    finally:
        student.scratch.remove()
    record = _record(student_id, student, labs)
    record.graded_at = datetime.datetime.now().isoformat(timespec="seconds")
    record.wall_s = round(time.monotonic() - start, 2)
    data = record.to_json()
    gradebook.recompute_totals(data)
    return data


def _graded_modules() -> set[str]:
    return {m for checks in registry().values() for m in checks.modules()}


def _own_modules(submission: Submission) -> dict[str, bytes]:
    """The graded modules the student handed in."""
    return {m: submission.module(m) for m in _graded_modules()
            if submission.module(m) is not None}


def _stubs_missing(own: dict[str, bytes]) -> dict[str, bytes]:
    """The released stub of each graded module the submission lacks, so that a module that
    imports it (two_d.py and scaling.py import rope.py) still imports; its own items still say
    it is missing."""
    return {m: (STUBS_DIR / f"{m}.py").read_bytes() for m in sorted(_graded_modules() - set(own))
            if (STUBS_DIR / f"{m}.py").exists()}


def _scratch(ctx: RunContext, safe_id: str, files: dict[str, bytes]) -> Scratch:
    """A fresh scratch folder for the student (one left by an interrupted run is removed)."""
    folder = ctx.scratch_root / scratch_name(safe_id)
    if folder.exists():
        shutil.rmtree(folder)
    return Scratch(folder, files, scratch_size_mb(ctx.limits, ctx.caps))


def _record(student_id: str, student: StudentRun, labs: dict[str, LabResult]) -> StudentRecord:
    """The student's record from their graded labs: messages, GPU column, status."""
    submission, ctx, budget = student.submission, student.ctx, student.budget
    lab_records = {lab_id: result.lab for lab_id, result in labs.items()}
    problems = [problem for result in labs.values() for problem in result.problems]
    if budget.skipped:
        problems.append(Problem.STUDENT_WALL_CAP if budget.finding().code == "student-wall-cap"
                        else Problem.STUDENT_CPU_CAP)
    if any(f.get("code") == BORROWED for lab in lab_records.values() for v in lab.items
           for f in v.get("findings", [])):
        problems.append(Problem.BORROWED)  # said in the status column, not only in the items
    messages = [m.to_json() for m in [*submission.flags, *submission.messages,
                                      *student.out_of_time.findings()]]
    return StudentRecord(
        student_id=student_id, safe_id=gradebook.safe_id(student_id), complete=True,
        fingerprint=submission.fingerprint(), config=ctx.config, device=ctx.device,
        messages=messages + _syntax_errors(messages, lab_records), labs=lab_records,
        found=submission.found,
        instructor=Instructor(
            groups={k: v for result in labs.values() for k, v in result.groups.items()},
            notebooks={lab_id: result.notebook_run for lab_id, result in labs.items()
                       if result.notebook_run is not None},
            budget=budget.summary()),
        gpu=status.gpu_summary([v["gpu"] for lab in lab_records.values()
                                for v in lab.items if v.get("gpu")]),
        status=(status.flagged(flag_reason(submission)) if submission.flags
                else status.problems(problems)))


@cache
def _lab_data(lab_id: str) -> tuple[References, dict]:
    """What every submission of a lab is judged against: its reference outputs and the hidden
    inputs they were computed from (stored with them, not computed again). Loaded once per
    worker, not once per student, and read-only, so that no judge can change them for the next
    student."""
    refs = References(lab_id)
    arrays = refs.inputs()
    for array in [*refs.arrays.values(), *arrays.values()]:
        array.flags.writeable = False
    return refs, arrays


def _missing_module(module: str) -> Finding:
    path = f"{POSITIONAL}/{module}.py"
    return Finding("missing-file",
                   f"No encuentro {path} en tu entrega: los apartados que dependen de él valen 0.",
                   f"{path} is not in your submission: the items that depend on it score 0.")


def _grade_lab(lab_id: str, checks: LabChecks, student: StudentRun) -> LabResult:
    """Run one lab's probe groups and notebook for ``student`` and judge every item."""
    lab = find_lab(lab_id)
    refs, arrays = _lab_data(lab_id)
    ctx, scratch = student.ctx, student.scratch
    run = LabRun(checks=checks, scratch=scratch,
                 inputs=scratch.add_inputs(module_name(lab_id), arrays), limits=ctx.limits,
                 budget=student.budget, zygote=zygote(ctx), caps=ctx.caps,
                 extra_hide=ctx.extra_hide, cuda=ctx.cuda, log_path=student.log_path,
                 out_of_time=student.out_of_time)
    # the groups of a missing module, or of one that borrows its answers, are not run
    not_run = {**student.borrowed, **{g.module: _missing_module(g.module) for g in checks.groups
                                      if student.submission.module(g.module) is None}}
    outcomes = run.groups(lambda group: group.variants(ctx.cuda), not_run)
    problems = [Problem.SANDBOX] if any(o.status == Run.ERROR for runs in outcomes.values()
                                        for o in runs.values()) else []
    items, judge_problems = _judge_items(checks, outcomes, refs, arrays, ctx)
    notebook = NotebookResult()
    if checks.notebook:
        probes = {c.group: outcomes[c.group]["cpu"] for c in checks.notebook.cells if c.group}
        notebook = _grade_notebook(run, student, refs, probes)
    return LabResult(
        lab=LabRecord(title_es=lab.title_es, title_en=lab.title_en,
                      items=[v.to_json() for v in [*items, *notebook.verdicts]],
                      notebook=notebook.info),
        groups=run.reports, notebook_run=notebook.run,
        problems=[*problems, *judge_problems, *notebook.problems])


def _judge_items(checks: LabChecks, outcomes: dict[str, dict[str, GroupOutcome]],
                 refs: References, arrays: dict,
                 ctx: RunContext) -> tuple[list[Verdict], list[Problem]]:
    """Every item of the lab judged on its group's runs; a judge that fails is a problem."""
    verdicts, problems = [], []
    lab = {g.key: (g, outcomes[g.key]["cpu"], refs.mistakes(g.key)) for g in checks.groups}
    for item in checks.items:
        context = _judge_context(item, checks.group(item.group), outcomes[item.group], refs,
                                 arrays, ctx, lab=lab)
        verdict, judged = _judged(item.judge, context, item.key, (item.title_es, item.title_en),
                                  item.points)
        verdicts.append(verdict)
        problems += [] if judged else [Problem.JUDGE]
    return verdicts, problems


def _judge_context(item: Item, group: Group, runs: dict[str, GroupOutcome], refs: References,
                   arrays: dict, ctx: RunContext, *, lab: dict | None = None) -> JudgeContext:
    """What ``item``'s judge sees. A device group always has a CUDA run (an absent, not run one
    without a GPU) and a meta run (absent, like the CPU run, when its module did not run).
    ``lab``: every group of the lab with its CPU run and mistakes (``JudgeContext.lab``)."""
    gpu = meta = None
    if group.device:
        n = len(group.cases)
        gpu = runs.get("cuda") or GroupOutcome.absent("cuda", Run.NOT_RUN, n)
        meta = runs.get("meta") or GroupOutcome.absent("meta", runs["cpu"].status, n)
    return JudgeContext(item=item, group=group, run=runs["cpu"], gpu_run=gpu,
                        refs=refs.group(item.group), inputs=arrays,
                        module_file=f"{group.module}.py", limits=ctx.limits.group(),
                        meta_run=meta, gpu_scores=ctx.device == "cuda",
                        mistakes=refs.mistakes(item.group), lab=lab or {})


def _judged(judge: Callable, context, key: str, titles: tuple[str, str],
            points: float) -> tuple[Verdict, bool]:
    """``(the judge's verdict, True)``; ``(0 points with a grader-error finding, False)`` when
    the judge itself fails: a bug in a judge must not cost the student, and is flagged."""
    try:
        return judge(context), True
    except Exception:  # noqa: BLE001 - any bug in a judge
        return Verdict(key, *titles, points, 0.0, ItemStatus.FAILED, [GRADER_ERROR],
                       instructor={"traceback": traceback.format_exc()[-4000:]}), False


@dataclass
class _KernelRun:
    """What the kernel recorded and how its run went (all empty when it did not run)."""

    records: dict = field(default_factory=dict)
    outcome: dict = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    run: dict | None = None  # outcome and build, for the instructor
    problems: list[Problem] = field(default_factory=list)


def _grade_notebook(run: LabRun, student: StudentRun, refs: References,
                    probes: dict[str, GroupOutcome]) -> NotebookResult:
    """Run the student's notebook of the lab (if handed in, readable, and the budget allows)
    and judge its graded cells from what its kernel recorded, and from ``probes`` (the runs of
    the probe groups that cells name: what the student's modules give, outside the kernel)."""
    slug = run.checks.notebook.slug
    source = _source(slug)
    raw = student.submission.notebook(slug)
    kernel = _run_notebook(run, student, source, raw)
    info = {"present": raw is not None,
            "status": kernel.outcome.get("status", Notebook.MISSING),
            "findings": [f.to_json() for f in kernel.findings]}
    verdicts, problems = _cell_verdicts(run.checks, source, refs, kernel, probes)
    return NotebookResult(verdicts=verdicts, info=info, run=kernel.run,
                          problems=[*kernel.problems, *problems])


def _run_notebook(run: LabRun, student: StudentRun, source,
                  raw: bytes | None) -> _KernelRun:
    slug = run.checks.notebook.slug
    if raw is None:
        return _KernelRun(findings=[Finding(
            "missing-notebook",
            f"No encuentro labs/{slug}.ipynb en tu entrega: las celdas calificadas del "
            "cuaderno valen 0.",
            f"labs/{slug}.ipynb is not in your submission: the notebook's graded cells score "
            "0.")])
    try:
        notebook = nbformat.reads(raw.decode("utf-8"), as_version=4)
    except Exception:  # noqa: BLE001 - anything unreadable counts as missing
        return _KernelRun(findings=[Finding(
            "bad-notebook",
            f"labs/{slug}.ipynb no se puede leer como cuaderno; cuenta como ausente.",
            f"labs/{slug}.ipynb cannot be read as a notebook; it counts as missing.")])
    if student.budget.spent():
        student.budget.skipped.append(f"{run.checks.lab_id}/notebook")
        return _KernelRun(findings=[student.budget.finding()])
    ctx = student.ctx
    records, outcome, build = run.notebook(source, notebook, kernel_server(ctx), ctx.mpl_cache)
    return _KernelRun(records=records, outcome=outcome,
                      findings=nbexec.kernel_findings(outcome, build),
                      run={**outcome, **build},
                      problems=[Problem.NOTEBOOK] if outcome.get("status") == Notebook.ERROR
                      else [])


def _cell_verdicts(checks: LabChecks, source, refs: References, kernel: _KernelRun,
                   probes: dict[str, GroupOutcome]) -> tuple[list[Verdict], list[Problem]]:
    """A verdict per graded cell of the notebook: written answers wait for a hand grade, the
    others are judged on what the kernel recorded."""
    verdicts, problems = [], []
    cells = {c.grade_id: c for c in checks.notebook.cells}
    for grade_id, meta in nbexec.graded_cells(source).items():
        key = f"nb/{grade_id}"
        cell = cells.get(grade_id)
        if meta["kind"] == "manual":
            title_es, title_en = checks.notebook.title(grade_id)
            verdicts.append(Verdict(key, title_es, title_en, meta["points"], None,
                                    ItemStatus.MANUAL, kind="manual"))
        elif cell is None:
            problems.append(Problem.NO_HIDDEN_CHECK)
            verdicts.append(Verdict(key, grade_id, grade_id, meta["points"], 0.0,
                                    ItemStatus.FAILED,
                                    instructor={"error": "no hidden check for this cell"}))
        else:
            values = kernel.records.get(grade_id, {name: None for name in cell.records})
            context = CellContext(cell, meta["points"], values, refs.cell(grade_id),
                                  kernel.outcome, refs.cell_mistakes(grade_id),
                                  probes.get(cell.group))
            verdict, judged = _judged(cell.judge, context, key, (cell.title_es, cell.title_en),
                                      meta["points"])
            verdicts.append(verdict)
            problems += [] if judged else [Problem.JUDGE]
    return verdicts, problems


def _syntax_errors(messages: list[dict], labs: dict[str, LabRecord]) -> list[dict]:
    """The items' syntax errors, each once, not already among ``messages``: a syntax error is
    said at the top of the feedback, not only under each item."""
    seen = {m.get("es") for m in messages}
    lifted = []
    for lab in labs.values():
        for verdict in lab.items:
            for finding in verdict.get("findings", []):
                if finding["code"] in ("syntax-error", "not-utf8") and finding["es"] not in seen:
                    seen.add(finding["es"])
                    lifted.append(finding)
    return lifted
