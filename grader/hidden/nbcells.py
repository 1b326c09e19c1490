"""Judges of notebook cells shared by the labs' hidden checks (trusted side only).

A cell's records are expressions evaluated in the student's kernel. Records whose name starts
with ``_`` are inputs kept only to recognise known mistakes (the parent recomputes what a mistake
would give from them); they score nothing. Every other record is one check: compared with the
reference notebook's value, or judged by a property (for values that depend on training or on
random initialisations the student's code may draw in another order).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from grader.findings import Finding, mismatch_findings
from grader.verdicts import (
    CellContext,
    Check,
    Tolerance,
)


def arr(ctx: CellContext, name: str, position: int = 0) -> np.ndarray | None:
    """The student's recorded value as float64 (``None`` when absent or not numeric)."""
    out = ctx.out(name, position)
    if out is None or out.get("array") is None:
        return None
    return np.asarray(out["array"], dtype=np.float64)


def ref(ctx: CellContext, name: str, position: int = 0) -> np.ndarray | None:
    """The reference notebook's recorded value as float64."""
    value = ctx.ref(name, position).get("array")
    return None if value is None else np.asarray(value, dtype=np.float64)


def outputs(ctx: CellContext, name: str) -> list[np.ndarray | None]:
    """Every output of a record that holds a list or tuple, as float64 arrays."""
    record = ctx.records.get(name)
    if not record or not record.get("ok"):
        return []
    return [None if o.get("array") is None else np.asarray(o["array"], dtype=np.float64)
            for o in record.get("outputs", [])]


def text(ctx: CellContext, name: str) -> str | None:
    out = ctx.out(name)
    return None if out is None else out.get("value")


def prop(test: Callable[[CellContext], bool | None], *needs: str, es: str = "", en: str = ""):
    """A property check: ``test(ctx)`` is true. ``needs``: records it reads (their absence or
    exception is reported as such, not as a wrong value); ``es``/``en``: the property, said to
    the student when it does not hold."""

    def check(ctx: CellContext) -> Check:
        for name in needs:
            if ctx.out(name) is None:
                error = ctx.error(name)
                return Check(False, "error" if error else "missing", error=error)
        try:
            ok = bool(test(ctx))
        except Exception:  # noqa: BLE001 - nonsense values (wrong kind, shape, count): not met
            ok = False
        return Check(ok, "" if ok else "property")

    check.es, check.en = es, en
    return check


def cell_judge(*, tol: Tolerance | None = None, tolerances: dict[str, Tolerance] | None = None,
               tols: dict[str, Tolerance] | None = None, dtypes: tuple[str, ...] = (),
               properties: dict[str, Callable] | None = None,
               diagnose: Callable[[CellContext, dict[str, bool]], list] | None = None):
    """A judge: one check per record not starting with ``_``, plus one per property.

    ``tols``: a tolerance per record (else ``tol`` / ``tolerances``); ``dtypes``: records whose
    dtype must also match the reference's; ``properties``: name -> :func:`prop` check (a record
    of the same name is judged by it instead of compared); ``diagnose(ctx, ok)`` -> findings
    (``Finding`` or ``(code, es, en)``) for recognised mistakes, ``ok`` being name -> passed.
    """
    properties = properties or {}
    tols = tols or {}

    def judge(ctx: CellContext):
        names = [n for n in ctx.cell.records if not n.startswith("_") and n not in properties]
        checks = [ctx.compare(name, tol=tols.get(name, tol), tolerances=tolerances,
                              check_kind=False, check_dtype=name in dtypes) for name in names]
        checks += [check(ctx) for check in properties.values()]
        ok = dict(zip([*names, *properties], (c.ok for c in checks), strict=True))
        found: list[Finding] = []
        if diagnose and not all(ok.values()):
            try:
                raw = diagnose(ctx, ok) or []
            except Exception:  # noqa: BLE001 - nonsense outputs: no diagnosis, the checks
                raw = []  # say enough
            found = [f if isinstance(f, Finding) else Finding(*f) for f in raw]
        unmet = [Finding("nb-property", f"No se cumple: {check.es}", f"Not met: {check.en}")
                 for check, result in zip(properties.values(), checks[len(names):],
                                          strict=True)
                 if result.reason == "property" and check.es]
        if unmet and not found:  # said next to the generic findings of the other records
            found = mismatch_findings(checks)
        return ctx.verdict(checks, found + unmet)

    return judge
