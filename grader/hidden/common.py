"""Helpers the labs' hidden checks share (trusted side only)."""

from __future__ import annotations

import numpy as np

from grader.hidden.carried import carry_forward
from grader.trusted.status import Run
from grader.trusted.verdicts import (
    MISTAKE_TOLERANCE,
    Check,
    Finding,
    JudgeContext,
    Tolerance,
    all_of,
    values_close,
)
from grader.trusted.verdicts import compare as compare_outputs
from minimodel.selfcheck.contracts import CONTRACTS, not_kept


def whole_case(ctx: JudgeContext, index: int, run=None, **options) -> Check:
    """One check for a case: every output must match its reference (a tuple: all of it)."""
    refs = ctx.refs[index] if index < len(ctx.refs) else []
    if not refs:
        return Check(False, "missing")
    return all_of([ctx.compare(index, position, run=run, **options)
                   for position in range(len(refs))])


def judged_cases(ctx: JudgeContext, compare=whole_case, cases=None,
                 **options) -> tuple[list[Check], list[int], list[Finding]]:
    """Every case of the item's group (or only its first ones, ``cases = range(n)``) against its
    reference, by ``compare(ctx, k, **options)`` (:func:`whole_case`, or ``JudgeContext.compare``
    for the first output only): the checks, the indices of the failing cases, and the catalogue's
    mistakes that explain them all. A case that is the item's own work done right on top of a
    classic mistake of another function of the student's passes
    (:func:`grader.hidden.carried.carry_forward`)."""
    cases = range(len(ctx.group.cases)) if cases is None else cases
    assert cases == range(len(cases)), "the first cases of the group, as range(n)"
    checks = carry_forward(ctx, [compare(ctx, k, **options) for k in cases])
    failing = [k for k, c in enumerate(checks) if not c.ok]
    return checks, failing, ctx.named_mistakes(failing)


def cases_judge(compare=whole_case, *, cases=None, wrong_output: tuple | None = None,
                every_failing: tuple | None = None, keeps: tuple[str, list[str]] | None = None,
                **options):
    """A judge for an item whose every case (or first ``cases``) must match its reference
    (:func:`judged_cases`); its findings are the catalogue's mistakes that explain the failing
    cases, the finding of ``wrong_output = (test, Finding)`` when a failing case ``k``'s output
    ``out`` has ``test(out, k)`` (an output of the wrong kind or dtype, say), that of
    ``every_failing = (test, Finding)`` when ``test(ctx, k)`` holds for every failing case
    ``k``, and the ``dtype-not-kept`` contract of ``keeps = (function, the dtype each case asks
    for)`` (:func:`dtype_not_kept`)."""

    def judge(ctx: JudgeContext):
        checks, failing, diagnoses = judged_cases(ctx, compare, cases, **options)
        if wrong_output and any((out := ctx.out(k)) is not None and wrong_output[0](out, k)
                                for k in failing):
            diagnoses.append(wrong_output[1])
        if every_failing and failing and all(every_failing[0](ctx, k) for k in failing):
            diagnoses.append(every_failing[1])
        if keeps:
            diagnoses += dtype_not_kept(ctx, *keeps)
        return ctx.verdict(checks, diagnoses=diagnoses)

    return judge


def contract(subject: str, code: str) -> Finding:
    """The finding of a broken return contract, in the self-check's words
    (``minimodel.selfcheck.contracts``)."""
    return Finding(code, *CONTRACTS[subject, code])


def dtype_not_kept(ctx: JudgeContext, subject: str, asked: list[str]) -> list[Finding]:
    """``subject``'s ``dtype-not-kept`` finding, in the self-check's words, when the output of a
    case ``k`` (asked for in dtype ``asked[k]``) came back in another dtype; none otherwise.
    It names the dtypes asked for, never the one that came back (``not_kept(returned=False)``):
    that one the student's code picks, maybe from the hidden input."""
    pairs = [(dtype, got) for k, dtype in enumerate(asked) if (out := ctx.out(k)) is not None
             and (got := out.get("dtype")) not in (None, dtype)]
    return [Finding("dtype-not-kept", *not_kept(subject, pairs, returned=False))] if pairs else []


def student(ctx, index, position: int = 0) -> np.ndarray | None:
    """The student's output as float64 (``None`` when there is none)."""
    out = ctx.out(index, position)
    if out is None or out.get("array") is None:
        return None
    return np.asarray(out["array"], dtype=np.float64)


def scalar(ctx, index, position: int = 0) -> float | None:
    """The student's output as a float when it holds exactly one number (``None`` otherwise)."""
    value = student(ctx, index, position)
    return None if value is None or value.size != 1 else float(value.reshape(()))


def resembles(actual: np.ndarray | None, candidate: np.ndarray | None,
              tol: Tolerance = MISTAKE_TOLERANCE) -> bool:
    """``actual`` is ``candidate`` (same shape, close values); ``None`` resembles nothing."""
    return actual is not None and candidate is not None and values_close(actual, candidate, tol)[0]


def finite_mask(actual: np.ndarray | None, expected: np.ndarray, **close) -> bool:
    """``actual`` is ``expected`` (``np.allclose(**close)``) except where ``expected`` holds −inf:
    there a finite number ≤ −1e3 (a mask written with −1e9 or −1e4)."""
    future = np.isinf(expected)
    return actual is not None and actual.shape == expected.shape and future.any() and \
        np.all(np.isfinite(actual[future])) and np.all(actual[future] <= -1e3) and \
        np.allclose(actual[~future], expected[~future], **close)


def bf16(values: np.ndarray) -> np.ndarray:
    """Round float32 values to bfloat16 (nearest, ties to even), as float32."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


def off_device(ctx: JudgeContext, n: int) -> bool:
    """Did the meta (or, when it counts, the CUDA) run fail on a device mismatch, or answer on
    the wrong device?"""
    runs = ((ctx.meta_run, "meta"), (ctx.gpu_run if ctx.gpu_scores else None, "cuda"))
    for run, device in runs:
        if run is None or run.status in (Run.NOT_RUN, Run.MISSING):
            continue
        for k in range(n):
            error = ctx.error(k, run) or {}
            message = error.get("message", "").lower() if error.get("type") not in (
                "NotImplementedError",) else ""
            out = ctx.out(k, run=run)
            if any(word in message for word in ("device", "meta", "cuda")) or (
                    out is not None and out.get("device") != device):
                return True
    return False


def _same_as_cpu(ctx: JudgeContext, index: int, tolerances: dict[str, Tolerance] | None):
    """Case ``index`` on CUDA against the student's own CPU outputs (every position), placed on
    the GPU; against the reference where the CPU run gave none."""
    on_cpu = ctx.run.outputs(index) or []
    if not on_cpu:
        return whole_case(ctx, index, run=ctx.gpu_run, device="cuda", tolerances=tolerances)
    return all_of([compare_outputs(ctx.out(index, position, ctx.gpu_run), cpu, device="cuda",
                                   tolerances=tolerances, error=ctx.error(index, ctx.gpu_run))
                   for position, cpu in enumerate(on_cpu)])


def device_judge(es: str, en: str, tolerances: dict[str, Tolerance] | None = None):
    """A judge for an item that must keep the device: each case must give the right values on
    the CPU (within ``tolerances`` by dtype) and answer on the ``meta`` device (a stand-in for a
    GPU that needs none), and on CUDA when the grader has a GPU. CPU values that are exactly a
    classic mistake of the functions judged, shown in their own items, count as right here
    (``carry_forward(own=True)``), and the ``meta`` run must give what the CPU run gave (kind,
    shape, dtype), and the CUDA run, for those cases, the CPU's values: a wrong value is not a
    wrong device. ``es``/``en``: the
    ``device`` diagnosis, given when a run on another device fails on a mismatch or answers
    elsewhere."""

    def judge_device(ctx: JudgeContext):
        n = len(ctx.group.cases)
        checks = []
        raw = [whole_case(ctx, k, tolerances=tolerances) for k in range(n)]
        values = carry_forward(ctx, raw, own=True)
        for k in range(n):  # on meta: the kind, shape and dtype the CPU run gave, placed there
            on_cpu = ctx.out(k)
            placed = compare_outputs(ctx.out(k, 0, ctx.meta_run), on_cpu if on_cpu is not None
                                     else ctx.ref(k), device="meta", values=False,
                                     error=ctx.error(k, ctx.meta_run))
            checks.append(values[k] if not values[k].ok else placed)
        # on CUDA: the reference's values, or, where the CPU's were credited, the CPU's own
        gpu_checks = [whole_case(ctx, k, run=ctx.gpu_run, device="cuda", tolerances=tolerances)
                      if raw[k].ok or not values[k].ok else _same_as_cpu(ctx, k, tolerances)
                      for k in range(n)]
        diagnoses = [Finding("device", es, en)] if off_device(ctx, n) else []
        return ctx.verdict(checks, diagnoses=diagnoses, gpu_checks=gpu_checks,
                           gpu_run=ctx.gpu_run)

    return judge_device
