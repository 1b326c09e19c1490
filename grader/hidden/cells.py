"""The judge of notebook cells (trusted side): recorded values, properties and known mistakes.

A cell's records (``CellCheck.records``) are expressions evaluated in the student's kernel where
the test cell was. Three kinds:

- deterministic values (formulas, tables, positions, masks): each one check, against the reference
  notebook's value within ``tols[name]``, else ``tol``, else the dtype's tolerance (``tolerances``
  by dtype, else ``grader.trusted.verdicts.TOLERANCES``);
- records named ``_...``: inputs kept to recognise mistakes or to test properties; they score
  nothing by themselves;
- volatile records (``CellCheck.volatile``): training results, not bit-reproducible across
  machines, whose references keep only kind, dtype and shape. They are judged by properties of
  the student's own values, e.g. "the cached logits equal the full pass within 1e-4", where the
  other side is computed in the kernel from the notebook's given cells, never by student code.
  Where such a property depends on the student's modules alone, a probe group computes it
  outside the kernel too, and both must hold (``Property.probed``): a forged record gains nothing.

A deterministic record that is a call of the student's module functions (``chunk_positions(2,
3)``) can be computed again by the cell's probe group (:func:`recomputed`): its check then passes
only when the kernel's value is also the value the module gives outside the kernel
(``cell_judge(recomputed=...)``), so a cell that overwrites it gains nothing.

A :class:`Property` is one more check; a :class:`Mistake` names a typical error by the values it
would record. A diagnosis that cannot be said as "the records hold these wrong values" is a small
function ``(ctx, ok) -> [Finding]`` (``ok``: check name -> passed), :func:`diagnosis` when it
names one finding on one failing record.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

import numpy as np

from grader.hidden.carried import built_on
from grader.hidden.spec import Case, Group
from grader.trusted.findings import mismatch_findings
from grader.trusted.redact import known_name
from grader.trusted.verdicts import (
    MISTAKE_TOLERANCE,
    CellContext,
    Check,
    Finding,
    Tolerance,
    values_close,
)

EXACT = Tolerance(0.0, 0.0)
CLOSE = Tolerance(1e-5, 1e-5)  # two float32 computations of the same value, in another order
NONE = "none"  # what a recorded ``None`` reads as


def value(ctx: CellContext, name: str, position: int = 0):
    """The student's recorded value as a float64 array, ``NONE`` for ``None``, a ``str`` for a
    string, or ``None`` when there is nothing usable (an error, an unsupported object)."""
    out = ctx.out(name, position)
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


def outputs(ctx: CellContext, name: str) -> list[np.ndarray | None]:
    """Every output of a record that holds a list or tuple, as float64 arrays (``None`` where an
    output is not numeric)."""
    record = ctx.records.get(name)
    if not record or not record.get("ok"):
        return []
    return [None if o.get("array") is None else np.asarray(o["array"], dtype=np.float64)
            for o in record.get("outputs", [])]


def ref(ctx: CellContext, name: str, position: int = 0) -> np.ndarray | None:
    """The reference notebook's recorded value as float64."""
    array = ctx.ref(name, position).get("array")
    return None if array is None else np.asarray(array, dtype=np.float64)


def same(actual, expected, tol: Tolerance = EXACT) -> bool:
    """``actual`` (from :func:`value`) equals ``expected`` (an array, a number, ``None``)."""
    if expected is None or isinstance(expected, str):
        return actual == (NONE if expected is None else expected)
    if actual is None or isinstance(actual, str):
        return False
    expected = np.asarray(expected, dtype=np.float64)
    return values_close(actual, expected, tol)[0]  # a shape that differs is not close


def close(a, b, tol: Tolerance = CLOSE) -> bool:
    """Two recorded arrays of the same shape, finite and within ``tol`` of each other."""
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return False
    return bool(np.all(np.isfinite(a))) and values_close(a, b, tol)[0]


@dataclass(frozen=True)
class Property:
    """A check of the student's own values: ``test(*values)`` must be true, one value per name
    (:func:`value`; for a record whose reference holds several outputs, the list of the
    student's outputs). ``es``/``en`` say what is wrong when it is not.

    A property usually stands for a diagnosis: each name must first have the reference's shape,
    and its finding replaces the generic ones. ``requirement=True`` (see :func:`requirement`):
    a property the lab states, checked whatever the shape, said as "not met" after the generic
    findings of the other records.

    ``probed``: cases of the cell's probe group (``CellCheck.group``) that compute the same
    values from the student's modules, outside the kernel. The property then holds only when
    ``test`` also holds for their outputs, joined in one flat array: the kernel's values can
    take the check away (the notebook's own function is wrong), never give it."""

    code: str
    names: tuple[str, ...]
    test: Callable[..., bool]
    es: str
    en: str
    requirement: bool = False
    probed: tuple[int, ...] = ()

    def check(self, ctx: CellContext) -> Check:
        values = []
        for name in self.names:
            error = ctx.error(name)
            if error:
                return Check(False, "error", error=error)
            if ctx.out(name) is None:
                return Check(False, "missing")
            if not self.requirement:
                shape = ctx.compare(name, check_kind=False, check_dtype=False, values=False)
                if not shape.ok:  # the reference keeps the shape even of a volatile value
                    return shape
            several = len(ctx.refs.get(name, [])) > 1
            values.append([value(ctx, name, p) for p in range(len(ctx.records[name]["outputs"]))]
                          if several else value(ctx, name))
        try:
            ok = bool(self.test(*values))
        except Exception:  # noqa: BLE001 - a value of the wrong kind or shape fails the check
            ok = False
        if not ok:
            return Check(False, "property")
        return self.check_probe(ctx) if self.probed else Check(True)

    def check_probe(self, ctx: CellContext) -> Check:
        """``test`` on what the probe group computed from the student's modules: every case of
        ``probed`` ran and their outputs pass it (else ``probe``, with what a case raised)."""
        found = _probe_outputs(ctx, self.probed)
        if isinstance(found, Check):
            return found
        try:
            ok = bool(self.test(found))
        except Exception:  # noqa: BLE001 - outputs of the wrong kind fail the check
            ok = False
        return Check(ok, "" if ok else "probe")


def _probe_outputs(ctx: CellContext, indices: tuple[int, ...]) -> np.ndarray | Check:
    """The outputs of the cell's probe group's cases ``indices``, each flattened, joined in
    order (float64); a failed ``probe`` check, with what a case raised, when one did not run."""
    found = []
    for index in indices:
        outputs = ctx.probe.outputs(index) if ctx.probe is not None else None
        arrays = [o.get("array") for o in outputs or ()]
        if not arrays or any(a is None for a in arrays):
            error = ctx.probe.error(index) if ctx.probe is not None else None
            return Check(False, "probe", error=error)  # the group's log says more
        found += [np.asarray(a, dtype=np.float64).ravel() for a in arrays]
    return np.concatenate(found)


def differences_below(code: str, name: str, limit: float, es: str, en: str,
                      probed: tuple[int, ...] = ()) -> Property:
    """A property of differences that must be small (cached decoding against the full pass): the
    record ``name`` holds at least one, and every one is finite and below ``limit``; so do the
    outputs of the ``probed`` cases (:class:`Property`), when there are."""
    def test(values: np.ndarray) -> bool:
        return bool(values.size) and bool(np.all(np.isfinite(values))) and \
            bool(np.all(values < limit))

    return Property(code, (name,), test, es, en, probed=probed)


PROBED = Finding(
    "nb-probed",
    "El corrector lo calcula también fuera de tu cuaderno, con tus módulos de "
    "src/minimodel/positional/ dentro del Mini-GPT, y ahí no se cumple (o no se pudo calcular): "
    "lo que grabe tu kernel no basta. Revisa cómo sitúan tus módulos lo que llega tras la "
    "caché KV.",
    "The grader also computes it outside your notebook, with your modules of "
    "src/minimodel/positional/ inside the Mini-GPT, and there it does not hold (or could not be "
    "computed): what your kernel records is not enough. Check how your modules place what "
    "comes after the KV cache.")


RECOMPUTED = Finding(
    "nb-recomputed",
    "El corrector calcula también este valor con tus módulos de src/minimodel/positional/, fuera "
    "de tu cuaderno, y no coincide con lo que grabó tu kernel: puntúa lo que dan tus módulos. "
    "¿Redefiniste en el cuaderno una función del módulo, o cambiaste lo que graba la celda?",
    "The grader also computes this value with your modules of src/minimodel/positional/, outside "
    "your notebook, and it does not match what your kernel recorded: what your modules give is "
    "what scores. Did you redefine a function of the module in the notebook, or change what the "
    "cell records?")


def recomputed(key: str, module: str,
               calls: dict[str, list[tuple[str, tuple]]]) -> tuple[Group, dict]:
    """A probe group ``key`` that computes records again from ``module``, and what
    ``cell_judge(recomputed=...)`` takes. ``calls``: record -> the ``(function, args)`` whose
    outputs, flattened and joined in order, are that record (``"rels": [("relative_positions",
    (c, q)) for c, q in cases]`` for ``torch.cat([relative_positions(c, q).flatten() ...])``)."""
    cases, indices = [], {}
    for record, record_calls in calls.items():
        indices[record] = tuple(range(len(cases), len(cases) + len(record_calls)))
        cases += [Case("function", name, args) for name, args in record_calls]
    return Group(key, module, tuple(cases)), indices


def _agrees_with_probe(ctx: CellContext, name: str, indices: tuple[int, ...]) -> Check:
    """The record ``name`` equals, exactly, what the probe's cases ``indices`` computed (each
    output flattened, joined in order); ``probe`` when it does not or a case did not run."""
    found = _probe_outputs(ctx, indices)
    if isinstance(found, Check):
        return found
    mine = value(ctx, name)
    ok = isinstance(mine, np.ndarray) and mine.size == found.size and \
        bool(np.array_equal(mine.ravel(), found, equal_nan=True))
    return Check(ok, "" if ok else "probe")


def requirement(names: tuple[str, ...], test: Callable[..., bool], es: str, en: str) -> Property:
    """A property the lab asks for (accuracy above 0.9, the head looks 3 back), not met when
    ``test(*values)`` is false: said as "No se cumple: <es>" / "Not met: <en>"."""
    return Property("nb-property", names, test, f"No se cumple: {es}", f"Not met: {en}",
                    requirement=True)


@dataclass(frozen=True)
class Mistake:
    """A typical mistake: ``values(get)`` gives the value each named record would hold with it
    (``get(name)``: the student's value of another record, e.g. a truth computed in the kernel,
    or with ``"ref:name"`` the reference notebook's; ``None`` in the result: the record would
    hold ``None``; an empty result: the student's values do not allow the comparison). Named
    when one of its compared records fails (or, for records judged by properties only, one
    check of the cell) and every named record holds its value within ``tol``."""

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
        if any(n in checks for n in wrong):  # one of its compared values must fail
            failing = any(n in checks and not checks[n].ok for n in wrong)
        else:  # values judged by properties: one check of the cell must fail
            failing = any(not c.ok for c in checks.values())
        return failing and all(same(value(ctx, n), v, self.tol) for n, v in wrong.items())


def cell_judge(*, tol: Tolerance | None = None, tols: dict[str, Tolerance] | None = None,
               tolerances: dict[str, Tolerance] | None = None, exact_kind: tuple[str, ...] = (),
               properties: tuple[Property, ...] = (), mistakes: tuple[Mistake, ...] = (),
               diagnoses: tuple[Callable[[CellContext, dict], list], ...] = (),
               recomputed: dict[str, tuple[int, ...]] | None = None):
    """A cell's judge: one check per deterministic record (``tols[name]``, else ``tol``, else
    ``tolerances`` by dtype; the kind too for ``exact_kind``; not the dtype), one
    per property. The score is the fraction of checks passed. When one fails, the findings are
    the mistakes recognised (the catalogue's, for a cell that names one, then ``mistakes``), the
    failing properties and what ``diagnoses`` find, in that order, in place of the generic
    findings (which stay, before them, next to unmet requirements). After a failed earlier cell,
    a record that raises ``KeyError`` reads as not computed (a dictionary that cell left
    unfilled), not as an exception. ``recomputed`` (from :func:`recomputed`): records whose
    check also needs the cell's probe group to give the same value. In a cell that names a
    catalogue, a record, or a property's values, that holds what a classic mistake of the module
    gives passes with a note (:func:`carried_records`, :func:`carried_property`)."""
    tols = tols or {}
    recomputed = recomputed or {}

    def judge(ctx: CellContext):
        named: dict[str, Check] = {
            name: ctx.compare(name, tol=tols.get(name, tol), tolerances=tolerances,
                              check_kind=name in exact_kind, check_dtype=False)
            for name in ctx.cell.records
            if not name.startswith("_") and name not in ctx.cell.volatile}
        carried = carried_records(ctx, named)
        for name, indices in recomputed.items():
            if named[name].ok:
                named[name] = _agrees_with_probe(ctx, name, indices)
        for k, prop in enumerate(properties):
            named[f"property:{k}"] = prop.check(ctx)
            if not named[f"property:{k}"].ok and (notes := carried_property(ctx, prop)):
                named[f"property:{k}"] = Check(True)
                carried += [f for f in notes if f not in carried]
        if ctx.kernel.get("cell_errors"):
            named = {k: Check(False, "missing") if c.reason == "error" and (
                c.error or {}).get("type") == "KeyError" else c for k, c in named.items()}
        checks = list(named.values())
        if all(c.ok for c in checks):
            return ctx.verdict(checks, carried)
        failed = [p for k, p in enumerate(properties) if named[f"property:{k}"].reason in
                  ("property", "probe")]
        known = [*(Mistake(m["code"], lambda get, v=m["values"]: v, *_after_target(m))
                   for m in ctx.mistakes), *mistakes]
        found = [Finding(m.code, m.es, m.en) for m in known if m.matches(ctx, named)]
        found += [Finding(p.code, p.es, p.en) for p in failed if not p.requirement]
        ok = {k: c.ok for k, c in named.items()}
        for diagnose in diagnoses:
            with suppress(Exception):  # nonsense outputs: no diagnosis, the checks say enough
                found += [f if isinstance(f, Finding) else Finding(*f)
                          for f in diagnose(ctx, ok) or ()]
        if any(named[f"property:{k}"].reason == "probe" for k in range(len(properties))):
            found.append(PROBED)
        if any(named[name].reason == "probe" for name in recomputed):
            found.append(RECOMPUTED)
        unmet = [Finding(p.code, p.es, p.en) for p in failed if p.requirement]
        if unmet and not found:  # said next to the generic findings of the other records
            found = mismatch_findings(checks)
        if carried and not found:  # the notes below do not say what else failed
            found = mismatch_findings(checks)
        return ctx.verdict(checks, found + unmet + carried)

    return judge


def _holds(ctx: CellContext, name: str, wrong) -> bool:
    """The student's record ``name`` holds ``wrong`` (a catalogue mistake's value: a float64
    array, of all the outputs stacked for a record of several, ``None`` or a string)."""
    several = len(ctx.refs.get(name, [])) > 1
    if several and isinstance(wrong, np.ndarray):
        mine = outputs(ctx, name)
        return len(mine) == len(wrong) and all(same(m, w, MISTAKE_TOLERANCE)
                                               for m, w in zip(mine, wrong, strict=True))
    return same(value(ctx, name), wrong, MISTAKE_TOLERANCE)


def _after_target(mistake: dict) -> tuple[str, str]:
    """A catalogue mistake's texts after the function that holds it, as the self-check heads
    them."""
    where = f"{mistake['target']}: " if mistake.get("target") else ""
    return where + mistake["es"], where + mistake["en"]


def carried_records(ctx: CellContext, named: dict[str, Check]) -> list[Finding]:
    """Error carried forward in a cell that names the module's catalogue: the records that fail
    only because they hold what a classic mistake of the module gives (the notebook's work done
    right on top of it, or a plain call of the module, which the module's items grade) pass;
    notes (no points) name the mistake, after the function that holds it, and say so."""
    notes: list[Finding] = []
    failing = {n for n, c in named.items() if not c.ok}
    for mistake in ctx.mistakes:  # each one that fits is named (two may give the same values)
        credited = [n for n, wrong in mistake["values"].items()
                    if n in failing and _holds(ctx, n, wrong)]
        if not credited:
            continue
        for name in credited:
            named[name] = Check(True)
        target = mistake.get("target") or "módulo / module"
        notes += [Finding(mistake["code"], *_after_target(mistake), scoring=False),
                  built_on(target, len(credited), len(named),
                           ("valores de esta celda", "values of this cell"))]
    return [f for i, f in enumerate(notes) if f not in notes[:i]]


def carried_property(ctx: CellContext, prop: Property) -> list[Finding]:
    """Error carried forward for a property of the student's own values (a requirement the lab
    states, computed by the notebook's given cells from the module's output): when every value
    it reads holds what one classic mistake of the module gives, it is the notebook's work done
    right on top of that mistake, and the notes that say so (as :func:`carried_records`');
    otherwise none."""
    for mistake in ctx.mistakes:
        if prop.names and all(n in mistake["values"] and not ctx.error(n) and
                              _holds(ctx, n, mistake["values"][n]) for n in prop.names):
            target = mistake.get("target") or "módulo / module"
            return [Finding(mistake["code"], *_after_target(mistake), scoring=False),
                    built_on(target, len(prop.names), len(ctx.cell.records),
                             ("valores de esta celda", "values of this cell"))]
    return []


def formula_mistakes(record: str, formula: Callable[..., np.ndarray], table: dict,
                     tol: Tolerance = MISTAKE_TOLERANCE) -> tuple[Mistake, ...]:
    """One :class:`Mistake` per entry ``code: (options, (es, en))`` of ``table``: ``record``
    holds ``formula(**options)``, e.g. the attention of fixed inputs without the scale."""
    return tuple(Mistake(code, lambda get, o=options: {record: formula(**o)}, es, en, tol)
                 for code, (options, (es, en)) in table.items())


def diagnosis(record: str, test: Callable[[CellContext], bool], code: str, es: str, en: str):
    """A diagnosis of one finding, ``es``/``en``, named when ``record``'s check fails and
    ``test(ctx)`` holds (a test that raises on the student's values, say on a value that is not
    there, names nothing: :func:`cell_judge`)."""
    return lambda ctx, ok: [Finding(code, es, en)] if not ok[record] and test(ctx) else []


def wrong_text(record: str, code: str, es: str, en: str):
    """A diagnosis for a recorded string (a dtype, a type's name) that is not the reference's:
    ``es``/``en`` with what the student's holds in place of ``{got}``, if it is a name of
    NumPy's, PyTorch's or Python's (``grader.trusted.redact.known_name``; any other string the
    kernel recorded could carry anything)."""

    def diagnose(ctx: CellContext, ok: dict) -> list[Finding]:
        got = (ctx.out(record) or {}).get("value")  # a recorded string, None for anything else
        if not got or got == ctx.ref(record).get("value"):
            return []
        got_es, got_en = (got, got) if known_name(got) else ("otra cosa", "something else")
        return [Finding(code, es.format(got=got_es), en.format(got=got_en))]

    return diagnose


def wrong_dtype(function: str, record: str, code: str, es: str, en: str):
    """:func:`wrong_text` for a recorded dtype: "<function> devuelve <got>; <es>"."""
    return wrong_text(record, code, f"{function} devuelve {{got}}; {es}",
                      f"{function} returns {{got}}; {en}")


def not_a_float(function: str, es: str = "usa .item()", en: str = "use .item()"):
    """:func:`wrong_text` for the type's name (record ``kind``) of what should be a Python
    float: "<function> devuelve <got>, no un float de Python: <es>."."""
    return wrong_text("kind", "nb-not-float",
                      f"{function} devuelve {{got}}, no un float de Python: {es}.",
                      f"{function} returns {{got}}, not a Python float: {en}.")
