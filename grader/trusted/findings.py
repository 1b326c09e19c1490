"""What a student reads about a run or a comparison: findings in both languages.

A :class:`Finding` is one thing the student should know (a run that crashed or ran out of time, a
module that does not import, an exception, values or dtypes that differ), with a code the tests
and the gradebook use. What a run on hidden inputs raised is said in fixed words only
(``grader.trusted.redact``): how many cases, a built-in exception's class, a stub's own message;
never a line, a message or a literal of the student's, which :data:`SEE_CHECK` sends them to
``make check`` for. The judges (``grader.trusted.verdicts``, ``grader/hidden/``) choose which
findings a verdict carries.
"""

from __future__ import annotations

import re
import signal
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from grader.child.probe_runner import BLOCKED, OUT_OF_TIME, forbidden
from grader.trusted.redact import SYNTAX_ERRORS, exception_words, stub_words
from grader.trusted.status import Run
from minimodel.own_work import (
    CODE,
    REFUSED_INSIDE,
    TAMPERED,
    Refusal,
    explain,
    kind_of,
    refused_call,
)

if TYPE_CHECKING:
    from grader.trusted.verdicts import Check, GroupOutcome


@dataclass
class Finding:
    """One thing the student should know, in both languages. ``scoring=False``: a note only."""

    code: str
    es: str
    en: str
    scoring: bool = True

    def to_json(self) -> dict:
        return asdict(self)  # code, es, en, scoring


SIGNAL_NAMES = {signal.SIGSEGV: ("fallo de segmentación", "segmentation fault"),
                signal.SIGABRT: ("abortado", "aborted"),
                signal.SIGKILL: ("matado por el sistema, posiblemente por falta de memoria",
                                 "killed by the system, possibly out of memory"),
                signal.SIGBUS: ("error de bus", "bus error"),
                signal.SIGFPE: ("error aritmético", "arithmetic error")}


UNSAFE_OUTPUT = Finding(  # grader.trusted.safe_io refused what the sandbox left
    "unsafe-output",
    "Tu código dejó resultados que no son datos numéricos normales (un enlace, una FIFO, un "
    "archivo especial o demasiado grande); no se tuvieron en cuenta.",
    "Your code left results that are not plain numeric data (a link, a FIFO, a special file or "
    "one too large); they were ignored.")

GRADER_ERROR = Finding(  # the grader's own failure on an item, never the student's
    "grader-error",
    "El corrector tuvo un problema interno con este apartado; el profesorado lo revisará.",
    "The grader had an internal problem with this item; your instructor will review it.")


def run_findings(run: GroupOutcome, module_file: str, limits: dict | None = None) -> list[Finding]:
    """What went wrong with the whole group (file, import, timeout, crash), if anything."""
    limits = limits or {}
    findings = list(run.file_findings)
    if run.import_error:
        findings.append(import_finding(run.import_error, module_file))
    if run.status == Run.TIMEOUT:
        wall = limits.get("wall_s")  # the configured limit, never a time measured
        limit_es = f" (límite: {wall:g} s para este grupo de pruebas)" if wall else ""
        limit_en = f" (limit: {wall:g} s for this group of tests)" if wall else ""
        findings.append(Finding(
            "timeout",
            f"Tu código no terminó a tiempo{limit_es}. ¿Hay un bucle que nunca acaba o una "
            "espera?",
            f"Your code did not finish in time{limit_en}. Is there a loop that never ends, or a "
            "wait?"))
    elif run.status == Run.CPU:
        findings.append(Finding(
            "cpu", "Tu código superó el límite de tiempo de CPU.",
            "Your code went over the CPU-time limit."))
    elif run.status == Run.MEMORY:
        findings.append(Finding(
            "memory", "Tu código usó más memoria de la permitida y se detuvo.",
            "Your code used more memory than allowed and was stopped."))
    elif run.status == Run.CRASHED:  # a signal: said in words, from a fixed few
        es, en = SIGNAL_NAMES.get(run.report.get("signal"),
                                  ("por una señal", "on a signal"))
        findings.append(Finding(
            "crashed", f"El proceso que ejecutaba tu código murió ({es}).",
            f"The process running your code died ({en})."))
    elif run.status == Run.EXITED and not run.import_error:
        how_es, how_en = (("sin error", "without an error") if run.report.get("exit_code") == 0
                          else ("con un código de error", "with an error code"))
        findings.append(Finding(
            "exited",
            f"El proceso terminó {how_es} antes de acabar las pruebas. ¿Tu código llama a "
            "sys.exit() u os._exit()?",
            f"The process ended {how_en} before the tests finished. Does your code call "
            "sys.exit() or os._exit()?"))
    elif run.status == Run.ERROR:
        findings.append(GRADER_ERROR)
    if run.problems:
        findings.append(UNSAFE_OUTPUT)
    if run.report.get("output_bytes", 0) > 1 << 20:  # how much: never said, it could be chosen
        findings.append(Finding(
            "output-flood",
            "Tu código escribió más de 1 MB en la salida. No cuesta puntos, pero ralentiza la "
            "corrección.",
            "Your code wrote more than 1 MB of output. It costs no points, but it slows grading "
            "down.", scoring=False))
    return findings


# where a student finds what the feedback of a hidden case leaves out: after a finding
SEE_CHECK = (" Los casos ocultos no dicen en qué línea ni con qué mensaje: la autocomprobación de "
             "este laboratorio (make check) prueba casos visibles y, si allí falla igual, te "
             "enseña el traceback.",
             " Hidden cases do not say on which line or with what message: this lab's self-check "
             "(make check) runs visible cases and, if it fails the same way there, shows you the "
             "traceback.")
SEE_NOTEBOOK = (" El corrector no dice en qué línea ni con qué mensaje: ejecuta el cuaderno en "
                "Jupyter y verás el traceback.",
                " The grader does not say on which line or with what message: run the notebook "
                "in Jupyter to see the traceback.")


def borrowed_finding(name: str, module_file: str | None = None, via: str | None = None) -> Finding:
    """The finding of a submission that takes its values from ``name`` (the self-check, another
    library's implementation, a switched-off watch: ``minimodel.own_work``), used by
    ``module_file`` itself or through ``via``; in the self-check's words."""
    refusal = Refusal(kind_of(name) or "library", name, via)
    return Finding(CODE, *explain(refusal, module_file))


def refused_in_run(name: str, module_file: str | None = None) -> Finding:
    """:func:`borrowed_finding` for what the sandbox refused while the hidden inputs were within
    reach (at import or in a case): named by what it is part of, the self-check, the watch or an
    installed library's package, never the function the run reported, which the student's code
    could pick from thousands (``make check`` names it)."""
    kind = kind_of(name) or "library"
    inside = next((part for part in REFUSED_INSIDE
                   if name == part or name.startswith(f"{part}.")), None)  # torch.onnx, not torch
    said = {"self-check": "minimodel.selfcheck", "hidden": TAMPERED}.get(
        kind, inside or name.split(".")[0])
    return borrowed_finding(said, module_file)


def blocked_import(error: dict | None) -> str | None:
    """What the sandbox refused in ``error``, if that is what it is: the forbidden module whose
    import failed (``probe_runner.BorrowedImportBlocker``), or the refused function the
    student's code called (``own_work.Watch``)."""
    if not error:
        return None
    if called := refused_call(error.get("message", "")):
        return called
    if error.get("type") not in ("ImportError", "ModuleNotFoundError"):
        return None
    found = re.search(re.escape(BLOCKED) + r"([\w.]+)", error.get("message", ""))
    return found.group(1) if found and forbidden(found.group(1)) else None


def import_finding(error: dict, module_file: str) -> Finding:
    """Why ``module_file`` did not import. Importing runs the student's code in the process that
    holds the hidden inputs, so it is said as a hidden case's exception is: the class only. A
    syntax error, found by the grader parsing the file (``redact.Sources``), keeps its file, line
    and message."""
    kind = error.get("type", "Error")
    if name := blocked_import(error):
        return refused_in_run(name, module_file)
    if kind in SYNTAX_ERRORS and (error.get("lineno") or error.get("message")):  # found by the
        # grader's parse (redact.Sources leaves neither when the file parses)
        where = error.get("file") or module_file  # another module it imports (rope.py)
        line = error.get("lineno")
        message = error.get("message", "")
        return Finding("syntax-error",
                       f"{where} tiene un error de sintaxis"
                       + (f" en la línea {line}" if line else "") + f": {message}".rstrip(": "),
                       f"{where} has a syntax error" + (f" on line {line}" if line else "")
                       + f": {message}".rstrip(": "))
    if kind == "SystemExit":
        return Finding("exit-at-import",
                       f"Al importar {module_file}, tu código termina el proceso (SystemExit).",
                       f"Importing {module_file} ends the process (SystemExit).")
    kind_es, kind_en = exception_words(kind)
    return Finding("import-error", f"Importar {module_file} lanza {kind_es}." + SEE_CHECK[0],
                   f"Importing {module_file} raises {kind_en}." + SEE_CHECK[1])


def exception_findings(errors: list[dict], total: int,
                       see: tuple[str, str] = SEE_CHECK) -> list[Finding]:
    """What the cases that raised say, in fixed words: the cases that ran out of time, or called
    a function that had (``grader.trusted.out_of_time``), in one finding that names no function
    (the top of the feedback does, once); a refused call; the stub's own message of the first
    ``NotImplementedError``; and how many of the ``total`` cases raised anything else, with the
    class of the first (and whether others differ), ending with ``see``, where the student finds
    the rest."""
    findings = []
    stopped = sum(error.get("type") in OUT_OF_TIME for error in errors)
    if stopped:
        findings.append(out_of_time_finding(f"{stopped} de {total} casos ocultos no terminaron",
                                            f"{stopped} of {total} hidden cases did not finish"))
    errors = [error for error in errors if error.get("type") not in OUT_OF_TIME]
    if refused := next(filter(None, map(blocked_import, errors)), None):
        findings.append(refused_in_run(refused))
    errors = [error for error in errors if not blocked_import(error)]
    stubs = [error for error in errors if error.get("type") == "NotImplementedError"]
    if stubs:
        es, en = stub_words(stubs[0].get("message", "")) or ("", "")
        findings.append(Finding("not-implemented", f"Todavía sin implementar. {es}".strip(),
                                f"Not implemented yet. {en}".strip()))
    raised = [error.get("type", "Error") for error in errors
              if error.get("type") != "NotImplementedError"]
    if raised:
        kind_es, kind_en = exception_words(raised[0])
        if raised[0] == "KeyboardInterrupt":
            kind_es += " (una interrupción por superar el tiempo límite)"
            kind_en += " (an interruption for going over the time limit)"
        others = len(set(raised)) > 1
        findings.append(Finding(
            "exception",
            (f"{len(raised)} de {total} casos ocultos lanzan" if total > 1 else "Lanza")
            + f" {kind_es}" + (" y otras excepciones" if others else "") + "." + see[0],
            (f"{len(raised)} of {total} hidden cases raise" if total > 1 else "Raises")
            + f" {kind_en}" + (" and other exceptions" if others else "") + "." + see[1]))
    return findings


def out_of_time_finding(what_es: str, what_en: str) -> Finding:
    """``what`` did not finish because a function of the student ran out of time."""
    return Finding("out-of-time-case",
                   f"{what_es}: se llamó a una función tuya que se quedó sin tiempo (mira «Tu "
                   "entrega», al principio).",
                   f"{what_en}: a function of yours that ran out of time was called (see "
                   "'Your submission', at the top).")


# what each reason a check fails for says after "N of M hidden cases: "
MISMATCH = {
    "shape": ("la forma del resultado no es la que indica la especificación.",
              "the result's shape is not the one the specification gives."),
    "dtype": ("dtype {got}; se esperaba {expected}.", "dtype {got}; expected {expected}."),
    "kind": ("el tipo del resultado no es el de la especificación (np.ndarray o torch.Tensor).",
             "the result's type is not the one the specification gives (np.ndarray or "
             "torch.Tensor)."),
    "device": ("el resultado no está en el dispositivo de la entrada.",
               "the result is not on the input's device."),
    "values": ("los valores no coinciden con los esperados.",
               "the values differ from the expected ones."),
    "invalid": ("el resultado no es un array numérico normal.",
                "the result is not a plain numeric array."),
}


def mismatch_findings(checks: list[Check], expected_dtype: str | None = None,
                      got_dtypes: list[str] = ()) -> list[Finding]:
    """Generic findings for checks no diagnosis explained (shape, dtype, values, ...)."""
    counts: dict[str, int] = {}
    for check in checks:
        if not check.ok and check.reason not in ("error", "missing"):
            counts[check.reason] = counts.get(check.reason, 0) + 1
    # how large the error is: never said (it is a number computed on a hidden input)
    fields = {"got": ", ".join(sorted(set(got_dtypes))) or "?", "expected": expected_dtype}
    return [Finding(reason,
                    f"{count} de {len(checks)} casos ocultos: "
                    + MISMATCH[reason][0].format(**fields),
                    f"{count} of {len(checks)} hidden cases: "
                    + MISMATCH[reason][1].format(**fields))
            for reason, count in counts.items() if reason in MISMATCH]
