"""Judges of notebook cells (trusted side): recorded values, properties and known mistakes.

A cell's records are of two kinds (``CellCheck.volatile``):

- deterministic values (formulas, tables, positions, masks): compared with the reference
  notebook's values, exactly or within a tolerance;
- training results (losses, logits of trained models): not bit-reproducible across machines,
  so their references keep only kind, dtype and shape. They are judged by :class:`Property`
  checks on the student's own values, e.g. "the cached logits equal the full pass within 1e-4"
  or "``window_mean`` is the mean of ``losses`` over ``[0, L)``", where the other side of the
  comparison is computed in the kernel from the notebook's given cells, never by student code.

A :class:`Mistake` names a typical error by the values it would record; it is reported (in both
languages) when the student's values are those, and the cell does not pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from grader.hidden.nbcells import ref
from grader.verdicts import CellContext, Check, Finding, Tolerance, values_close

EXACT = Tolerance(0.0, 0.0)
CLOSE = Tolerance(1e-5, 1e-5)  # two float32 computations of the same mean, in another order
NONE = "none"  # what a recorded ``None`` reads as


def value(ctx: CellContext, name: str):
    """The student's recorded value as a float64 array, ``NONE`` for ``None``, a ``str`` for a
    string, or ``None`` when there is nothing usable (an error, an unsupported object)."""
    out = ctx.out(name)
    if out is None:
        return None
    if out.get("kind") == "none":
        return NONE
    if out.get("kind") == "string":
        return out.get("value")
    array = out.get("array")
    if array is None:
        return None
    try:
        return np.asarray(array, dtype=np.float64)
    except (TypeError, ValueError):
        return None


def same(actual, expected, tol: Tolerance = EXACT) -> bool:
    """``actual`` (from :func:`value`) equals ``expected`` (an array, a number, ``None``)."""
    if expected is None or isinstance(expected, str):
        return actual == (NONE if expected is None else expected)
    if actual is None or isinstance(actual, str):
        return False
    expected = np.asarray(expected, dtype=np.float64)
    return actual.shape == expected.shape and values_close(actual, expected, tol)[0]


def close(a, b, tol: Tolerance = CLOSE) -> bool:
    """Two recorded arrays of the same shape, finite and within ``tol`` of each other."""
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return False
    return a.shape == b.shape and bool(np.all(np.isfinite(a))) and values_close(a, b, tol)[0]


@dataclass(frozen=True)
class Property:
    """A check of the student's own values: each of ``names`` must have the reference's shape,
    and ``test(*values)`` (float64 arrays of ``names``, in that order) must be true; ``es``/``en``
    say what is wrong when it is not."""

    code: str
    names: tuple[str, ...]
    test: Callable[..., bool]
    es: str
    en: str

    def check(self, ctx: CellContext) -> Check:
        values = []
        for name in self.names:
            error = ctx.error(name)
            if error:
                return Check(False, "error", error=error)
            got = value(ctx, name)
            if ctx.out(name) is None:
                return Check(False, "missing")
            shape = ctx.compare(name, check_kind=False, check_dtype=False, values=False)
            if not shape.ok:  # the reference keeps the shape even of a volatile value
                return shape
            values.append(got)
        try:
            ok = bool(self.test(*values))
        except Exception:  # noqa: BLE001 - a value of the wrong kind or shape fails the check
            ok = False
        return Check(ok, "" if ok else "property")


@dataclass(frozen=True)
class Mistake:
    """A typical mistake: ``values(get)`` gives the value each named record would hold with it
    (``get(name)``: the student's value of another record, e.g. a truth computed in the kernel,
    or with ``"ref:name"`` the reference notebook's; ``None`` in the result: the record would
    hold ``None``)."""

    code: str
    values: Callable[[Callable[[str], object]], dict]
    es: str
    en: str
    tol: Tolerance = CLOSE

    def matches(self, ctx: CellContext, checks: dict[str, Check]) -> bool:
        try:
            wrong = self.values(lambda name: ref(ctx, name[4:]) if name.startswith(
                "ref:") else value(ctx, name))
        except Exception:  # noqa: BLE001 - the student's values do not allow the comparison
            return False
        if not wrong:
            return False
        if any(n in checks for n in wrong):  # one of its deterministic values must fail
            failing = any(n in checks and not checks[n].ok for n in wrong)
        else:  # values judged by properties: one check of the cell must fail
            failing = any(not c.ok for c in checks.values())
        return failing and all(same(value(ctx, n), v, self.tol) for n, v in wrong.items())


def cell_judge(*, tol: Tolerance | None = None, tolerances: dict[str, Tolerance] | None = None,
               exact_kind: tuple[str, ...] = (), properties: tuple[Property, ...] = (),
               mistakes: tuple[Mistake, ...] = (), extra=None):
    """A cell's judge: every deterministic record against the reference (``tolerances[name]``,
    else ``tol``, else the dtype's default; the kind too for ``exact_kind``), then each property.
    The score is the fraction of checks passed. Findings: the mistakes recognised, the
    properties that fail, and ``extra(ctx, ok)`` (more findings), in place of generic ones."""

    def judge(ctx: CellContext):
        named: dict[str, Check] = {}
        for name in ctx.cell.records:
            if name in ctx.cell.volatile:
                continue
            named[name] = ctx.compare(name, tol=(tolerances or {}).get(name, tol),
                                      check_kind=name in exact_kind, check_dtype=False)
        for prop in properties:
            named[f"property:{prop.code}"] = prop.check(ctx)
        if ctx.kernel.get("cell_errors"):  # a dictionary an earlier cell left unfilled
            named = {k: Check(False, "missing") if c.reason == "error" and (
                c.error or {}).get("type") == "KeyError" else c for k, c in named.items()}
        checks = list(named.values())
        diagnoses: list[Finding] = []
        if any(not c.ok for c in checks):
            diagnoses += [Finding(m.code, m.es, m.en) for m in mistakes if m.matches(ctx, named)]
            found = {d.code for d in diagnoses}
            diagnoses += [Finding(p.code, p.es, p.en) for p in properties
                          if named[f"property:{p.code}"].reason == "property"
                          and p.code not in found]
            if extra is not None:
                diagnoses += list(extra(ctx, {k: c.ok for k, c in named.items()}))
        return ctx.verdict(checks, diagnoses)

    return judge
