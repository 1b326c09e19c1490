"""``minimodel check LAB``: which functions are missing, which fail and why, which pass.

The report is printed while the checks run: the lab's header first, then each check as it ends
(on a terminal, the check that is running shows on the last line). Exit status 0 when every
visible check passes. Passing the visible checks is a good sign, not a grade: the grader uses
other inputs.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from minimodel.course import LABS, Lab, find_lab
from minimodel.generated import unfinished
from minimodel.implementation import choices, resolve
from minimodel.messages import LANGUAGES, language, pick, plural
from minimodel.selfcheck.compare import Check
from minimodel.selfcheck.runner import Result, run_checks

MARKS = {"pass": "✔", "fail": "✘", "todo": "…", "error": "✘", "timeout": "⧗", "skipped": "–"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lab", nargs="*", help="17.01 | 17_01_sinusoidal")
    parser.add_argument("--impl", default="src", help=choices())
    parser.add_argument("--lang", choices=LANGUAGES, default=None,
                        help="es | en (default: $MINIMODEL_LANG)")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per check")
    parser.add_argument("--all", action="store_true",
                        help="every lab, one line each (make test in your repository)")
    parser.add_argument("--jobs", type=int, default=2, help="labs checked at once with --all")


class Report:
    """The report as the student reads it, in ``lang``, written line by line to ``out``.

    A function whose checks all say "not implemented" gets one line; a detail already shown
    (the same syntax error for every check, say) is not repeated.
    """

    def __init__(self, lang: str, out=None) -> None:
        self.lang, self.out = lang, out or sys.stdout
        self.tty = self.out.isatty()
        self.target: str | None = None
        self.target_shown = False
        self.waiting: list[Result] = []  # "not implemented" results of the current target
        self.shown: set[str] = set()
        self.running = False

    def say(self, es: str, en: str) -> str:
        return pick(es, en, self.lang)

    def write(self, line: str = "") -> None:
        if self.running:  # rub out the "running" line first
            self.out.write("\r\033[K")
            self.running = False
        self.out.write(line + "\n")
        self.out.flush()

    def header(self, lab: Lab, folder: str) -> None:
        self.write(self.say(f"Laboratorio {lab.id} · {lab.title_es}",
                            f"Lab {lab.id} · {lab.title_en}"))
        self.write(self.say(f"Implementación: {folder}", f"Implementation: {folder}"))
        self.write()

    def needs(self, lab: Lab, folder: Path) -> list[str]:
        """Say which labs ``lab`` needs that are not done in ``folder`` yet; return their ids."""
        missing = unfinished_needs(lab, folder)
        if missing:
            self.write(self.say(
                f"Este laboratorio usa también tu trabajo de {', '.join(missing)}, aún sin "
                "terminar: su cuaderno no correrá entero hasta que lo completes "
                f"(make check LAB={missing[0]}).",
                f"This lab also uses your work from {', '.join(missing)}, not finished yet: its "
                f"notebook will not run through until you complete it (make check "
                f"LAB={missing[0]})."))
            self.write()
        return missing

    def __call__(self, check: Check, result: Result | None) -> None:
        """``progress`` for ``run_checks``: a check starts (``result`` None) or ends."""
        if result is None:
            if self.tty:
                self.out.write(f"\r\033[K  ⋯ {self.say(check.es, check.en)}")
                self.out.flush()
                self.running = True
            return
        if check.target != self.target:
            self._collapse_waiting()
            self.target, self.target_shown = check.target, False
        if result.status == "todo" and not self.target_shown:
            self.waiting.append(result)  # maybe the whole function is not implemented yet
            return
        for earlier in [*self.waiting, result]:
            self._line(earlier)
        self.waiting = []

    def _explain(self, result: Result) -> None:
        detail = self.say(result.detail_es, result.detail_en)
        if not detail:
            return
        if detail in self.shown:
            todo = result.status == "todo"
            detail = self.say(
                "Depende de una función aún sin implementar (ver arriba)." if todo
                else "El mismo problema que arriba.",
                "Depends on a function not implemented yet (see above)." if todo
                else "The same problem as above.")
        else:
            self.shown.add(detail)
        lines = detail.splitlines()
        for index, line in enumerate(lines):
            if index and line in self.shown:  # a mistake's explanation, already given above
                line = self.say("El mismo error que arriba.", "The same mistake as above.")
                if lines[index - 1] == line:
                    continue
            elif index:
                self.shown.add(line)
            self.write(f"      {line}")

    def _line(self, result: Result) -> None:
        if not self.target_shown:
            self.write(result.check.target)
            self.target_shown = True
        self.write(f"  {MARKS[result.status]} {self.say(result.check.es, result.check.en)}")
        if result.status != "pass" or result.detail_es:
            self._explain(result)

    def _collapse_waiting(self) -> None:
        """A function whose every check said "not implemented": one line."""
        if self.waiting:
            target = self.waiting[0].check.target
            self.write(f"{target}: " + self.say("sin implementar todavía.", "not implemented yet."))
            self._explain(self.waiting[0])
        self.waiting = []

    def finish(self, results: list[Result]) -> None:
        """The summary of ``results`` (every check's): how many passed, failed or did not end."""
        self._collapse_waiting()
        counts = {status: sum(r.status == status for r in results) for status in MARKS}
        unfinished = counts["error"] + counts["timeout"] + counts["skipped"]
        self.write()
        self.write(self.say(
            f"{counts['pass']}/{len(results)} comprobaciones superadas · {counts['todo']} sin "
            f"implementar · {plural(counts['fail'], 'fallida', 'fallidas')} · {unfinished} con "
            "errores o sin terminar.",
            f"{counts['pass']}/{len(results)} checks passed · {counts['todo']} not "
            f"implemented · {counts['fail']} failed · "
            f"{plural(unfinished, 'error or timeout', 'errors or timeouts')}."))
        if results and counts["pass"] == len(results):
            self.write(self.say(
                "Todo correcto. El corrector usará otras entradas: prueba también el cuaderno.",
                "All good. The grader uses other inputs: run the notebook too."))


def unfinished_needs(lab: Lab, folder: Path) -> list[str]:
    """The labs ``lab`` needs (``Lab.needs``) whose files in ``folder`` still hold a block that
    raises ``NotImplementedError``."""
    return [need for need in lab.needs
            if any(unfinished(folder / f"{module}.py") for module in find_lab(need).modules)]


def lab_state(results: list[Result], lab: Lab | None = None) -> tuple[str, Result | None]:
    """``("done" | "failing" | "started" | "todo", the first result that is wrong)``.

    A lab with no file of its own (``lab.modules`` empty: 19.01, 19.02) is never "started": its
    checks that pass run the earlier labs' code, not work done in it.
    """
    wrong = next((r for r in results if r.status not in ("pass", "todo")), None)
    if wrong is not None:
        return "failing", wrong
    if all(r.status == "pass" for r in results):
        return "done", None
    own_work = lab is None or bool(lab.modules)
    return ("started" if own_work and any(r.status == "pass" for r in results) else "todo"), None


LAB_MARKS = {"done": "✔", "failing": "✘", "started": "◐", "todo": "·"}


def lab_line(report: Report, lab: Lab, results: list[Result], folder: Path,
             states: dict[str, str] | None = None) -> str:
    """Write the line of ``lab`` in the summary of every lab (and, when a check is wrong, the
    self-check's diagnosis under it); return the lab's state (``lab_state``).

    ``states`` holds the states of the labs already summed up: a lab it needs that is not done
    (failing, say, and not only unfinished) is named as needed first.
    """
    state, wrong = lab_state(results, lab)
    passed = sum(r.status == "pass" for r in results)
    if state == "failing":
        words = report.say(f"con fallos, en {wrong.check.target}: {wrong.check.es}",
                           f"failing, in {wrong.check.target}: {wrong.check.en}")
    else:
        words = {"done": report.say("hecho", "done"),
                 "started": report.say(
                     f"empezado, {passed} de {len(results)} comprobaciones superadas",
                     f"started, {passed} of {len(results)} checks passed"),
                 "todo": report.say("sin empezar", "not started")}[state]
    missing = []
    if state != "done":
        unfinished_files = unfinished_needs(lab, folder)
        missing = [need for need in lab.needs if need in unfinished_files
                   or (states or {}).get(need, "done") != "done"]
    if missing:
        words += report.say(f" (necesita antes {', '.join(missing)})",
                            f" (needs {', '.join(missing)} first)")
    report.write(f"  {LAB_MARKS[state]} {lab.id} {report.say(lab.title_es, lab.title_en)}: {words}")
    if wrong is not None:
        for line in report.say(wrong.detail_es, wrong.detail_en).splitlines():
            report.write(f"      {line}")
    return state


def run_all(report: Report, impl: str, timeout: float, jobs: int) -> int:
    """Every lab, one line each: done, started, not started, or failing with the self-check's
    diagnosis. Exit status 0 when no started lab is wrong."""
    folder = resolve(impl)
    report.write(report.say(f"Tus laboratorios · implementación: {folder}",
                            f"Your labs · implementation: {folder}"))
    with ThreadPoolExecutor(max(1, jobs)) as pool:  # each lab runs in child processes
        runs = pool.map(lambda lab: run_checks(lab, impl=impl, timeout=timeout), LABS)
        summed: dict[str, str] = {}
        for lab, results in zip(LABS, runs, strict=True):
            summed[lab.id] = lab_line(report, lab, results, folder, summed)
        states = list(summed.values())
    done, failing = states.count("done"), states.count("failing")
    report.write()
    report.write(report.say(
        f"{plural(done, 'laboratorio hecho', 'laboratorios hechos')} de {len(LABS)} · "
        f"{failing} con fallos · quedan {len(LABS) - done}.",
        f"{plural(done, 'lab', 'labs')} of {len(LABS)} done · {failing} failing · "
        f"{len(LABS) - done} left."))
    if failing:
        first = LABS[states.index("failing")].id
        report.write(report.say(f"Los detalles: make check LAB={first}",
                                f"The details: make check LAB={first}"))
    return 1 if failing else 0


def run(args: argparse.Namespace) -> int:
    report = Report(args.lang or language())
    if args.all:
        return run_all(report, args.impl, args.timeout, args.jobs)
    named = list(dict.fromkeys(args.lab))  # `make check LAB=17.03 lab=17.03` names one lab
    if len(named) != 1:  # none (`make check` alone), or two different ones
        if named:
            report.write(report.say(
                f"Has nombrado {len(named)} laboratorios ({', '.join(named)}): compruebo uno "
                "cada vez.", f"You named {len(named)} labs ({', '.join(named)}): I check one at "
                "a time."))
        report.write(report.say("¿Qué laboratorio? make check LAB=17.01 (o minimodel check 17.01):",
                                "Which lab? make check LAB=17.01 (or minimodel check 17.01):"))
        for lab in LABS:
            report.write(f"  {lab.id}  {report.say(lab.title_es, lab.title_en)}")
        return 2
    lab = find_lab(named[0])
    report.header(lab, str(resolve(args.impl)))
    report.needs(lab, resolve(args.impl))
    results = run_checks(lab, impl=args.impl, timeout=args.timeout, progress=report)
    report.finish(results)
    return 0 if all(result.status == "pass" for result in results) else 1
