"""Grade a class: unpack each submission, run it in the sandbox, judge, record, report.

One worker process grades one student at a time (all labs), so ``--workers N`` grades N students
at once. For each student the worker builds a scratch folder, starts one sandbox zygote for the
module probes and one sandboxed kernel per lab notebook, reads back plain data and judges it
against the reference outputs; the verdicts, feedback and record are written by the worker
(atomically, the record last). The main process only schedules, shows progress and rebuilds the
gradebook. See ``grader.trusted.gradebook`` for the output layout and resuming,
``grader.trusted.runs`` for how a run in the sandbox is limited and retried,
``grader.trusted.pool`` for the worker processes.

A submission the grader cannot read (``grader.trusted.unpack``) is graded with what could be taken
and its status says ``flagged: <reason>``; the run's summary counts and names the flagged ones. Each
student has a CPU-time budget (``Limits.student_cpu_s``, ``--student-cpu``): once spent, the items
not yet run score 0 with a reason (``grader.trusted.budget``).
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import hashlib
import os
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

import nbformat

from grader.child import cgroup
from grader.hidden import chosen, module_name, registry
from grader.trusted import gradebook, nbexec, status
from grader.trusted.borrowed import borrowed_modules
from grader.trusted.budget import StudentBudget
from grader.trusted.findings import GRADER_ERROR
from grader.trusted.pool import run_pool
from grader.trusted.progress import Progress
from grader.trusted.references import References
from grader.trusted.runs import WORKER_OVERHEAD_MB, LabRun, kernel_server, workers_that_fit, zygote
from grader.trusted.sandbox import (
    Capabilities,
    Limits,
    Scratch,
    probe_capabilities,
    scratch_size_mb,
)
from grader.trusted.status import Gpu, Item, Notebook, Problem, Run, Student, gpu_summary
from grader.trusted.unpack import POSITIONAL, Submission, discover, flag_reason, unpack
from grader.trusted.verdicts import CellContext, Finding, GroupOutcome, JudgeContext, Verdict
from minimodel.course import LABS, find_lab
from minimodel.implementation import REPO_ROOT, STUBS_DIR
from minimodel.messages import bilingual


@dataclass
class Options:
    workers: int = 0  # 0: every core
    device: str = "auto"  # cpu | cuda | auto
    force: bool = False
    shard: tuple[int, int] | None = None  # (index, count), index from 0
    limits: Limits = field(default_factory=Limits)
    progress: bool = True
    labs: list[str] | None = None


@dataclass
class RunContext:
    """What every worker needs (picklable)."""

    out: Path
    scratch_root: Path
    caps: Capabilities
    limits: Limits
    config: str
    extra_hide: list[Path]
    mpl_cache: Path
    labs: list[str] | None
    # cpu; cuda (--device cuda: the CUDA runs count for the whole class); cuda-report (they
    # run, in their own column)
    device: str = "cpu"

    @property
    def cuda(self) -> bool:
        """Whether the probe groups also run on the GPU (``cuda`` and ``cuda-report``)."""
        return self.device != "cpu"


class GradingError(RuntimeError):
    """The run cannot start (bad arguments, output folder in use, no references)."""


def code_version(root: Path = REPO_ROOT) -> str:
    """Hash of the grader's code, the labs' folders (notebook source, hidden checks, reference
    outputs) and the catalogue of mistakes: part of the config, so that a change to any of them
    regrades every submission."""
    digest = hashlib.sha256()
    grader = sorted(p for p in (root / "grader").rglob("*") if p.suffix in (".py", ".json")
                    and "samples" not in p.parts and "__pycache__" not in p.parts)
    labs = sorted(p for lab in LABS for p in (root / lab.folder).glob("*") if p.is_file())
    for path in [*grader, *labs, *sorted((root / "solutions" / "mistakes").glob("*.py"))]:
        digest.update(str(path.relative_to(root)).encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def settings(limits: Limits, device: str, labs: list[str] | None,
             caps: Capabilities) -> dict:
    """What decides a grade besides the submission, and what the sandbox enforced (the
    per-process limits alone, where no control group could be made); shards merge only when
    theirs are equal."""
    return {"code": code_version(), "limits": dict(sorted(asdict(limits).items())),
            "device": device, "labs": sorted(chosen(labs)), "isolation": caps.enforced()}


def in_shard(student_id: str, shard: tuple[int, int]) -> bool:
    """Whether ``student_id`` belongs to shard ``(index, count)``: by a hash of the id alone,
    so a submission added or removed between jobs moves nobody else."""
    index, count = shard
    return int(hashlib.sha256(student_id.encode()).hexdigest(), 16) % count == index


_source = cache(nbexec.source_notebook)


def _missing_module(module: str) -> Finding:
    path = f"{POSITIONAL}/{module}.py"
    return Finding("missing-file",
                   f"No encuentro {path} en tu entrega: los apartados que dependen de él valen 0.",
                   f"{path} is not in your submission: the items that depend on it score 0.")


def grade_student(student_id: str, path: Path, ctx: RunContext) -> dict:
    """Grade one submission completely and return its record (written by the caller)."""
    start = time.monotonic()
    submission = unpack(student_id, path)
    safe = gradebook.safe_id(student_id)
    log_path = ctx.out / "logs" / f"{safe}.log"
    log_path.write_bytes(f"== {student_id} {datetime.datetime.now().isoformat()}\n".encode())
    modules = {m for c in registry().values() for m in c.modules()}
    files = {m: submission.module(m) for m in modules if submission.module(m) is not None}
    # Read before anything runs: a module that takes its values from the course scores 0.
    borrowed = borrowed_modules(files)
    # A graded module the submission lacks comes from the released stubs, so that a module that
    # imports it (two_d.py and scaling.py import rope.py) still imports; its own items still
    # say it is missing.
    files.update({m: (STUBS_DIR / f"{m}.py").read_bytes() for m in sorted(modules - set(files))
                  if (STUBS_DIR / f"{m}.py").exists()})
    scratch_dir = ctx.scratch_root / safe
    if scratch_dir.exists():
        shutil.rmtree(scratch_dir)
    scratch = Scratch(scratch_dir, files, scratch_size_mb(ctx.limits, ctx.caps))
    record = {"student_id": student_id, "safe_id": safe, "complete": False,
              "fingerprint": submission.fingerprint(), "config": ctx.config,
              "device": ctx.device,
              "messages": [m.to_json() for m in [*submission.flags, *submission.messages]],
              "labs": {}, "found": submission.found,
              "instructor": {"groups": {}, "notebooks": {}}}
    problems: list[str] = []
    budget = StudentBudget(ctx.limits.student_cpu_s, ctx.limits.student_wall_s)
    try:
        for lab_id, checks in chosen(ctx.labs).items():
            record["labs"][lab_id] = _grade_lab(lab_id, checks, submission, scratch, ctx,
                                                log_path, record, problems, budget, borrowed)
    finally:
        scratch.remove()
    _lift_syntax_errors(record)
    gradebook.recompute_totals(record)
    record["gpu"] = _gpu_summary(record)
    record["instructor"]["budget"] = budget.summary()
    if budget.skipped:
        problems.append(Problem.STUDENT_WALL_CAP if budget.finding().code == "student-wall-cap"
                        else Problem.STUDENT_CPU_CAP)
    record["status"] = status.problems(problems)
    if submission.flags:
        record["status"] = status.flagged(flag_reason(submission))
    record["graded_at"] = datetime.datetime.now().isoformat(timespec="seconds")
    record["wall_s"] = round(time.monotonic() - start, 2)
    record["complete"] = True
    return record


@cache
def _lab_data(lab_id: str) -> tuple[References, dict]:
    """What every submission of a lab is judged against: its reference outputs and its hidden
    inputs. Loaded once per worker, not once per student, and
    read-only, so that no judge can change them for the next student."""
    checks = registry()[lab_id]
    refs = References(lab_id)
    arrays = checks.inputs()
    for array in [*refs.arrays.values(), *arrays.values()]:
        array.flags.writeable = False
    return refs, arrays


def _grade_lab(lab_id, checks, submission: Submission, scratch: Scratch, ctx: RunContext,
               log_path: Path, record: dict, problems: list, budget: StudentBudget,
               borrowed: dict[str, Finding]) -> dict:
    lab = find_lab(lab_id)
    refs, arrays = _lab_data(lab_id)
    run = LabRun(checks, scratch, scratch.add_inputs(module_name(lab_id), arrays), ctx.limits,
                 budget, zygote(ctx), ctx.caps, ctx.extra_hide, ctx.cuda, log_path)
    # the groups of a missing module, or of one that borrows its answers, are not run
    not_run = {**borrowed, **{g.module: _missing_module(g.module) for g in checks.groups
                              if submission.module(g.module) is None}}

    outcomes = run.groups(lambda group: group.variants(ctx.cuda), not_run)
    record["instructor"]["groups"].update(run.reports)
    if any(o.status == Run.ERROR for runs in outcomes.values() for o in runs.values()):
        problems.append(Problem.SANDBOX)
    items = []
    for item in checks.items:
        group = checks.group(item.group)
        runs = outcomes[item.group]
        gpu = meta = None
        if group.device:
            n = len(group.cases)
            gpu = runs.get("cuda") or GroupOutcome.absent("cuda", Run.NOT_RUN, n)
            meta = runs.get("meta") or GroupOutcome.absent("meta", runs["cpu"].status, n)
        judge_ctx = JudgeContext(item=item, group=group, run=runs["cpu"], gpu_run=gpu,
                                 refs=refs.group(item.group), inputs=arrays,
                                 module_file=f"{group.module}.py", limits=ctx.limits.group(),
                                 meta_run=meta, gpu_scores=ctx.device == "cuda",
                                 mistakes=refs.mistakes(item.group))
        items.append(_judged(item.judge, judge_ctx, item.key, item.title_es, item.title_en,
                             item.points, problems))
    notebook_info: dict = {}
    if checks.notebook:
        probes = {c.group: outcomes[c.group]["cpu"] for c in checks.notebook.cells if c.group}
        items += _grade_notebook(run, submission, ctx, refs, record, notebook_info, problems,
                                 probes)
    return {"title_es": lab.title_es, "title_en": lab.title_en,
            "items": [v.to_json() for v in items], "notebook": notebook_info}


def _judged(judge, context, key, title_es, title_en, points, problems) -> Verdict:
    try:
        return judge(context)
    except Exception:  # a bug in a judge must not cost the student: flag it
        problems.append(Problem.JUDGE)
        return Verdict(key, title_es, title_en, points, 0.0, Item.FAILED, [GRADER_ERROR],
                       instructor={"traceback": traceback.format_exc()[-4000:]})


def _grade_notebook(run: LabRun, submission, ctx, refs, record, info, problems,
                    probes: dict[str, GroupOutcome]) -> list[Verdict]:
    """The notebook's cells judged from what its kernel recorded, and from ``probes`` (the runs
    of the probe groups that cells name: what the student's modules give, outside the kernel)."""
    lab_id, checks, budget = run.checks.lab_id, run.checks, run.budget
    slug = checks.notebook.slug
    source = _source(slug)
    graded = nbexec.graded_cells(source)
    raw = submission.notebook(slug)
    records: dict = {}
    findings: list[Finding] = []
    outcome: dict = {}
    if raw is None:
        findings.append(Finding(
            "missing-notebook",
            f"No encuentro labs/{slug}.ipynb en tu entrega: las celdas calificadas del "
            "cuaderno valen 0.",
            f"labs/{slug}.ipynb is not in your submission: the notebook's graded cells score "
            "0."))
    else:
        try:
            student = nbformat.reads(raw.decode("utf-8"), as_version=4)
        except Exception:  # noqa: BLE001 - anything unreadable counts as missing
            student = None
            findings.append(Finding(
                "bad-notebook",
                f"labs/{slug}.ipynb no se puede leer como cuaderno; cuenta como ausente.",
                f"labs/{slug}.ipynb cannot be read as a notebook; it counts as missing."))
        if student is not None and budget.spent():
            budget.skipped.append(f"{lab_id}/notebook")
            findings.append(budget.finding())
        elif student is not None:
            records, outcome, build = run.notebook(source, student, kernel_server(ctx),
                                                   ctx.mpl_cache)
            if outcome.get("status") == Notebook.ERROR:
                problems.append(Problem.NOTEBOOK)
            findings += nbexec.kernel_findings(outcome, build)
            record["instructor"]["notebooks"][lab_id] = {**outcome, **build}
    info.update({"present": raw is not None, "status": outcome.get("status", Notebook.MISSING),
                 "findings": [f.to_json() for f in findings]})
    verdicts = []
    cells = {c.grade_id: c for c in checks.notebook.cells}
    for grade_id, meta in graded.items():
        key = f"nb/{grade_id}"
        if meta["kind"] == "manual":
            title_es, title_en = checks.notebook.title(grade_id)
            verdicts.append(Verdict(key, title_es, title_en, meta["points"], None, Item.MANUAL,
                                    kind="manual"))
            continue
        cell = cells.get(grade_id)
        if cell is None:
            problems.append(Problem.NO_HIDDEN_CHECK)
            verdicts.append(Verdict(key, grade_id, grade_id, meta["points"], 0.0, Item.FAILED,
                                    instructor={"error": "no hidden check for this cell"}))
            continue
        values = records.get(grade_id, {name: None for name in cell.records})
        context = CellContext(cell, meta["points"], values, refs.cell(grade_id), outcome,
                              refs.cell_mistakes(grade_id), probes.get(cell.group))
        verdicts.append(_judged(cell.judge, context, key, cell.title_es, cell.title_en,
                                meta["points"], problems))
    return verdicts


def _lift_syntax_errors(record: dict) -> None:
    """A syntax error is said once at the top of the feedback, not only under each item."""
    seen = {m.get("es") for m in record["messages"]}
    for lab in record["labs"].values():
        for verdict in lab["items"]:
            for finding in verdict.get("findings", []):
                if finding["code"] in ("syntax-error", "not-utf8") and finding["es"] not in seen:
                    seen.add(finding["es"])
                    record["messages"].append(finding)


def _gpu_summary(record: dict) -> Gpu:
    return gpu_summary([v["gpu"] for lab in record["labs"].values() for v in lab["items"]
                        if v.get("gpu")])


# --- the run -------------------------------------------------------------------------------------

def _clean_stale_scratch() -> None:
    with contextlib.suppress(OSError):
        cgroup.remove_stale()  # the control groups of a grader killed with its monitors
    for folder in Path(tempfile.gettempdir()).glob("mmg-run-*"):
        try:
            pid = int((folder / "pid").read_text())
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (OSError, ValueError):
            continue


def check_class(submissions: Path, out: Path, options: Options) -> None:
    """Refuse, before anything is written, what cannot be graded: ``submissions`` not a folder
    of submissions, an unknown ``--device`` or lab, ``out`` equal to ``submissions``."""
    submissions, out = submissions.resolve(), out.resolve()
    if not submissions.is_dir():
        raise GradingError(bilingual(f"{submissions} no es una carpeta de entregas.",
                                     f"{submissions} is not a folder of submissions."))
    if (submissions / POSITIONAL).is_dir() or any(submissions.glob("labs/*.ipynb")):
        raise GradingError(bilingual(
            f"{submissions} parece la entrega de un solo estudiante (tiene {POSITIONAL} o "
            "labs/): pasa la carpeta que contiene una carpeta o un .zip por estudiante.",
            f"{submissions} looks like one student's submission (it has {POSITIONAL} or labs/): "
            "pass the folder that holds one folder or .zip per student."))
    if options.device not in ("cpu", "cuda", "auto"):
        raise GradingError(bilingual("--device es cpu, cuda o auto.",
                                     "--device must be cpu, cuda or auto."))
    chosen(options.labs)  # before anything is written: a lab id with no hidden checks is refused
    if out == submissions:
        raise GradingError(bilingual(
            "--out no puede ser la carpeta de las entregas: sus carpetas se tomarían por entregas.",
            "--out cannot be the submissions folder: its folders would be taken for submissions."))


def grade(submissions: Path, out: Path, options: Options, stream=sys.stderr) -> dict:
    """Grade every submission in ``submissions`` into ``out``; return a summary."""
    submissions, out = submissions.resolve(), out.resolve()
    check_class(submissions, out, options)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "w") as lock:  # closing it releases the lock
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise GradingError(bilingual(f"Otro calificador está escribiendo en {out}.",
                                         f"Another grader is writing to {out}.")) from None
        with open(out / "grading.log", "a", encoding="utf-8") as log:
            return _grade_locked(submissions, out, options, stream, log)


def _grade_locked(submissions: Path, out: Path, options: Options, stream, log) -> dict:
    caps = probe_capabilities(check_cuda=options.device != "cpu")
    cuda = bool(caps.cuda) and options.device != "cpu"
    if options.device == "cuda" and not cuda:
        raise GradingError(bilingual("--device cuda: aquí no hay GPU.",
                                     "--device cuda: no GPU is available here."))

    def say(text: str, *, screen: bool = True) -> None:
        log.write(text + "\n")
        log.flush()
        if screen:
            stream.write(text + "\n")
            stream.flush()

    say(f"== minimodel-grader grade {submissions} -> {out} "
        f"({datetime.datetime.now().isoformat(timespec='seconds')})")
    for line in caps.report():
        say(line)
    for lab_id, checks in registry().items():
        try:
            stale = References(lab_id).stale(checks)
        except FileNotFoundError as error:
            raise GradingError(str(error)) from None
        if stale:
            say(f"  WARNING: reference outputs of lab {lab_id} are older than "
                f"{', '.join(stale)}; run `minimodel-grader references`")
    entries = [e for e in discover(submissions) if e[1] != out]  # OUT may lie among them
    if options.shard:
        entries = [e for e in entries if in_shard(e[0], options.shard)]
    device = "cuda" if options.device == "cuda" else "cuda-report" if cuda else "cpu"
    if device == "cuda-report":
        say("  GPU found: CUDA results go to the gpu_checks column and change no points "
            "(use --device cuda for the whole class to make them count)")
    run_settings = settings(options.limits, device, options.labs, caps)
    before = (gradebook.load_run(out) or {}).get("settings", {}).get("labs")
    if before and before != run_settings["labs"] and not options.force:
        raise GradingError(bilingual(
            f"{out} guarda las notas de los laboratorios {', '.join(before)}; calificar aquí "
            f"{', '.join(run_settings['labs'])} las sustituiría (con las notas a mano que se "
            "añadieron). Elige otra --out, o --force para sustituirlas.",
            f"{out} holds the grades of labs {', '.join(before)}; grading "
            f"{', '.join(run_settings['labs'])} here would replace them (with any manual grades "
            "merged in). Choose another --out, or --force to replace them."))
    config = hashlib.sha256(repr(sorted(run_settings.items())).encode()).hexdigest()[:16]
    gradebook.write_run(out, {"settings": run_settings,
                              "config": config, "shard": list(options.shard or ()) or None,
                              "students": [student_id for student_id, _ in entries]})
    todo = []  # not graded yet, or graded from another submission or configuration
    for student_id, path in entries:
        previous = gradebook.load_record(out, student_id) or {}
        if options.force or not previous.get("complete") or previous.get("config") != config \
                or previous.get("fingerprint") != unpack(student_id, path).fingerprint():
            todo.append((student_id, path))
    skipped = len(entries) - len(todo)
    workers = options.workers or len(os.sched_getaffinity(0))
    fit = workers_that_fit(options.limits)
    if workers > fit:
        say(f"  WARNING: {workers} workers at these limits could together need more memory than "
            f"this machine has ({options.limits.kernel_memory_mb + WORKER_OVERHEAD_MB} MiB "
            "each): a student's allocation near its limit could be stopped by the system instead "
            f"of failing on the limit; --workers {fit} makes that impossible / {workers} "
            "procesos con estos límites podrían necesitar más memoria de la que hay; con "
            f"--workers {fit} una asignación siempre falla en su límite")
    shard = f" (shard {options.shard[0]}/{options.shard[1]})" if options.shard else ""
    say(f"{len(entries)} submissions{shard}: {skipped} already graded, grading {len(todo)} "
        f"with {min(workers, max(len(todo), 1))} workers")
    _clean_stale_scratch()
    (out / "logs").mkdir(exist_ok=True)
    scratch_root = Path(tempfile.mkdtemp(prefix="mmg-run-"))
    os.chmod(scratch_root, 0o711)
    (scratch_root / "pid").write_text(str(os.getpid()))
    ctx = RunContext(out=out, scratch_root=scratch_root, caps=caps,
                     limits=options.limits, config=config, extra_hide=[submissions, out],
                     mpl_cache=out / ".cache" / "matplotlib", labs=options.labs,
                     device=device)
    progress = Progress(len(todo), stream, options.progress)
    failures: list[str] = []
    start = time.monotonic()
    try:
        if todo:
            failures = run_pool(todo, ctx, workers, progress, say)
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)
    records = gradebook.rebuild(out)
    problems = [r["student_id"] for r in records if r.get("status", Student.OK) != Student.OK]
    flagged = [r["student_id"] for r in records if status.is_flagged(r.get("status"))]
    elapsed = time.monotonic() - start
    summary = {"submissions": len(entries), "graded": len(todo) - len(failures),
               "skipped": skipped, "failed": failures, "problems": problems,
               "flagged": flagged, "seconds": round(elapsed, 2), "workers": workers,
               "records": records}
    say(f"run completed: {summary['graded']} graded, {skipped} already graded, "
        f"{len(failures)} could not be graded (retried on the next run), "
        f"{len(flagged)} flagged (submission unreadable, see status), "
        f"{len(problems) - len(flagged)} with other problems to review; {elapsed:.1f} s; "
        f"grades in {out / 'grades.csv'}")
    for record in records:
        if record["student_id"] in flagged:
            say(f"  {Student.FLAGGED}: {record['student_id']}: "
                f"{status.flag_reason(record['status'])}")
    return summary
