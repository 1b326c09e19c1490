"""Items whose module calls another of the student's modules: ``two_d.py`` and ``scaling.py``
import functions of ``rope.py`` (lab 17.03).

In the sandbox a module imports the student's own ``rope.py`` (the grader carries every graded
module of the submission, and the released stub for one the submission lacks). The policy:

- a failure that rope.py explains does not cost the item's points twice when the item's own code
  can still be verified: if the student's output is exactly what their code gives on top of their
  own rope.py (the lab probes the rope functions it uses, on the same inputs, through the module's
  namespace), the case passes and a note (no points) says that rope.py is wrong;
- when it cannot be verified (rope.py not implemented, raising, or wrong in a way that hides the
  item's own result), the case fails, and the feedback says clearly, in both languages, that the
  item depends on rope.py and that rope.py is graded in lab 17.03;
- a rope.py that cannot be imported stops the whole module from importing: every item of the lab
  says so.
"""

from __future__ import annotations

from collections.abc import Callable

from grader.hidden.common import whole_case
from grader.trusted.findings import Finding, mismatch_findings
from grader.trusted.verdicts import Check, JudgeContext, Tolerance

ROPE_FILE = "rope.py"


def in_rope(error: dict | None) -> bool:
    """Did this exception come from inside the student's rope.py?"""
    return bool(error) and error.get("file") == ROPE_FILE


def import_findings(ctx: JudgeContext) -> list[Finding]:
    """A finding when the module could not be imported because of rope.py."""
    error = ctx.run.import_error
    if not error or not (in_rope(error) or "positional.rope" in error.get("message", "")):
        return []
    module = ctx.module_file
    return [Finding(
        "depends-on-rope",
        f"{module} importa funciones de tu rope.py (lab 17.03), y rope.py no se puede importar: "
        f"ningún apartado de {module} puede ejecutarse hasta que lo arregles. rope.py se "
        "califica en el lab 17.03; aquí cuenta porque sin él este módulo no carga.",
        f"{module} imports functions from your rope.py (lab 17.03), and rope.py cannot be "
        f"imported: no item of {module} can run until you fix it. rope.py is graded in lab "
        "17.03; it matters here because this module does not load without it.")]


STATES = {
    "stub": ("todavía no está implementado", "is not implemented yet"),
    "raises": ("lanza una excepción", "raises an exception"),
    "values": ("no da los valores esperados", "does not give the expected values"),
}


def split_rope_failures(ctx: JudgeContext, checks: list[Check], *, function: str,
                        uses: tuple[str, str], probes: Callable[[int], list[int]],
                        composed: Callable[[int], bool],
                        probe_tolerances: dict[str, Tolerance] | None = None,
                        ) -> tuple[list[Check], list[Finding], list[Finding], list[int]]:
    """Separate the failing cases that the student's rope.py explains.

    ``checks[k]`` is case ``k`` of the item's group compared with its reference; ``probes(k)``
    the indices (in the same group) of the rope functions called on case ``k``'s inputs;
    ``composed(k)`` whether the student's output of case ``k`` is what their code gives on top
    of the rope probes' outputs. Returns the new checks (credited cases pass; cases rope.py
    hides fail with reason ``"rope"``), findings that cost points, notes that do not, and the
    failing cases that rope.py does not explain.
    """
    checks = list(checks)
    if ctx.run.import_error:  # nothing ran: import_findings says why
        return checks, [], [], [k for k, c in enumerate(checks) if not c.ok]
    blamed, credited, states = [], [], set()
    for k, check in enumerate(checks):
        if check.ok:
            continue
        error = ctx.error(k)
        if error is not None and not in_rope(error):
            continue  # an exception of the item's own code
        if in_rope(error):
            states.add("stub" if error.get("type") == "NotImplementedError" else "raises")
            checks[k] = Check(False, "rope")
            blamed.append(k)
            continue
        probe_checks = [whole_case(ctx, p, tolerances=probe_tolerances) for p in probes(k)]
        if all(c.ok or c.reason in ("error", "missing") for c in probe_checks):
            continue  # rope.py gives the right values here: the failure is the item's own
        states.add("values")
        if composed(k):
            checks[k] = Check(True, max_err=check.max_err)
            credited.append(k)
        else:
            checks[k] = Check(False, "rope")
            blamed.append(k)
    findings, notes = [], []
    total = len(checks)
    uses_es, uses_en = uses
    if blamed:
        state = next(s for s in ("stub", "raises", "values") if s in states)
        es, en = STATES[state]
        findings.append(Finding(
            "depends-on-rope",
            f"Este apartado depende de rope.py: {function} usa {uses_es} de tu rope.py (lab "
            f"17.03), que {es}. En {len(blamed)} de {total} casos ocultos el fallo viene de ahí "
            "y tu parte no se puede comprobar hasta que rope.py funcione. rope.py se califica en "
            "el lab 17.03.",
            f"This item depends on rope.py: {function} uses {uses_en} from your rope.py (lab "
            f"17.03), which {en}. In {len(blamed)} of {total} hidden cases the failure comes "
            "from there, and your part cannot be checked until rope.py works. rope.py is graded "
            "in lab 17.03."))
    if credited:
        notes.append(Finding(
            "depends-on-rope",
            f"Tu {function} usa bien {uses_es} de tu rope.py, pero rope.py no da los valores "
            "esperados: en {0} de {1} casos ocultos tu resultado es el que corresponde a tu "
            "rope.py, así que aquí no resta. Corrige rope.py (lab 17.03, donde se califica)."
            .format(len(credited), total),
            f"Your {function} uses {uses_en} from your rope.py correctly, but rope.py does not "
            f"give the expected values: in {len(credited)} of {total} hidden cases your result "
            "is the one your rope.py leads to, so it costs nothing here. Fix rope.py (lab "
            "17.03, where it is graded).", scoring=False))
    return checks, findings, notes, [k for k, c in enumerate(checks) if not c.ok and
                                     c.reason != "rope"]


def verdict(ctx: JudgeContext, checks: list[Check], diagnoses: list[Finding],
            rope_findings: list[Finding], notes: list[Finding]):
    """The item's verdict: its own diagnoses (or the generic findings for its own failures when
    none applies), plus what rope.py explains."""
    own = [c for c in checks if c.reason != "rope"]
    if rope_findings and not diagnoses:
        diagnoses = mismatch_findings(own)
    return ctx.verdict(checks, diagnoses=[*diagnoses, *rope_findings, *import_findings(ctx)],
                       notes=notes)
