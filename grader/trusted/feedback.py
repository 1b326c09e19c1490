"""Per-student feedback in Spanish and English, as Markdown and HTML, from a grading record.

The record (``OUT/records/<student>.json``) is the single source: feedback is regenerated from it
whenever grades change (a resumed run, merged manual grades). Feedback shows each item's points,
its status and the findings the judges wrote for the student; never the hidden inputs, the
expected values or the checks themselves. Output the student's code printed, warnings and stderr
are not shown and never cost points.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from grader.trusted.safe_io import atomic_write_text
from grader.trusted.status import Gpu, Item, Student, is_flagged

STATUS = {
    "es": {Item.PASSED: "superado", Item.PARTIAL: "parcial", Item.FAILED: "no superado",
           Item.MISSING: "sin entregar", Item.MANUAL: "pendiente de corrección manual",
           Item.GRADED: "corregido a mano"},
    "en": {Item.PASSED: Item.PASSED, Item.PARTIAL: Item.PARTIAL, Item.FAILED: Item.FAILED,
           Item.MISSING: "not submitted", Item.MANUAL: Student.AWAITING_MANUAL,
           Item.GRADED: "graded by hand"},  # in English, mostly the status's own word
}
ICON = {Item.PASSED: "✔", Item.PARTIAL: "◐", Item.FAILED: "✘", Item.MISSING: "✘",
        Item.MANUAL: "✎", Item.GRADED: "✎"}
GPU_REPORTED = "failed-report"  # Gpu.FAILED where only --device cuda would make it count
WORDS = {
    "es": {"title": "Corrección", "total": "Total", "auto": "automático", "by_hand": "a mano",
           "pending": ("{n} respuesta escrita aún por corregir a mano",
                       "{n} respuestas escritas aún por corregir a mano"),
           "syntax": "Un archivo con un error de sintaxis no se puede importar: todos los "
                     "apartados que lo usan valen 0, también los de otros laboratorios cuyos "
                     "módulos lo importan. Corrígelo y pasa la autocomprobación antes de "
                     "entregar.",
           "item": "Apartado",
           "points": "Puntos", "status": "Estado", "lab": "Laboratorio", "details": "Detalles",
           "submission": "Tu entrega", "notebook": "Cuaderno",
           "gpu": {Gpu.PASSED: "Comprobaciones en GPU: superadas.",
                   Gpu.FAILED: "Comprobaciones en GPU: no superadas.",
                   GPU_REPORTED: "Comprobaciones en GPU: no superadas. En esta corrección no "
                                    "cambian la nota, pero tu código fallaría en una GPU.",
                   Gpu.NOT_RUN: "Comprobaciones en GPU: no ejecutadas (se corrigió sin GPU); "
                              "no cambian la nota."},
           "manual": "Respuestas escritas (corrección manual)",
           "footer": "Las pruebas ocultas y sus datos no se muestran. Lo que tu código escribe "
                     "en la salida, los avisos (warnings) y stderr no restan puntos.",
           "kernel": "Las celdas calificadas de los cuadernos se comprueban en tu propio kernel: "
                     "se califican los valores que tu cuaderno calcula al ejecutarse en el "
                     "corrector. Lo que depende solo de tus módulos (los logits con caché KV de "
                     "19.01) el corrector lo calcula además fuera de tu kernel, con tus módulos.",
           "note": "Nota"},
    "en": {"title": "Grading report", "total": "Total", "auto": "automatic", "by_hand": "by hand",
           "pending": ("{n} written answer still to be graded by hand",
                       "{n} written answers still to be graded by hand"),
           "syntax": "A file with a syntax error cannot be imported: every item that uses it "
                     "scores 0, also in other labs whose modules import it. Fix it and run the "
                     "self-check before you submit.",
           "item": "Item",
           "points": "Points", "status": "Status", "lab": "Lab", "details": "Details",
           "submission": "Your submission", "notebook": "Notebook",
           "gpu": {Gpu.PASSED: "GPU checks: passed.", Gpu.FAILED: "GPU checks: failed.",
                   GPU_REPORTED: "GPU checks: failed. In this grading they change no points, "
                                    "but your code would fail on a GPU.",
                   Gpu.NOT_RUN: "GPU checks: not run (graded without a GPU); they change no "
                              "points."},
           "manual": "Written answers (graded by hand)",
           "footer": "Hidden tests and their data are not shown. What your code prints, "
                     "warnings and stderr never cost points.",
           "kernel": "The notebooks' graded cells are checked in your own kernel: what is graded "
                     "is the values your notebook computes when the grader runs it. What depends "
                     "on your modules alone (the logits with a KV cache of 19.01) the grader also "
                     "computes outside your kernel, with your modules.",
           "note": "Note"},
}


def number(value: float | None) -> str:
    """A score as the feedback, the gradebook and the LMS exports write it: ``3``, ``2.50``, or
    empty for none."""
    if value is None:
        return ""
    return f"{value:g}" if float(value).is_integer() else f"{value:.2f}"


def _fmt(value: float | None) -> str:
    return number(value) or "—"


def _finding_text(finding: dict, lang: str) -> str:
    text = finding.get(lang) or finding.get("en", "")
    return text if finding.get("scoring", True) else f"{WORDS[lang]['note']}: {text}"


def total_line(record: dict, lang: str) -> str:
    """``Total: 165.50 / 227 (automatic 150 / 166 · by hand 15.50 / 61; 2 written answers still
    to be graded by hand)``: the denominator counts every item, graded or not."""
    words = WORDS[lang]
    split = (f"{words['auto']} {_fmt(record.get('auto'))} / {_fmt(record.get('auto_max'))}")
    if record.get("manual_max"):
        split += (f" · {words['by_hand']} {_fmt(record.get('manual'))} / "
                  f"{_fmt(record.get('manual_max'))}")
    if record.get("manual_pending") and not is_flagged(record.get("status")):
        count = record["manual_pending"]  # a flagged submission has nothing left to grade
        split += "; " + words["pending"][count != 1].format(n=count)
    return (f"{words['total']}: {_fmt(record.get('total'))} / "
            f"{_fmt(record.get('max_total'))} ({split})")


def item_texts(record: dict, verdict: dict, lang: str) -> list[str]:
    """What the student reads under one item: its findings and its GPU outcome."""
    texts = [_finding_text(f, lang) for f in verdict.get("findings", [])]
    gpu = verdict.get("gpu")
    if gpu == Gpu.FAILED and record.get("device") != "cuda":
        gpu = GPU_REPORTED  # only --device cuda makes the CUDA runs count
    if gpu in WORDS[lang]["gpu"]:
        texts.append(WORDS[lang]["gpu"][gpu])
    return texts


def model(record: dict, lang: str) -> dict:
    """The language-specific content both renderers share."""
    words = WORDS[lang]
    flagged = is_flagged(record.get("status"))  # nothing of it is left to grade by hand
    labs = []
    for lab_id, lab in record.get("labs", {}).items():
        rows, details = [], []
        for verdict in lab.get("items", []):
            status = verdict.get("status", Item.FAILED)
            if verdict.get("kind") == "manual":
                if flagged and verdict.get("score") is None:
                    continue
                status = Item.GRADED if verdict.get("score") is not None else Item.MANUAL
            title = verdict.get(f"title_{lang}") or verdict.get("key")
            rows.append((title, f"{_fmt(verdict.get('score'))} / {_fmt(verdict['points'])}",
                         f"{ICON.get(status, '')} {STATUS[lang].get(status, status)}"))
            texts = item_texts(record, verdict, lang)
            if texts:
                details.append((title, texts))
        notebook = [_finding_text(f, lang) for f in lab.get("notebook", {}).get("findings", [])]
        labs.append({"id": lab_id, "title": lab.get(f"title_{lang}", ""), "rows": rows,
                     "details": details, "notebook": notebook,
                     "score": f"{_fmt(lab.get('score'))} / {_fmt(lab.get('max'))}"})
    return {
        "heading": f"{words['title']} · {record['student_id']}",
        "total": total_line(record, lang),
        "messages": [_finding_text(f, lang) for f in record.get("messages", [])] + (
            [words["syntax"]] if any(m.get("code") == "syntax-error"
                                     for m in record.get("messages", [])) else []),
        "labs": labs,
        "footer": " ".join([words["footer"], *([words["kernel"]] if any(
            lab.get("notebook", {}).get("present") for lab in record["labs"].values()) else [])]),
    }


def markdown(record: dict, lang: str) -> str:
    words = WORDS[lang]
    content = model(record, lang)
    lines = [f"# {content['heading']}", "", f"**{content['total']}**", ""]
    if content["messages"]:
        lines += [f"## {words['submission']}", ""]
        lines += [f"- {_md(text)}" for text in content["messages"]] + [""]
    for lab in content["labs"]:
        lines += [f"## {words['lab']} {lab['id']} · {lab['title']} — {lab['score']}", ""]
        lines += [f"| {words['item']} | {words['points']} | {words['status']} |",
                  "|---|---|---|"]
        lines += [f"| {_md(a)} | {b} | {c} |" for a, b, c in lab["rows"]] + [""]
        if lab["notebook"]:
            lines += [f"### {words['notebook']}", ""]
            lines += [f"- {_md(text)}" for text in lab["notebook"]] + [""]
        if lab["details"]:
            lines += [f"### {words['details']}", ""]
            for title, texts in lab["details"]:
                lines += [f"**{_md(title)}**", ""] + [f"- {_md(t)}" for t in texts] + [""]
    lines += ["---", "", f"*{content['footer']}*", ""]
    return "\n".join(lines)


def _md(text: str) -> str:
    """Text from findings, made inert in Markdown (no tables broken, no HTML, no links, no
    emphasis); an underscore inside a word is left alone (``gpu_check.py``: no emphasis there)."""
    text = " ".join(str(text).split())
    for char in "\\|<>[]*`":
        text = text.replace(char, "\\" + char)
    return re.sub(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", r"\\_", text)


CSS = ("body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;"
       "line-height:1.45}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;"
       "padding:.3rem .5rem;text-align:left}th{background:#f3f3f3}footer{color:#555;"
       "margin-top:2rem}")


def html_page(record: dict, lang: str) -> str:
    words = WORDS[lang]
    content = model(record, lang)
    e = html.escape
    parts = [f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">',
             f"<title>{e(content['heading'])}</title><style>{CSS}</style></head><body>",
             f"<h1>{e(content['heading'])}</h1><p><strong>{e(content['total'])}</strong></p>"]
    if content["messages"]:
        parts += [f"<h2>{e(words['submission'])}</h2>", _ul(content["messages"])]
    for lab in content["labs"]:
        parts.append(f"<h2>{e(words['lab'])} {e(lab['id'])} · {e(lab['title'])} — "
                     f"{e(lab['score'])}</h2>")
        parts.append(f"<table><tr><th>{e(words['item'])}</th><th>{e(words['points'])}</th>"
                     f"<th>{e(words['status'])}</th></tr>")
        parts += [f"<tr><td>{e(a)}</td><td>{e(b)}</td><td>{e(c)}</td></tr>"
                  for a, b, c in lab["rows"]]
        parts.append("</table>")
        if lab["notebook"]:
            parts += [f"<h3>{e(words['notebook'])}</h3>", _ul(lab["notebook"])]
        if lab["details"]:
            parts.append(f"<h3>{e(words['details'])}</h3>")
            parts += [f"<p><strong>{e(title)}</strong></p>{_ul(texts)}"
                      for title, texts in lab["details"]]
    parts.append(f"<footer><em>{e(content['footer'])}</em></footer></body></html>\n")
    return "".join(parts)


def _ul(texts: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in texts) + "</ul>"


def write(record: dict, folder: Path) -> None:
    """Write ``feedback.{es,en}.{md,html}`` for one student into ``folder``."""
    for lang in ("es", "en"):
        for suffix, render in (("md", markdown), ("html", html_page)):
            atomic_write_text(folder / f"feedback.{lang}.{suffix}", render(record, lang))
