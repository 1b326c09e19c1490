"""The mistake matrix: for every classic mistake of the catalogue (``solutions/mistakes/``), the
graded items where it costs points (``python -m grader.build.mistake_matrix``, run by ``make
sync``, writes ``grader/mistake_matrix.md``; ``--check`` says whether the committed page is
current).

Computed from the references alone, no sandbox: each lab's probe groups are replayed as if a
student's module had one mistake (its outputs on the hidden inputs, stored in
``references.json``'s ``mistakes``; the reference's outputs where it changes nothing), the
notebook cells' records likewise (``notebook_mistakes``, for the cells that name a catalogue),
and every item's judge judges them, as it judges a student. A mistake's outputs are stored as
every ``stride``-th value of large arrays: there the replay holds the mistake's values where
stored and the reference's elsewhere.

A mistake should cost points only in the items of the function that holds it (one mistake costs
once, ``grader.hidden.carried``); an item of another function where it still costs is listed,
and allowed only for items whose lab declares that they cannot be judged apart
(``LabChecks.composed``, with the reason).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

import numpy as np

from grader.hidden import chosen
from grader.hidden.carried import functions, owns
from grader.hidden.spec import LabChecks
from grader.trusted import nbexec
from grader.trusted.references import References
from grader.trusted.status import Notebook, Run
from grader.trusted.verdicts import CellContext, GroupOutcome, JudgeContext
from minimodel.course import find_lab
from minimodel.implementation import REPO_ROOT

PAGE = REPO_ROOT / "grader" / "mistake_matrix.md"


@dataclass
class Cost:
    """One item where a mistake costs points."""

    lab: str
    item: str
    score: float
    points: float
    own: bool  # the item judges the function that holds the mistake
    excused: str = ""  # the lab's reason, for an item that cannot be judged apart


@dataclass
class Row:
    """One catalogue mistake and what it costs."""

    key: str
    target: str
    costs: list[Cost] = field(default_factory=list)

    @property
    def elsewhere(self) -> list[Cost]:
        return [c for c in self.costs if not c.own]


def _case(outputs: list[dict] | dict | None, right: list[dict], device: str = "") -> dict:
    """A case as a probe group's run holds it: the mistake's outputs (``None``: the
    reference's), the mistake's values where a sampled array kept them."""
    if isinstance(outputs, dict):
        return {"ok": False, "error": {"type": outputs["error"], "message": ""}}
    found = []
    for position, ref in enumerate(right):
        out = dict(ref if outputs is None else outputs[position])
        if outputs is not None and out.get("array") is not None:
            stride = out.get("stride", 1)
            full = np.array(ref["array"], dtype=ref["array"].dtype) if ref.get("array") \
                is not None and stride > 1 else None
            if full is not None:  # the reference's values between the stored ones
                full.reshape(-1)[::stride] = out["array"]
                out["array"] = full
            else:
                out["array"] = np.asarray(out["array"]).reshape(tuple(out["shape"]))
        out["device"] = device or out.get("device", "cpu")
        found.append(out)
    return {"ok": True, "outputs": found}


def replayed(refs: References, group, key: str, device: str = "") -> GroupOutcome:
    """Group ``group`` as a student with mistake ``key`` (``""``: none) would run it."""
    stored = next((m["cases"] for m in refs.mistakes(group.key) if m["code"] == key), {})
    cases = [_case(stored.get(k), right, device) for k, right in enumerate(refs.group(group.key))]
    return GroupOutcome("meta" if device else "cpu", Run.FINISHED, cases)


def item_scores(checks: LabChecks, refs: References, key: str) -> dict[str, tuple[float, float]]:
    """item key -> (score, points) of every item of the lab, for a student with mistake
    ``key``."""
    runs = {g.key: replayed(refs, g, key) for g in checks.groups}
    lab = {g.key: (g, runs[g.key], refs.mistakes(g.key)) for g in checks.groups}
    inputs = refs.inputs()
    scores = {}
    for item in checks.items:
        group = checks.group(item.group)
        n = len(group.cases)
        ctx = JudgeContext(
            item=item, group=group, run=runs[group.key], refs=refs.group(group.key),
            gpu_run=GroupOutcome.absent("cuda", Run.NOT_RUN, n) if group.device else None,
            meta_run=replayed(refs, group, key, "meta") if group.device else None,
            inputs=inputs, module_file=f"{group.module}.py", mistakes=refs.mistakes(group.key),
            lab=lab)
        scores[item.key] = (item.judge(ctx).score, item.points)
    return {**scores, **cell_scores(checks, refs, key, runs)}


def _record(ref: list[dict], value) -> dict:
    """A kernel record holding ``value`` (a mistake's: float64 array, ``None`` or a string)."""
    if value is None:
        return {"ok": True, "outputs": [{"kind": "none"}]}
    if isinstance(value, str):
        return {"ok": True, "outputs": [{"kind": "string", "value": value}]}
    parts = list(value) if len(ref) > 1 and len(value) == len(ref) else [value]
    return {"ok": True, "outputs": [{**r, "shape": tuple(np.shape(p)), "array": np.asarray(p)}
                                    for r, p in zip(ref, parts, strict=False)]}


def cell_scores(checks: LabChecks, refs: References, key: str,
                runs: dict[str, GroupOutcome]) -> dict[str, tuple[float, float]]:
    """nb/<grade id> -> (score, points) of the notebook's auto-graded cells whose records the
    references hold (volatile ones aside), for a student with mistake ``key``."""
    if not checks.notebook:
        return {}
    points = {g: m["points"] for g, m in nbexec.graded_cells(
        nbexec.source_notebook(checks.notebook.slug)).items() if m["kind"] != "manual"}
    scores = {}
    for cell in checks.cells:
        if cell.volatile or cell.grade_id not in points:
            continue
        right = refs.cell(cell.grade_id)
        wrong = refs.meta.get("notebook_mistakes", {}).get(cell.grade_id, {}).get(key, {})
        records = {name: {"ok": True, "outputs": outputs} for name, outputs in right.items()}
        for name, described in wrong.get("records", {}).items():
            records[name] = _record(right[name], refs.arrays[described[0]["array"]] if
                                    "array" in described[0] else described[0].get("value"))
        ctx = CellContext(cell, points[cell.grade_id], records, right,
                          {"status": Notebook.FINISHED},
                          refs.cell_mistakes(cell.grade_id), runs.get(cell.group))
        scores[f"nb/{cell.grade_id}"] = (cell.judge(ctx).score, points[cell.grade_id])
    return scores


def lab_rows(lab_id: str, checks: LabChecks) -> tuple[list[Row], list[str]]:
    """The rows of one lab's mistakes, and the items the replay cannot judge (those that do
    not get full marks without a mistake: volatile values, cells without stored records)."""
    from grader.build.mistakes import catalogue

    refs = References(lab_id)
    baseline = item_scores(checks, refs, "")
    unjudged = sorted(k for k, (score, points) in baseline.items() if score < points)
    own = {i.key: functions(checks.group(i.group)) for i in checks.items}
    composed = getattr(checks, "composed", {}) or {}
    rows = []
    for module in find_lab(lab_id).modules:
        for mistake in sorted(catalogue(module), key=lambda m: m.code):
            row = Row(mistake.key, mistake.target)
            for item, (score, points) in item_scores(checks, refs, mistake.key).items():
                if score < points and item not in unjudged:
                    row.costs.append(Cost(lab_id, item, score, points,
                                          owns(own.get(item, set()), mistake.target),
                                          composed.get(item, ("", ""))[1]))
            rows.append(row)
    return rows, unjudged


def matrix(labs: list[str] | None = None) -> dict[str, tuple[list[Row], list[str]]]:
    """lab id -> (rows, items the replay cannot judge), for every lab with a catalogue."""
    return {lab_id: lab_rows(lab_id, checks) for lab_id, checks in chosen(labs).items()
            if find_lab(lab_id).modules and _has_catalogue(lab_id)}


def _has_catalogue(lab_id: str) -> bool:
    from minimodel.implementation import CATALOGUE_DIR

    return any((CATALOGUE_DIR / f"{m}.py").exists() for m in find_lab(lab_id).modules)


def _cell(cost: Cost) -> str:
    mark = "" if cost.own else (" †" if cost.excused else " **✗**")
    return f"`{cost.item}` {cost.score:g}/{cost.points:g}{mark}"


def render(found: dict[str, tuple[list[Row], list[str]]]) -> str:
    """The page: one table per lab, then the figures and the allowed exceptions."""
    rows = [r for lab_rows_, _ in found.values() for r in lab_rows_]
    elsewhere = [(r, c) for r in rows for c in r.elsewhere]
    lines = [
        "# The mistake matrix / La matriz de errores",
        "",
        "Generated by `python -m grader.build.mistake_matrix` (`make sync`) from the references"
        " and the judges; do not edit. For every classic mistake of the catalogue"
        " (`solutions/mistakes/`), the items where a submission with that one mistake loses"
        " points. One mistake costs once: only items of the function that holds it should"
        " appear (`grader/hidden/carried.py`). **✗**: an item of another function;"
        " †: an item its lab declares cannot be judged apart (reasons below).",
        "",
        f"{len(rows)} mistakes; {len(elsewhere)} costs in items of another function, "
        f"{sum(not c.excused for _, c in elsewhere)} of them not excused.",
        "",
    ]
    for lab_id, (lab_rows_, unjudged) in found.items():
        lines += [f"## {lab_id}", "", "| mistake | in | items where it costs |", "|---|---|---|"]
        lines += [f"| `{r.key}` | `{r.target}` | "
                  f"{', '.join(_cell(c) for c in r.costs) or '(none on the hidden inputs)'} |"
                  for r in lab_rows_]
        if unjudged:
            lines += ["", "Not replayed (training results, records not stored): " +
                      ", ".join(f"`{k}`" for k in unjudged) + "."]
        blind = [c.grade_id for c in chosen([lab_id])[lab_id].cells if not c.catalogue]
        if blind:
            lines += ["", "Cells that name no catalogue (their records keep the reference's "
                      "values here): " + ", ".join(f"`nb/{g}`" for g in blind) + "."]
        lines.append("")
    lines += ["## Items that cannot be judged apart", ""]
    for lab_id, checks in chosen(list(found)).items():
        for item, (_, en) in sorted((getattr(checks, "composed", {}) or {}).items()):
            lines.append(f"- {lab_id} `{item}`: {en}")
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    args = parser.parse_args(argv)
    text = render(matrix())
    if args.check:
        current = PAGE.exists() and PAGE.read_text(encoding="utf-8") == text
        print("mistake matrix: " + ("current" if current else f"stale, regenerate {PAGE}"))
        return 0 if current else 1
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
