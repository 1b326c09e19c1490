"""Every status word of a grading run, one spelling each, in one place.

A status says how something went: a probe group's run in the sandbox (:class:`Report` as the
sandbox wrote it, :class:`Run` as the parent reads it), a notebook's run (:class:`Notebook`), an
item's verdict (:class:`Item`), its GPU checks (:class:`Gpu`) and the student as a whole
(:class:`Student`, with the :class:`Problem` words it lists). Each is a ``StrEnum``: a member *is*
its word, so the records, ``grades.csv`` and the feedback hold the same text as before, and a
record read back from JSON (plain strings) compares equal to the members.

"Not run" is one word for two things: a CUDA run that never started (``Run.NOT_RUN``, kept in the
instructor's part of a record) and what ``grades.csv``'s ``gpu_checks`` column and the feedback say
about that item (``Gpu.NOT_RUN``). Both are spelt ``"not run"``; ``tests/grader/test_status.py``
fails on a word spelt two ways across these enums, and on a status word written out anywhere else
in ``grader/``.

The sandbox's child (``grader/child/zygote.py``) imports nothing of the grader; the words it
writes are :class:`Report`'s, which the same test checks.
"""

from __future__ import annotations

import signal
from enum import StrEnum


class Report(StrEnum):
    """How the sandbox says one probe group's process ended (``report["status"]``)."""

    EXITED = "exited"  # it exited by itself (``exit_code`` says how)
    SIGNAL = "signal"  # a signal no limit explains (``signal`` says which)
    TIMEOUT = "timeout"  # stopped on the wall-clock limit
    CPU = "cpu"  # stopped on the CPU-time limit
    MEMORY = "memory"  # stopped on the memory limit
    GRADER_ERROR = "grader-error"  # the sandbox itself failed: never the student's fault


class Run(StrEnum):
    """How one variant of a probe group went, as the judges see it (``GroupOutcome.status``)."""

    FINISHED = "finished"  # every case ran
    EXITED = "exited"  # the process ended before the cases were done
    CRASHED = "crashed"  # killed by a signal
    TIMEOUT = "timeout"
    CPU = "cpu"
    MEMORY = "memory"
    ERROR = "error"  # the grader's own failure
    NOT_RUN = "not run"  # a CUDA run without a GPU
    MISSING = "missing"  # the module is missing or borrows its answers: scored like the stub
    CAPPED = "capped"  # the student's CPU or wall-clock budget was spent before it


def run_status(report: dict, done: bool) -> Run:
    """The :class:`Run` of a sandbox ``report`` (``done``: the child wrote that every case ran);
    a signal counts as the CPU limit when it is ``SIGXCPU``."""
    status = report.get("status", Report.GRADER_ERROR)
    if status == Report.EXITED:
        return Run.FINISHED if done else Run.EXITED
    if status == Report.SIGNAL:
        return Run.CPU if report.get("signal") == signal.SIGXCPU else Run.CRASHED
    return {Report.TIMEOUT: Run.TIMEOUT, Report.CPU: Run.CPU,
            Report.MEMORY: Run.MEMORY}.get(status, Run.ERROR)


class Notebook(StrEnum):
    """How a notebook's run in its sandboxed kernel went (``outcome["status"]``)."""

    FINISHED = "finished"
    TIMEOUT = "timeout"  # the notebook's wall-clock limit
    KERNEL_DIED = "kernel-died"  # sys.exit, os._exit, a signal
    MEMORY = "memory"  # the kernel's control group killed it on its memory limit
    ERROR = "error"  # the kernel never started, or the grader failed
    MISSING = "missing"  # no notebook ran (none handed in, unreadable, budget spent)


class Item(StrEnum):
    """An item's verdict (``Verdict.status``)."""

    PASSED = "passed"
    PARTIAL = "partial"
    FAILED = "failed"
    MISSING = "missing"  # no score at all
    MANUAL = "manual"  # a written answer still to grade by hand
    GRADED = "graded"  # a written answer graded by hand (``merge --manual``)


def item_status(score: float | None, points: float) -> Item:
    """The status of ``score`` out of ``points``."""
    if score is None:
        return Item.MISSING
    if score >= points - 1e-9:
        return Item.PASSED
    return Item.FAILED if score <= 1e-9 else Item.PARTIAL


class Gpu(StrEnum):
    """An item's CUDA checks (``Verdict.gpu``) and a student's (``grades.csv``: ``gpu_checks``)."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_RUN = "not run"  # no GPU here: never counted as passed
    NONE = "n/a"  # the student has no device-sensitive item


def gpu_summary(states: list[str]) -> Gpu:
    """A student's GPU column from their items' ``states``: the worst of them."""
    if not states:
        return Gpu.NONE
    return next((s for s in (Gpu.FAILED, Gpu.NOT_RUN) if s in states), Gpu.PASSED)


class Problem(StrEnum):
    """What a run asks the instructor to review (listed in :attr:`Student.PROBLEMS`)."""

    SANDBOX = "sandbox"  # a probe group's run failed on the grader's side
    NOTEBOOK = "notebook"  # the notebook's kernel failed on the grader's side
    JUDGE = "judge"  # a judge raised: the item was scored 0 with a grader-error finding
    NO_HIDDEN_CHECK = "no hidden check"  # a graded cell with no hidden check
    STUDENT_WALL_CAP = "student wall cap"  # the student's wall-clock budget was spent
    STUDENT_CPU_CAP = "student cpu cap"  # the student's CPU budget was spent
    BORROWED = "borrowed code"  # an item scored 0 for code that is not the student's own work


class Student(StrEnum):
    """A student's status (a record's ``status``; ``grades.csv``: ``status``). ``PROBLEMS`` and
    ``FLAGGED`` are followed by what they are about (:func:`problems`, :func:`flagged`)."""

    OK = "ok"
    AWAITING_MANUAL = "awaiting manual grading"  # shown only in grades.csv, never stored
    PROBLEMS = "problems"
    FLAGGED = "flagged"


def problems(found: list[str]) -> str:
    """``ok``, or ``problems: <each problem once, sorted>``."""
    return f"{Student.PROBLEMS}: " + ", ".join(sorted(set(found))) if found else Student.OK


def flagged(reason: str) -> str:
    """The status of a submission the grader could not read: ``flagged: <reason>``."""
    return f"{Student.FLAGGED}: {reason}"


def is_flagged(status: str | None) -> bool:
    return str(status or "").startswith(Student.FLAGGED)


def flag_reason(status: str) -> str:
    """The reason of a :func:`flagged` status."""
    return status.removeprefix(f"{Student.FLAGGED}:").strip()
