"""``minimodel check LAB``: which functions are missing, which fail and why, which pass.

Exit status 0 when every visible check passes. Passing the visible checks is a good sign, not a
grade: the grader uses other inputs.
"""

from __future__ import annotations

import argparse
from itertools import groupby

from minimodel.course import find_lab
from minimodel.implementation import resolve
from minimodel.messages import LANGUAGES, language, pick
from minimodel.selfcheck.runner import Result, run_checks

MARKS = {"pass": "✔", "fail": "✘", "todo": "…", "error": "✘", "timeout": "⧗"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lab", help="17.01 | 17_01_sinusoidal")
    parser.add_argument(
        "--impl", default="src", help="src (default) | reference | <folder with your files>"
    )
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help="es | en")
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per check")


def report(lab_title: str, folder: str, results: list[Result], lang: str) -> str:
    """The report as the student reads it, in ``lang``."""

    def say(es: str, en: str) -> str:
        return pick(es, en, lang)

    lines = [lab_title, say(f"Implementación: {folder}", f"Implementation: {folder}"), ""]
    shown: set[str] = set()

    def explain(result: Result) -> list[str]:
        detail = say(result.detail_es, result.detail_en)
        if result.status == "todo" and detail in shown:
            detail = say(
                "Depende de una función aún sin implementar (ver arriba).",
                "Depends on a function not implemented yet (see above).",
            )
        shown.add(detail)
        return [f"      {line}" for line in detail.splitlines()]

    for target, group in groupby(results, key=lambda result: result.check.target):
        group = list(group)
        if all(result.status == "todo" for result in group):
            lines.append(f"{target}: " + say("sin implementar todavía.", "not implemented yet."))
            lines += explain(group[0])
            continue
        lines.append(target)
        for result in group:
            lines.append(f"  {MARKS[result.status]} {say(result.check.es, result.check.en)}")
            if result.status != "pass":
                lines += explain(result)
    counts = {status: sum(r.status == status for r in results) for status in MARKS}
    lines.append("")
    lines.append(
        say(
            f"{counts['pass']}/{len(results)} comprobaciones superadas · {counts['todo']} sin "
            f"implementar · {counts['fail']} fallidas · {counts['error'] + counts['timeout']} "
            "con errores o sin terminar.",
            f"{counts['pass']}/{len(results)} checks passed · {counts['todo']} not implemented · "
            f"{counts['fail']} failed · {counts['error'] + counts['timeout']} errors or timeouts.",
        )
    )
    if counts["pass"] == len(results):
        lines.append(
            say(
                "Todo correcto. El corrector usará otras entradas: prueba también el cuaderno.",
                "All good. The grader uses other inputs: run the notebook too.",
            )
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    lab = find_lab(args.lab)
    lang = args.lang or language()
    results = run_checks(lab, impl=args.impl, timeout=args.timeout)
    title = pick(f"Laboratorio {lab.id} · {lab.title_es}", f"Lab {lab.id} · {lab.title_en}", lang)
    print(report(title, str(resolve(args.impl)), results, lang))
    return 0 if all(result.status == "pass" for result in results) else 1
