"""Grade a class: unpack each submission, run it in the sandbox, judge, record, report.

A run is three steps (:func:`grade`): :func:`_plan` (probe the platform, refuse what cannot be
graded, write ``run.json``, pick the submissions not graded yet), :func:`_run` (grade them in the
workers) and :func:`_summarise` (rebuild the gradebook, say what the run gave).

One worker process grades one student at a time (all labs, ``grader.trusted.student``), so
``--workers N`` grades N students at once. For each student the worker builds a scratch folder,
starts one sandbox zygote for the module probes and one sandboxed kernel per lab notebook, reads
back plain data and judges it against the reference outputs; the verdicts, feedback and record
are written by the worker (atomically, the record last). The main process only schedules, shows
progress and rebuilds the gradebook. See ``grader.trusted.gradebook`` for the output layout and
resuming, ``grader.trusted.runs`` for how a run in the sandbox is limited and retried,
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
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

from grader.child import cgroup
from grader.hidden import chosen, registry
from grader.trusted import gradebook, status
from grader.trusted.pool import run_here, run_pool
from grader.trusted.progress import Progress
from grader.trusted.references import References
from grader.trusted.runs import WORKER_OVERHEAD_MB, workers_that_fit
from grader.trusted.sandbox import (
    RUN_PREFIX,
    Capabilities,
    Limits,
    probe_capabilities,
    scratch_parent,
)
from grader.trusted.status import Student
from grader.trusted.unpack import POSITIONAL, discover, unpack
from minimodel.course import LABS
from minimodel.implementation import REPO_ROOT
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
    in_process: bool = False  # one worker, this process (``pool.run_here``): Gradescope's


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


# --- the run -------------------------------------------------------------------------------------

def _clean_stale_scratch() -> None:
    with contextlib.suppress(OSError):
        cgroup.remove_stale()  # the control groups of a grader killed with its monitors
    parents = {Path(tempfile.gettempdir()), scratch_parent()}
    for folder in (f for parent in sorted(parents) for f in parent.glob(f"{RUN_PREFIX}*")):
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
    """A run, once ``out`` is ours: what to grade, grading it, what it gave."""
    say = partial(_say, log, stream)
    plan = _plan(submissions, out, options, say)
    failures, start = _run(plan, options, stream, say)
    return _summarise(plan, failures, start, say)


Say = Callable[..., None]  # say(text, screen=True): to the run's log, and the screen unless not


def _say(log, stream, text: str, *, screen: bool = True) -> None:
    log.write(text + "\n")
    log.flush()
    if screen:
        stream.write(text + "\n")
        stream.flush()


@dataclass
class Plan:
    """What a run grades, and with what."""

    submissions: Path
    out: Path
    caps: Capabilities
    device: str  # cpu | cuda | cuda-report (RunContext.device)
    config: str  # the hash of the settings, kept in every record
    entries: list[tuple[str, Path]]  # every submission of the class (of the shard)
    todo: list[tuple[str, Path]]  # those not graded yet with this submission and config
    workers: int


def _plan(submissions: Path, out: Path, options: Options, say: Say) -> Plan:
    """Probe the platform, refuse what cannot be graded here, write ``run.json`` and pick the
    submissions to grade."""
    caps, device = _platform(options)
    say(f"== minimodel-grader grade {submissions} -> {out} "
        f"({datetime.datetime.now().isoformat(timespec='seconds')})")
    for line in caps.report():
        say(line)
    _warn_stale_references(say)
    entries = [e for e in discover(submissions) if e[1] != out]  # OUT may lie among them
    if options.shard:
        entries = [e for e in entries if in_shard(e[0], options.shard)]
    if device == "cuda-report":
        say("  GPU found: CUDA results go to the gpu_checks column and change no points "
            "(use --device cuda for the whole class to make them count)")
    run_settings = settings(options.limits, device, options.labs, caps)
    _refuse_other_labs(out, run_settings["labs"], options.force)
    config = hashlib.sha256(repr(sorted(run_settings.items())).encode()).hexdigest()[:16]
    gradebook.write_run(out, {"settings": run_settings,
                              "config": config, "shard": list(options.shard or ()) or None,
                              "students": [student_id for student_id, _ in entries]})
    todo = _to_grade(entries, out, config, options.force)
    workers = options.workers or len(os.sched_getaffinity(0))
    _warn_memory(workers, options.limits, say)
    shard = f" (shard {options.shard[0]}/{options.shard[1]})" if options.shard else ""
    say(f"{len(entries)} submissions{shard}: {len(entries) - len(todo)} already graded, grading "
        f"{len(todo)} with {min(workers, max(len(todo), 1))} workers")
    return Plan(submissions=submissions, out=out, caps=caps, device=device, config=config,
                entries=entries, todo=todo, workers=workers)


def _platform(options: Options) -> tuple[Capabilities, str]:
    """The sandbox's capabilities and the run's device mode (``cuda-report``: a GPU found with
    ``--device auto``); ``--device cuda`` without a GPU is refused."""
    caps = probe_capabilities(check_cuda=options.device != "cpu")
    cuda = bool(caps.cuda) and options.device != "cpu"
    if options.device == "cuda" and not cuda:
        raise GradingError(bilingual("--device cuda: aquí no hay GPU.",
                                     "--device cuda: no GPU is available here."))
    return caps, "cuda" if options.device == "cuda" else "cuda-report" if cuda else "cpu"


def _warn_stale_references(say: Say) -> None:
    for lab_id, checks in registry().items():
        try:
            stale = References(lab_id).stale(checks)
        except FileNotFoundError as error:
            raise GradingError(str(error)) from None
        if stale:
            say(f"  WARNING: reference outputs of lab {lab_id} are older than "
                f"{', '.join(stale)}; run `minimodel-grader references`")


def _refuse_other_labs(out: Path, labs: list[str], force: bool) -> None:
    """Grading other labs into a folder that holds grades would replace them (``--force``)."""
    before = (gradebook.load_run(out) or {}).get("settings", {}).get("labs")
    if before and before != labs and not force:
        raise GradingError(bilingual(
            f"{out} guarda las notas de los laboratorios {', '.join(before)}; calificar aquí "
            f"{', '.join(labs)} las sustituiría (con las notas a mano que se "
            "añadieron). Elige otra --out, o --force para sustituirlas.",
            f"{out} holds the grades of labs {', '.join(before)}; grading "
            f"{', '.join(labs)} here would replace them (with any manual grades "
            "merged in). Choose another --out, or --force to replace them."))


def _to_grade(entries: list[tuple[str, Path]], out: Path, config: str,
              force: bool) -> list[tuple[str, Path]]:
    """The submissions not graded yet, or graded from another submission or configuration."""
    todo = []
    for student_id, path in entries:
        previous = gradebook.load_record(out, student_id) or {}
        if force or not previous.get("complete") or previous.get("config") != config \
                or previous.get("fingerprint") != unpack(student_id, path).fingerprint():
            todo.append((student_id, path))
    return todo


def _warn_memory(workers: int, limits: Limits, say: Say) -> None:
    fit = workers_that_fit(limits)
    if workers > fit:
        say(f"  WARNING: {workers} workers at these limits could together need more memory than "
            f"this machine has ({limits.kernel_memory_mb + WORKER_OVERHEAD_MB} MiB "
            "each): a student's allocation near its limit could be stopped by the system instead "
            f"of failing on the limit; --workers {fit} makes that impossible / {workers} "
            "procesos con estos límites podrían necesitar más memoria de la que hay; con "
            f"--workers {fit} una asignación siempre falla en su límite")


def _run(plan: Plan, options: Options, stream, say: Say) -> tuple[list[str], float]:
    """Grade ``plan.todo`` in the workers: (the students that could not be graded, when the
    grading started)."""
    _clean_stale_scratch()
    (plan.out / "logs").mkdir(exist_ok=True)
    scratch_root = Path(tempfile.mkdtemp(prefix=RUN_PREFIX, dir=scratch_parent()))
    os.chmod(scratch_root, 0o711)
    (scratch_root / "pid").write_text(str(os.getpid()))
    ctx = RunContext(out=plan.out, scratch_root=scratch_root, caps=plan.caps,
                     limits=options.limits, config=plan.config,
                     extra_hide=[plan.submissions, plan.out],
                     mpl_cache=plan.out / ".cache" / "matplotlib", labs=options.labs,
                     device=plan.device)
    progress = Progress(len(plan.todo), stream, options.progress)
    start = time.monotonic()
    try:
        if options.in_process:
            failures = run_here(plan.todo, ctx, progress, say)
        else:
            failures = run_pool(plan.todo, ctx, plan.workers, progress, say) if plan.todo else []
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)
    return failures, start


def _summarise(plan: Plan, failures: list[str], start: float, say: Say) -> dict:
    """Rebuild the gradebook and say what the run gave: the summary ``grade`` returns."""
    records = gradebook.rebuild(plan.out)
    problems = [r["student_id"] for r in records if r.get("status", Student.OK) != Student.OK]
    flagged = [r["student_id"] for r in records if status.is_flagged(r.get("status"))]
    elapsed = time.monotonic() - start
    skipped = len(plan.entries) - len(plan.todo)
    summary = {"submissions": len(plan.entries), "graded": len(plan.todo) - len(failures),
               "skipped": skipped, "failed": failures, "problems": problems,
               "flagged": flagged, "seconds": round(elapsed, 2), "workers": plan.workers,
               "records": records}
    say(f"run completed: {summary['graded']} graded, {skipped} already graded, "
        f"{len(failures)} could not be graded (retried on the next run), "
        f"{len(flagged)} flagged (submission unreadable, see status), "
        f"{len(problems) - len(flagged)} with other problems to review; {elapsed:.1f} s; "
        f"grades in {plan.out / 'grades.csv'}")
    for record in records:
        if record["student_id"] in flagged:
            say(f"  {Student.FLAGGED}: {record['student_id']}: "
                f"{status.flag_reason(record['status'])}")
    return summary
