"""One mistake costs once in the notebook too: a test cell whose records run a function of its
lab's module that the module's items grade names the module's catalogue (``CellCheck.catalogue``,
with ``given``), so that a record holding what a classic mistake of that function gives passes
with a note (error carried forward, ``grader.hidden.cells``) instead of charging the mistake a
second time. A cell that names no catalogue keeps the reference's values in the mistake matrix
(``grader/mistake_matrix.md``), which then cannot see it charge twice: this test does.

A record runs a graded function when its expression names one, or names something the notebook's
given and solved cells build with one (a variable, a function of the notebook), at any depth.
Records kept for diagnoses only (``_...``) and training results (``volatile``) score nothing by
their stored values, and are left out.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import replace

import pytest
from mistaken_sources import MISTAKEN
from source_runs import mutated, reference
from test_mistakes_shared import recorded

from grader.build.mistakes import catalogue
from grader.hidden import chosen
from grader.hidden.carried import functions
from grader.hidden.spec import LabChecks
from grader.trusted import nbexec
from grader.trusted.references import References
from grader.trusted.verdicts import CellContext
from minimodel.course import find_lab


def graded(checks: LabChecks, module: str) -> set[str]:
    """The functions of ``module`` (a class by its name) that the lab's items grade and that
    have classic mistakes in its catalogue, and the module's tables that hold one
    (``scaling.SCALINGS``, through which the notebook calls each method)."""
    groups = {item.group for item in checks.items}
    mistaken = {m.target.split(".", 1)[0] for m in catalogue(module)}
    names = {name for g in checks.groups if g.key in groups and g.module == module
             for name in functions(g) if name in mistaken}
    loaded = importlib.import_module(f"minimodel.positional.{module}")
    return names | {name for name, table in vars(loaded).items() if isinstance(table, dict) and
                    any(getattr(f, "__name__", None) in names for f in table.values())}


def _walk(node: ast.AST):
    """``ast.walk`` that does not enter the bodies of functions, classes and lambdas (their
    names are their own)."""
    yield node
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                          | ast.Lambda):
            yield from _walk(child)


def _bound(statement: ast.stmt) -> set[str]:
    """The names a top-level statement of a cell binds or fills (``rows[hook] = ...``)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    names = set()
    for node in _walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Subscript | ast.Attribute) and isinstance(
                node.ctx, ast.Store) and isinstance(node.value, ast.Name):
            names.add(node.value.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return names


def _used(node: ast.AST) -> set[str]:
    """The free names of ``node``: those it reads, less the parameters of its lambdas and the
    targets of its comprehensions."""
    local = {a.arg for n in ast.walk(node) if isinstance(n, ast.Lambda)
             for a in (*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs)}
    local |= {t.id for n in ast.walk(node) if isinstance(n, ast.comprehension)
              for t in ast.walk(n.target) if isinstance(t, ast.Name)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - local


def running(lab_id: str, names: set[str]) -> set[str]:
    """``names`` and every name that the lab notebook's cells, the graded test cells aside (the
    grader replaces them by its recorder), build from one of them, at any depth."""
    uses: dict[str, set[str]] = {}
    for cell in nbexec.source_notebook(find_lab(lab_id).slug).cells:
        if cell.cell_type != "code" or cell.metadata.get("nbgrader", {}).get("grade"):
            continue
        for statement in ast.parse(cell.source).body:
            used = _used(statement)
            for name in _bound(statement):
                uses.setdefault(name, set()).update(used)
    found = set(names)
    while grown := {n for n, used in uses.items() if n not in found and used & found}:
        found |= grown
    return found


def scored_names(cell) -> set[str]:
    """The names used by the records that score by their stored values."""
    return {n for name, expression in cell.records.items()
            if not name.startswith("_") and name not in cell.volatile
            for n in _used(ast.parse(expression, mode="eval"))}


# Cells that run a graded function and name no catalogue, and why. Where a mistake of the
# notebook's own function gives exactly what a classic mistake of the module gives, a record that
# holds it cannot be credited to the module (the student's module may be right); where the
# records that run the module are training results, no value of a mistake can be stored; where
# the course's own model calls the module, the copies of the module these tests write do not
# reach it.
APART = {
    ("17.04", "test-profile"): "attention_profile without its flip: alibi_bias's wrong sign",
    ("17.05", "test-bucket-starts"): "bucket_starts with the key at +n: the bucket's wrong sign",
    ("17.06", "test-mae"): "to_mae_layout with the halves in place: sinusoidal_2d column first",
    ("18.03", "test-chunk-bias"): "chunk_bias with ALiBi's sign wrong: relative_positions' sign",
    ("18.01", "test-averages"): "bucket_means of trained losses, judged by properties only",
    ("18.03", "test-kv-bytes"): "the bytes of a model's KV cache, which no mistake changes",
    ("18.02", "test-with-scaling"): "the course's GPT calls the method, not the notebook",
}


def uncatalogued() -> list[tuple[str, str, str, list[str]]]:
    """(lab, cell, module, graded names its records run) of each cell that runs a graded
    function of its lab's module without naming that module's catalogue (those of
    :data:`APART` aside)."""
    found = []
    for lab_id, checks in chosen().items():
        for module in find_lab(lab_id).modules:
            names = graded(checks, module)
            if not names or not checks.cells:
                continue
            built = running(lab_id, names)
            for cell in checks.cells:
                if cell.catalogue != module and (lab_id, cell.grade_id) not in APART and (
                        runs := scored_names(cell) & built):
                    found.append((lab_id, cell.grade_id, module, sorted(runs)))
    return found


def test_a_cell_that_runs_a_graded_function_names_its_catalogue():
    assert uncatalogued() == []


def test_the_cells_kept_apart_run_a_graded_function_and_name_no_catalogue(monkeypatch):
    kept = {(lab, cell.grade_id) for lab, checks in chosen().items() for cell in checks.cells
            if (lab, cell.grade_id) in APART and not cell.catalogue}
    assert kept == set(APART)
    monkeypatch.setitem(globals(), "APART", {})
    assert {(lab, cell) for lab, cell, _, _ in uncatalogued()} == set(kept)


def test_the_search_finds_a_cell_that_names_no_catalogue(monkeypatch):
    """17.04's test-bias, without its catalogue: its records call alibi_bias and read the given
    cell's ``causal``, built with it."""
    checks = chosen(["17.04"])["17.04"]
    cells = tuple(replace(c, catalogue="", given="") if c.grade_id == "test-bias" else c
                  for c in checks.cells)
    monkeypatch.setitem(globals(), "chosen", lambda labs=None: {"17.04": replace(
        checks, cells=cells)})
    assert uncatalogued() == [("17.04", "test-bias", "alibi",
                               ["alibi_bias", "alibi_slopes", "causal", "slopes8", "symmetric"])]


# (lab, cell, module, mistake): a locked cell that only re-runs the module's function, with the
# function's classic mistake written into the module; the module's items charge it.
RERUNS = [("17.04", "test-slopes", "alibi", "off-by-one"),
          ("17.05", "test-buckets", "relative_bias", "sign"),
          ("17.06", "test-two-d", "two_d", "column-first")]


@pytest.mark.parametrize(("lab_id", "grade_id", "module", "code"), RERUNS,
                         ids=[f"{lab}-{cell}-{code}" for lab, cell, _, code in RERUNS])
def test_a_cell_that_reruns_the_module_keeps_its_points(lab_id, grade_id, module, code,
                                                        tmp_path):
    cell = next(c for c in chosen([lab_id])[lab_id].cells if c.grade_id == grade_id)
    points = nbexec.graded_cells(nbexec.source_notebook(find_lab(lab_id).slug))[grade_id][
        "points"]
    refs = References(lab_id)

    def judged(source: str, folder: str):
        records = recorded(cell, source, tmp_path / folder)
        return cell.judge(CellContext(cell, points, records, refs.cell(grade_id),
                                      {"status": "finished"}, refs.cell_mistakes(grade_id)))

    assert judged(reference(module), "right").score == points
    verdict = judged(mutated(module, MISTAKEN[module][code]), "wrong")
    assert verdict.score == points, verdict.findings
    assert any(f.code == code and not f.scoring for f in verdict.findings), verdict.findings
    assert any(f.code == "built-on-mistake" for f in verdict.findings)
