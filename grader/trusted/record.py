"""A student's record, ``OUT/records/<student>.json``: what one grading of one submission gave.

The record is the single source of the gradebook and the feedback (``grader.trusted.gradebook``,
``grader.trusted.feedback``), which read and update it as JSON. :class:`StudentRecord` is its
shape, built by ``grader.trusted.student`` and written as :meth:`StudentRecord.to_json` gives it,
the same JSON, key for key, as the plain dictionaries written before it existed (and read back by
:meth:`StudentRecord.from_json`). The totals (``auto``, ``manual``, ``total``, their maxima,
``manual_pending``) are :func:`grader.trusted.gradebook.recompute_totals`'s, recomputed whenever
grades change (manual grades merged); they are 0 until then.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from grader.trusted.status import Gpu


@dataclass(kw_only=True)
class LabTotals:
    """A lab's points, by kind (``recompute_totals``)."""

    auto: float = 0.0
    auto_max: float = 0.0
    manual: float = 0.0
    manual_max: float = 0.0
    score: float = 0.0  # auto + manual
    max: float = 0.0  # auto_max + manual_max


@dataclass(kw_only=True)
class LabRecord(LabTotals):
    """One lab of the student."""

    title_es: str
    title_en: str
    items: list[dict]  # each item's ``Verdict.to_json()``, probe-group items then notebook cells
    notebook: dict = field(default_factory=dict)  # present, status, findings; {} without one


@dataclass(kw_only=True)
class Instructor:
    """What only the instructor reads: how each run went, never shown to the student."""

    groups: dict[str, dict] = field(default_factory=dict)  # "<lab>/<group>/<variant>" -> run
    notebooks: dict[str, dict] = field(default_factory=dict)  # lab -> the kernel's run, if any
    budget: dict = field(default_factory=dict)  # StudentBudget.summary()


@dataclass(kw_only=True)
class StudentRecord:
    """One student's grading."""

    student_id: str
    safe_id: str  # the file names' form of the id (``gradebook.safe_id``)
    complete: bool  # written last: a record without it is graded again
    fingerprint: str  # of the submission: a changed one is graded again
    config: str  # of the run's settings: a changed one is graded again
    device: str  # cpu | cuda | cuda-report
    messages: list[dict]  # findings about the submission as a whole (Finding.to_json)
    labs: dict[str, LabRecord]
    found: dict[str, str]  # canonical path -> where in the submission it was found
    instructor: Instructor
    gpu: Gpu  # the worst of the items' GPU checks
    status: str  # grader.trusted.status.Student: ok, problems: ..., flagged: ...
    graded_at: str = ""
    wall_s: float = 0.0
    auto: float = 0.0
    auto_max: float = 0.0
    manual: float = 0.0
    manual_max: float = 0.0
    total: float = 0.0
    max_total: float = 0.0
    manual_pending: int = 0  # written answers still to grade by hand

    def to_json(self) -> dict:
        """The record as ``OUT/records/<student>.json`` holds it."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> StudentRecord:
        """A record read back (:meth:`to_json` of it is ``data`` again)."""
        labs = {lab_id: LabRecord(**lab) for lab_id, lab in data["labs"].items()}
        return cls(**{**data, "labs": labs, "instructor": Instructor(**data["instructor"])})
