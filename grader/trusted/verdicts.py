"""Judging, in the trusted parent: outputs against reference outputs, findings in both languages.

Nothing here runs student code. The child's outputs arrive as checked plain arrays (see
``grader.trusted.safe_io.read_group``); each case is compared with the reference output of the same
hidden input, and each item's judge (in ``solutions/labs/*/checks.py``) turns the comparisons into a
:class:`Verdict`: a score, a status, and findings for the student in Spanish and English.

Tolerances
----------
Values are compared in float64 as ``|actual - expected| <= atol + rtol * |expected|``, with the
tolerance of the expected output's dtype unless an item says otherwise:

============  ==========  ==========  ==================================================
dtype          rtol        atol        why
============  ==========  ==========  ==================================================
float64        1e-7        1e-9        a few ulps of different but exact formulations
float32        1e-5        1e-6        ~100 ulps: other operation orders, fused kernels
float16        2e-3        2e-3        two roundings (table cast, then the sum) at 2^-11
bfloat16       1.6e-2      1.6e-2      two roundings at 2^-8
============  ==========  ==========  ==================================================

Items whose reference is computed from angles in float64 but where computing them in float32 is
an accepted choice document their looser tolerance next to the item (lab 17.01: ``atol = 2e-4``
for the sinusoidal table, enough for float32 angles up to the hidden lengths used).

Feedback never shows hidden inputs or expected values: findings speak of "k of n hidden cases",
shapes and dtypes the specification already fixes, named mistakes, and of what the student's code
raised only a built-in exception's class or a stub's own message (``grader.trusted.redact``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from grader.trusted.findings import (
    SEE_NOTEBOOK,
    Finding,
    exception_findings,
    mismatch_findings,
    run_findings,
)
from grader.trusted.status import Gpu, Item, Run, item_status, run_status
from minimodel.selfcheck.contracts import MISTAKE_ATOL, MISTAKE_RTOL


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


TOLERANCES: dict[str, Tolerance] = {
    "float64": Tolerance(1e-7, 1e-9),
    "float32": Tolerance(1e-5, 1e-6),
    "float16": Tolerance(2e-3, 2e-3),
    "bfloat16": Tolerance(1.6e-2, 1.6e-2),
}
DEFAULT_TOLERANCE = TOLERANCES["float32"]


MISTAKE_TOLERANCE = Tolerance(rtol=MISTAKE_RTOL, atol=MISTAKE_ATOL)  # as the self-check's


@dataclass
class Verdict:
    """The judgement of one graded item."""

    key: str
    title_es: str
    title_en: str
    points: float
    score: float | None
    status: Item
    findings: list[Finding] = field(default_factory=list)
    passed: int = 0
    total: int = 0
    gpu: Gpu | None = None  # device-sensitive items only
    kind: str = "auto"  # auto | manual
    instructor: dict = field(default_factory=dict)  # never shown to the student

    def to_json(self) -> dict:
        return asdict(self)  # the fields in order, each finding as Finding.to_json gives it


@dataclass
class Check:
    """One case compared with its reference."""

    ok: bool
    reason: str = ""  # missing | error | invalid | kind | shape | dtype | device | values
    max_err: float | None = None
    error: dict | None = None


def all_of(checks: list[Check]) -> Check:
    """One check for several outputs: the first that fails, or a pass with the largest error."""
    failing = [c for c in checks if not c.ok]
    return failing[0] if failing else Check(True, max_err=max((c.max_err or 0.0) for c in checks))


def _at(items: list, index: int, default=None):
    return items[index] if index < len(items) else default


# --- what came back from one probe group -------------------------------------------------------

@dataclass
class GroupOutcome:
    """One variant's run of a probe group, as the parent sees it."""

    variant: str
    status: Run
    cases: list
    import_error: dict | None = None
    report: dict = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    file_findings: list[Finding] = field(default_factory=list)

    @classmethod
    def from_run(cls, variant: str, report: dict, data: dict) -> GroupOutcome:
        return cls(variant, run_status(report, bool(data.get("done"))), data.get("cases", []),
                   data.get("import_error"), report, data.get("problems", []))

    @classmethod
    def absent(cls, variant: str, status: Run, n_cases: int,
               findings: list[Finding] = ()) -> GroupOutcome:
        return cls(variant, status, [None] * n_cases, file_findings=list(findings))

    def outputs(self, index: int) -> list[dict] | None:
        case = _at(self.cases, index)
        return case.get("outputs", []) if case is not None and case.get("ok") else None

    def output(self, index: int, position: int = 0) -> dict | None:
        return _at(self.outputs(index) or [], position)

    def error(self, index: int) -> dict | None:
        case = _at(self.cases, index)
        return self.import_error if case is None else case.get("error")


# --- comparisons --------------------------------------------------------------------------------

def values_close(actual: np.ndarray, expected: np.ndarray, tol: Tolerance) -> tuple[bool, float]:
    """``(ok, max abs error)`` in float64; non-finite values must match exactly."""
    a = np.asarray(actual, dtype=np.float64)
    b = np.asarray(expected, dtype=np.float64)
    if a.shape != b.shape:
        return False, float("inf")
    if a.size == 0:
        return True, 0.0
    finite = np.isfinite(b)
    if not np.array_equal(np.isfinite(a), finite) or \
            not np.array_equal(a[~finite], b[~finite], equal_nan=True):  # NaN matches NaN
        return False, float("inf")
    err = np.abs(a[finite] - b[finite])
    ok = bool(np.all(err <= tol.atol + tol.rtol * np.abs(b[finite])))
    return ok, float(err.max()) if err.size else 0.0


def compare(out: dict | None, ref: dict, *, tol: Tolerance | None = None,
            tolerances: dict[str, Tolerance] | None = None, check_dtype: bool = True,
            check_kind: bool = True, device: str | None = None, values: bool = True,
            error: dict | None = None) -> Check:
    """Compare one output of the student with the reference output of the same case."""
    if out is None:
        return Check(False, "error" if error else "missing", error=error)
    if out.get("kind") == "invalid":
        return Check(False, "invalid")
    if check_kind and (out.get("kind") != ref.get("kind") or not out.get("exact_type", True)):
        return Check(False, "kind")
    if ref.get("kind") == "string":
        same = out.get("value") == ref.get("value")
        return Check(same, "" if same else "values")
    if tuple(out.get("shape", ())) != tuple(ref.get("shape", ())):
        return Check(False, "shape")
    if check_dtype and out.get("dtype") != ref.get("dtype"):
        return Check(False, "dtype")
    if device is not None and out.get("device") != device:
        return Check(False, "device")
    if not values or ref.get("array") is None:
        return Check(True)
    if out.get("array") is None:
        return Check(False, "values")
    dtype = str(ref.get("dtype"))
    tolerance = tol or (tolerances or {}).get(dtype) or TOLERANCES.get(dtype, DEFAULT_TOLERANCE)
    ok, err = values_close(out["array"], ref["array"], tolerance)
    return Check(ok, "" if ok else "values", err)


def errors_of(checks: list[Check]) -> list[dict]:
    """What the checks that raised raised (their ``error``), in order."""
    return [c.error for c in checks if c.reason == "error" and c.error]


# --- the catalogue's mistakes ------------------------------------------------------------------

def mistake_finding(item: dict) -> Finding:
    """A catalogue mistake (``References.mistakes``' entry) as a finding: its code, and its texts
    after the function that holds it, as the self-check heads them (``apply_rotary: ...``)."""
    target = item.get("target")
    where = f"{target}: " if target else ""
    return Finding(item["code"].split(".", 1)[1], where + item["es"], where + item["en"])


def output_matches(run: GroupOutcome, index: int, outputs: list[dict] | dict) -> bool:
    """Whether ``run``'s outputs of case ``index`` are a mistake's (stored as every
    ``stride``-th value, ``grader.build.references``), or raise as the mistake does."""
    if isinstance(outputs, dict):
        return run.output(index) is None and (run.error(index) or {}).get("type") == \
            outputs["error"]
    for position, wrong in enumerate(outputs):
        got = run.output(index, position)
        if wrong.get("kind") == "none":  # the mistake returns None there
            if got is None or got.get("kind") != "none":
                return False
            continue
        if got is None or got.get("array") is None or wrong.get("array") is None or \
                tuple(np.shape(got["array"])) != tuple(wrong["shape"]):
            return False
        sample = np.asarray(got["array"]).reshape(-1)[::wrong.get("stride", 1)]
        if not values_close(sample, wrong["array"], MISTAKE_TOLERANCE)[0]:  # or another shape
            return False
    return True


# --- what a judge receives ----------------------------------------------------------------------

@dataclass(kw_only=True)
class JudgeContext:
    """Everything an item's judge may look at (all of it trusted, parent-side data); built with
    keywords only, since several fields share a type."""

    item: object  # grader.hidden.spec.Item
    group: object  # grader.hidden.spec.Group
    run: GroupOutcome  # the CPU run
    gpu_run: GroupOutcome | None  # device groups: the CUDA run, or an absent Run.NOT_RUN one
    refs: list[list[dict]]
    inputs: dict[str, np.ndarray]
    module_file: str
    limits: dict = field(default_factory=dict)
    meta_run: GroupOutcome | None = None  # device groups: the run on the meta device
    gpu_scores: bool = False  # graded with --device cuda: the CUDA run counts
    mistakes: list[dict] = field(default_factory=list)  # References.mistakes(group)
    # every probe group of the lab: key -> (Group, its CPU run, References.mistakes(key)), so
    # that an item can tell a mistake of another function of the student's (error carried
    # forward, grader.hidden.carried); ``carried``: what it credited, said as notes
    lab: dict = field(default_factory=dict)
    carried: list[Finding] = field(default_factory=list)

    def named_mistakes(self, failing: list[int]) -> list[Finding]:
        """The classic mistakes (``solutions/mistakes/``) whose outputs on the hidden inputs the
        student's match on every case of ``failing``: a finding each, with the catalogue's code
        and texts (the ones the self-check shows), after the function that holds it. When none
        explains them all (two mistakes at once), those that explain some of them."""
        shown = [(item, [k in item["cases"] and self._matches(k, item["cases"][k])
                         for k in failing]) for item in (self.mistakes if failing else ())]
        every = [mistake_finding(item) for item, matched in shown if all(matched)]
        return every or [mistake_finding(item) for item, matched in shown if any(matched)]

    def catalogue_finding(self, key: str) -> list[Finding]:
        """The catalogue's mistake ``key`` (``<module>.<code>``) of this group as a finding,
        named without matching its values (a judge that recognises it otherwise)."""
        return [mistake_finding(m) for m in self.mistakes if m["code"] == key]

    def _matches(self, index: int, outputs: list[dict] | dict) -> bool:
        return output_matches(self.run, index, outputs)

    def out(self, index: int, position: int = 0, run: GroupOutcome | None = None) -> dict | None:
        return (run or self.run).output(index, position)

    def ref(self, index: int, position: int = 0) -> dict:
        return _at(_at(self.refs, index, []), position, {"kind": "missing"})

    def error(self, index: int, run: GroupOutcome | None = None) -> dict | None:
        return (run or self.run).error(index)

    def compare(self, index: int, position: int = 0, run: GroupOutcome | None = None,
                **options) -> Check:
        return compare(self.out(index, position, run), self.ref(index, position),
                       error=self.error(index, run), **options)

    def verdict(self, checks: list[Check], *, diagnoses: list[Finding] = (),
                notes: list[Finding] = (), gpu_checks: list[Check] | None = None,
                gpu_run: GroupOutcome | None = None, expected_dtype: str | None = None,
                got_dtypes: list[str] = ()) -> Verdict:
        """The usual verdict: score from the fraction of cases passed, findings from what failed.

        Diagnoses (known mistakes, recognised by the item's judge) replace the generic mismatch
        findings; exceptions and run problems are always reported. The CUDA run is reported in
        its own column (``gpu``); it changes the score only when ``gpu_scores`` (the whole class
        graded with ``--device cuda``): then the fraction is the smaller of the two, otherwise
        what failed on the GPU is a note that costs nothing, so a grade never depends on the
        machine.
        """
        run, item = self.run, self.item
        total = len(checks)
        passed = sum(c.ok for c in checks)
        fraction = passed / total if total else 0.0
        findings = run_findings(run, self.module_file, self.limits)
        if not run.import_error:
            findings += exception_findings(errors_of(checks), total)
        findings += list(diagnoses) or mismatch_findings(checks, expected_dtype, got_dtypes)
        gpu = None
        if gpu_checks is not None:
            gpu = Gpu.NOT_RUN
            if gpu_run is not None and gpu_run.status != Run.NOT_RUN:
                gpu_passed = sum(c.ok for c in gpu_checks)
                gpu = Gpu.PASSED if gpu_checks and gpu_passed == len(gpu_checks) else Gpu.FAILED
                if self.gpu_scores:
                    fraction = min(fraction, gpu_passed / len(gpu_checks) if gpu_checks else 0.0)
                if gpu == Gpu.FAILED:
                    where = "En la GPU (CUDA): ", "On the GPU (CUDA): "
                    gpu_findings = run_findings(gpu_run, self.module_file, self.limits)
                    gpu_findings += exception_findings(errors_of(gpu_checks), len(gpu_checks))
                    gpu_findings += mismatch_findings(gpu_checks)
                    for finding in gpu_findings:
                        findings.append(Finding(finding.code, where[0] + finding.es,
                                                where[1] + finding.en,
                                                finding.scoring and self.gpu_scores))
        findings += [*notes, *self.carried]
        score = round(item.points * fraction, 2)
        unique: dict[tuple[str, str], Finding] = {}
        for finding in findings:
            unique.setdefault((finding.code, finding.en), finding)
        return Verdict(
            key=item.key, title_es=item.title_es, title_en=item.title_en, points=item.points,
            score=score, status=item_status(score, item.points), findings=list(unique.values()),
            passed=passed, total=total, gpu=gpu,
            instructor={"run": run.status, "reasons": [c.reason for c in checks],
                        "max_err": [c.max_err for c in checks],
                        "wall_s": run.report.get("wall_s"),
                        "output_bytes": run.report.get("output_bytes"),
                        "output_head": (run.report.get("output_head") or "")[:2000],
                        "gpu_run": gpu_run.status if gpu_run else None},
        )


@dataclass
class CellContext:
    """What a notebook cell's judge may look at: the values recorded in the kernel, and what
    the cell's probe group computed from the student's modules outside it."""

    cell: object  # grader.hidden.spec.CellCheck
    points: float
    records: dict[str, dict | None]
    refs: dict[str, list[dict]]
    kernel: dict  # how the notebook run went (status, errors per cell)
    mistakes: list[dict] = field(default_factory=list)  # References.cell_mistakes(grade_id)
    probe: GroupOutcome | None = None  # the run of the cell's probe group (CellCheck.group)

    def out(self, name: str, position: int = 0) -> dict | None:
        record = self.records.get(name)
        return _at(record.get("outputs", []), position) if record and record.get("ok") else None

    def error(self, name: str) -> dict | None:
        record = self.records.get(name)
        return record.get("error") if record and not record.get("ok") else None

    def ref(self, name: str, position: int = 0) -> dict:
        return _at(self.refs.get(name, []), position, {"kind": "missing"})

    def compare(self, name: str, **options) -> Check:
        """Compare every recorded output of ``name``: the first that fails, or a pass."""
        count = max(1, len(self.refs.get(name, [])))
        return all_of([compare(self.out(name, p), self.ref(name, p), error=self.error(name),
                               **options) for p in range(count)])

    def verdict(self, checks: list[Check], diagnoses: list[Finding] = ()) -> Verdict:
        total = len(checks)
        passed = sum(c.ok for c in checks)
        score = round(self.points * passed / total, 2) if total else 0.0
        findings: list[Finding] = []
        # A NameError here means an earlier cell failed to define the value: say it that way.
        errors = [e for e in errors_of(checks) if e.get("type") != "NameError"]
        findings += exception_findings(errors, total, SEE_NOTEBOOK)
        missing = sum(c.reason == "missing" or (c.reason == "error" and c.error and
                                                c.error.get("type") == "NameError")
                      for c in checks)
        if missing:
            findings.append(Finding(
                "not-recorded",
                f"{missing} de {total} valores no llegaron a calcularse (¿una celda anterior "
                "falló o el cuaderno se detuvo?).",
                f"{missing} of {total} values were never computed (did an earlier cell fail, "
                "or did the notebook stop?)."))
        findings += list(diagnoses) or mismatch_findings(checks)
        cell = self.cell
        return Verdict(key=f"nb/{cell.grade_id}", title_es=cell.title_es, title_en=cell.title_en,
                       points=self.points, score=score, status=item_status(score, self.points),
                       findings=findings, passed=passed, total=total,
                       instructor={"reasons": [c.reason for c in checks],
                                   "max_err": [c.max_err for c in checks]})
