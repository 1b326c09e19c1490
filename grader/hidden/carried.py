"""Error carried forward: one mistake costs once, in the function that holds it.

An item judges its own function's job (the functions its probe group calls). Where that job builds
on another function of the student's (``apply_rope`` on ``apply_rotary`` and ``rope_cos_sin``,
``RotaryEmbedding`` on ``rope_frequencies``, ``SinusoidalPositionalEncoding`` on
``sinusoidal_pe``), a case whose output is exactly what a classic mistake of that other function
gives (the catalogue's outputs on the hidden inputs, ``solutions/mistakes/``) is the item's own
work done right on top of that mistake, when the student's other function shows the same mistake
in its own cases (recorded in the same submission's probes): the case passes, and a note (no
points) says "built on your ``apply_rotary``, which has the mistake named above". The mistake
costs in its own function's items only; ``grader/mistake_matrix.md`` lists, for every mistake of
the catalogue, the items where it costs points.

What the catalogue does not hold (a wrong function in a way no classic mistake describes, two
mistakes at once) is not carried forward: it costs where it shows, and the feedback names what
it recognises. The notebook's cells that run module functions carry forward the same way
(:func:`carried_records`).
"""

from __future__ import annotations

from grader.hidden.spec import Group
from grader.trusted.verdicts import Check, Finding, JudgeContext, output_matches


def functions(group: Group) -> set[str]:
    """The functions of the student's module that the group's cases call: a function by its
    name, a module class by its class name (each of its methods is its own)."""
    return {case.name for case in group.cases if case.call in ("function", "module")}


def owns(names: set[str], target: str) -> bool:
    """Whether a mistake of ``target`` (``"f"`` or ``"Class.method"``) is in one of ``names``."""
    return target in names or target.split(".", 1)[0] in names


def shown_by_its_function(ctx: JudgeContext, mistake: dict) -> bool:
    """Whether the student's function that ``mistake`` is in shows it: in every probe group of
    the lab that calls that function directly, every case the mistake changes is the mistake's
    (at least one such group)."""
    found = False
    for group, run, mistakes in ctx.lab.values():
        if group.key == ctx.group.key or not owns(functions(group), mistake["target"]):
            continue
        stored = next((m for m in mistakes if m["code"] == mistake["code"]), None)
        if stored is None:
            continue
        if not all(output_matches(run, k, outputs) for k, outputs in stored["cases"].items()):
            return False
        found = True
    return found


def built_on(target: str, cases: int, total: int,
             unit: tuple[str, str] = ("casos ocultos", "hidden cases")) -> Finding:
    """The note of a case credited on top of another function's mistake."""
    return Finding(
        "built-on-mistake",
        f"Construido sobre tu {target}, que tiene el error indicado arriba: en {cases} de "
        f"{total} {unit[0]} tu resultado es justo el que da ese error de {target}, así "
        "que aquí no resta (se corrige donde está).",
        f"Built on your {target}, which has the mistake named above: in {cases} of {total} "
        f"{unit[1]} your result is exactly what that mistake of {target} gives, so it costs "
        "nothing here (it is marked where it is).", scoring=False)


def marked_elsewhere(target: str, cases: int, total: int) -> Finding:
    """The note of a case credited in an item that judges one side of ``target``'s job (the
    device or the dtype it keeps) when its values carry ``target``'s own classic mistake."""
    return Finding(
        "built-on-mistake",
        f"En {cases} de {total} casos ocultos tu {target} da justo lo que da uno de sus "
        "errores clásicos, que se nombra y se corrige en el apartado de sus valores; aquí no "
        "resta.",
        f"In {cases} of {total} hidden cases your {target} gives exactly what one of its classic "
        "mistakes gives, which is named and marked in the item of its values; it costs nothing "
        "here.", scoring=False)


def _reference_dtypes(ctx: JudgeContext, index: int) -> bool:
    """Whether every output of case ``index`` has its reference's dtype (a case that failed on
    its shape never had its dtype compared)."""
    outputs = ctx.run.outputs(index) or []
    return bool(outputs) and all(out.get("dtype") == ctx.ref(index, position).get("dtype")
                                 for position, out in enumerate(outputs))


def carry_forward(ctx: JudgeContext, checks: list[Check], *, own: bool = False) -> list[Check]:
    """``checks`` (case ``k`` of the item's group against its reference) with the failing cases
    that a classic mistake of another of the student's functions explains credited; the notes
    go to ``ctx.carried`` (said by ``ctx.verdict``).

    With ``own`` (an item that judges one side of its functions' job, such as the device or the
    dtype they keep, on cases whose values other items grade), a mistake of the item's own
    functions is credited too, where another group shows it; only cases that failed on their
    values or their shape (what the mistake gives) with the reference's dtypes are: a wrong kind
    or dtype is this item's to judge."""
    checks = list(checks)
    mine = functions(ctx.group)
    for mistake in ctx.mistakes:
        failing = [k for k, c in enumerate(checks) if not c.ok]
        inside = owns(mine, mistake["target"])
        if not failing or not ctx.lab or (inside and not own):
            continue
        explained = [k for k in failing if k in mistake["cases"] and
                     (not inside or (checks[k].reason in ("values", "shape") and
                                     _reference_dtypes(ctx, k))) and
                     output_matches(ctx.run, k, mistake["cases"][k])]
        if explained and shown_by_its_function(ctx, mistake):
            for k in explained:
                checks[k] = Check(True, max_err=checks[k].max_err)
            note = (marked_elsewhere if inside else built_on)(
                mistake["target"], len(explained), len(checks))
            if note not in ctx.carried:
                ctx.carried.append(note)
    return checks


def apart(reason: tuple[str, str], judge):
    """``judge`` of an item that cannot be judged apart from the functions it composes: when it
    loses points, a note (no points) says why, ``reason = (es, en)`` (the lab's
    ``LabChecks.composed``)."""

    def judge_composed(ctx: JudgeContext):
        verdict = judge(ctx)
        if verdict.score is not None and verdict.score < verdict.points:
            verdict.findings.append(Finding("composed", *reason, scoring=False))
        return verdict

    return judge_composed
