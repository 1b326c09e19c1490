"""``minimodel check LAB``: which functions are missing, which fail and why, which pass.

The report is printed while the checks run: the lab's header first, then each check as it ends
(on a terminal, the check that is running shows on the last line). Exit status 0 when every
visible check passes. Passing the visible checks is a good sign, not a grade: the grader uses
other inputs.
"""

from __future__ import annotations

import argparse
import sys

from minimodel.course import LABS, Lab, find_lab
from minimodel.implementation import resolve
from minimodel.messages import LANGUAGES, language, pick
from minimodel.selfcheck.compare import Check
from minimodel.selfcheck.runner import Result, run_checks

MARKS = {"pass": "✔", "fail": "✘", "todo": "…", "error": "✘", "timeout": "⧗", "skipped": "–"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lab", nargs="?", help="17.01 | 17_01_sinusoidal")
    parser.add_argument("--impl", default="src",
                        help="src (default) | reference | <folder with your files>")
    parser.add_argument("--lang", choices=LANGUAGES, default=None,
                        help="es | en (default: $MINIMODEL_LANG)")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per check")


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
            f"implementar · {counts['fail']} fallidas · {unfinished} con errores o sin "
            "terminar.",
            f"{counts['pass']}/{len(results)} checks passed · {counts['todo']} not "
            f"implemented · {counts['fail']} failed · {unfinished} errors or timeouts."))
        if results and counts["pass"] == len(results):
            self.write(self.say(
                "Todo correcto. El corrector usará otras entradas: prueba también el cuaderno.",
                "All good. The grader uses other inputs: run the notebook too."))


def run(args: argparse.Namespace) -> int:
    report = Report(args.lang or language())
    if args.lab is None:  # `make check` without LAB=
        report.write(report.say("¿Qué laboratorio? make check LAB=17.01 (o minimodel check 17.01):",
                                "Which lab? make check LAB=17.01 (or minimodel check 17.01):"))
        for lab in LABS:
            report.write(f"  {lab.id}  {report.say(lab.title_es, lab.title_en)}")
        return 2
    lab = find_lab(args.lab)
    report.header(lab, str(resolve(args.impl)))
    results = run_checks(lab, impl=args.impl, timeout=args.timeout, progress=report)
    report.finish(results)
    return 0 if all(result.status == "pass" for result in results) else 1
