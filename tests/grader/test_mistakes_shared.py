"""One vocabulary of mistakes: what the self-check names, the grader names with the same code and
the same words, on the same student's file (``solutions/mistakes/`` is the only source of both;
for a return value of the wrong kind, ``minimodel.selfcheck.contracts``).

For each module of ``mistaken_sources`` and each mistake of its catalogue, a copy of the reference
with that mistake written in is checked by ``minimodel check`` (visible inputs, stored answers)
and graded (hidden inputs, reference outputs); where a notebook test cell recognises the
catalogue's mistakes (``CellCheck.catalogue``), the cell's records computed with that copy are
judged too.
"""

from __future__ import annotations

import importlib.util
import json
import re

import numpy as np
import pytest
import torch
from mistaken_sources import MISTAKEN
from selfcheck_copies import checked, student_copy
from source_runs import grade_source, mutated, reference

from grader.build.mistakes import catalogue
from grader.child.probe_runner import save_outputs
from grader.hidden import registry
from grader.hidden.spec import NotebookChecks
from grader.trusted.nbexec import read_records
from grader.trusted.references import References
from grader.trusted.safe_io import Beneath
from grader.trusted.verdicts import MISTAKE_TOLERANCE, CellContext, values_close
from minimodel.course import lab_of
from minimodel.selfcheck.compare import CheckFailure, expect_array
from minimodel.selfcheck.contracts import CONTRACTS

CASES = [(lab_of(module).id, item) for module in MISTAKEN for item in catalogue(module)]
CELL_CASES = [(lab_id, cell, item) for lab_id, item in CASES
              for cell in registry()[lab_id].cells if cell.catalogue == item.module]


def test_every_mistake_of_those_modules_has_a_source():
    assert sorted((item.module, item.code) for _, item in CASES) == sorted(
        (module, code) for module, codes in MISTAKEN.items() for code in codes)


@pytest.mark.parametrize(("lab_id", "item"), CASES, ids=[f"{lab}-{m.key}" for lab, m in CASES])
def test_the_self_check_and_the_grader_name_it_alike(lab_id, item, tmp_path):
    edit = MISTAKEN[item.module][item.code]
    said = [r for r in checked(lab_id, student_copy(tmp_path, item.module, edit))
            if item.es in r.detail_es]
    assert said and all(item.en in r.detail_en for r in said), "the self-check does not name it"
    verdicts = grade_source(item.module, mutated(item.module, edit), tmp_path)
    named = [f for v in verdicts.values() for f in v.findings if f.code == item.code]
    assert named, f"the grader does not name {item.code}"
    # in the self-check's words, after the function that holds it (the self-check's heading)
    assert all(f.es == f"{item.target}: {item.es}" and f.en == f"{item.target}: {item.en}"
               for f in named)


@pytest.mark.parametrize(("distance", "named"), [(5e-4, True), (1e-9, True), (1e-2, False)])
def test_a_mistake_is_recognised_within_one_tolerance(distance, named):
    """make check names a mistake for the values the grader names it for: a value off the
    mistake's by more than a check's tolerance but within the grader's, NaN where it has NaN."""
    wrong = np.array([0.0, 0.25, np.nan, 1.0, -3.0])
    got = wrong + distance
    with pytest.raises(CheckFailure) as failure:
        expect_array(got, wrong + 1.0, name="v", mistakes={"m": (wrong, "por esto", "for this")})
    assert failure.value.en.endswith("\nfor this") is named
    assert failure.value.es.endswith("\npor esto") is named
    assert values_close(got, wrong, MISTAKE_TOLERANCE)[0] is named


def test_of_two_mistakes_that_fit_the_closest_is_named():
    got = np.array([0.001, 0.002])
    mistakes = {"near": (got + 5e-6, "cerca", "near"), "same": (got.copy(), "igual", "same")}
    with pytest.raises(CheckFailure) as failure:
        expect_array(got, got + 1.0, name="v", mistakes=mistakes)
    assert failure.value.en.endswith("\nsame") and failure.value.es.endswith("\nigual")


def test_two_mistakes_that_give_the_same_values_are_both_named():
    """One value cannot tell them apart (a table from 1, a forward off by one): both are named."""
    got = np.array([0.001, 0.002])
    mistakes = {"a": (got.copy(), "una", "one"), "b": (got.copy(), "otra", "other")}
    with pytest.raises(CheckFailure) as failure:
        expect_array(got, got + 1.0, name="v", mistakes=mistakes)
    assert failure.value.en.endswith("\none Or: other")
    assert failure.value.es.endswith("\nuna O bien: otra")


# A student's file that breaks one return contract (minimodel.selfcheck.contracts): lab, module,
# contract and the edit that breaks it.
BROKEN_CONTRACTS = [
    ("17.01", "sinusoidal", ("sinusoidal_pe", "returns-tensor"),
     ("    return pe\n", "    return torch.from_numpy(pe)\n")),
    ("17.01", "sinusoidal", ("sinusoidal_pe", "float64-output"),
     ("pe = np.empty((T, d), dtype=np.float32)", "pe = np.empty((T, d), dtype=np.float64)")),
    ("17.03", "rope", ("rope_frequencies", "float64-output"),
     ("return 1.0 / base**exponents", "return 1.0 / base**exponents.double()")),
    ("17.00", "equivariance", ("permutation_equivariance_gap", "returns-tensor"),
     (".abs().max().item()", ".abs().max()")),
    ("17.00", "equivariance", ("permutation_equivariance_gap", "not-a-float"),
     (".abs().max().item()", ".abs().max().numpy()")),
    ("18.01", "extrapolation", ("doubling_buckets", "not-ints"),
     ("return list(zip(edges[:-1], edges[1:], strict=True))",
      "return [(torch.tensor(a), torch.tensor(b)) for a, b in zip(edges[:-1], edges[1:])]")),
    ("18.01", "extrapolation", ("bucket_means", "not-float32"),
     ("torch.stack(means).to(torch.float32)", "torch.stack(means).double()")),
    ("18.01", "extrapolation", ("failure_position", "not-int"),
     ("            return p\n", "            return torch.tensor(p)\n")),
    ("18.01", "extrapolation", ("needle_distance", "not-int"),
     ("return int(query - first_digit)", "return torch.tensor(query - first_digit)")),
    ("18.02", "scaling", ("scaling", "not-a-pair"),
     ("return rope_frequencies(rotary_dim, base) / factor, 1.0",
      "return rope_frequencies(rotary_dim, base) / factor")),
    ("18.02", "scaling", ("scaling", "float64-output"),
     ("return rope_frequencies(rotary_dim, base) / factor, 1.0",
      "return (rope_frequencies(rotary_dim, base) / factor).double(), 1.0")),
    ("18.02", "scaling", ("scaling", "factor-type"),
     ("return rope_frequencies(rotary_dim, base) / factor, 1.0",
      "return rope_frequencies(rotary_dim, base) / factor, torch.tensor(1.0)")),
    ("17.01", "sinusoidal", ("SinusoidalPositionalEncoding.forward", "dtype-not-kept"),
     (".to(device=x.device, dtype=x.dtype)", ".to(device=x.device)")),
    ("17.02", "learned", ("LearnedPositionalEmbedding.forward", "dtype-not-kept"),
     ("return x + rows.to(x.dtype)", "return x + rows")),
    ("17.02", "learned", ("interpolate_positions", "dtype-not-kept"),
     ("frac).to(table.dtype)", "frac)")),
    ("17.03", "rope", ("apply_rotary", "dtype-not-kept"),
     ("convention=convention).to(x.dtype)", "convention=convention)")),
    ("17.06", "two_d", ("interpolate_grid", "dtype-not-kept"),
     ("dim=0).to(table.dtype)", "dim=0)")),
    ("18.03", "cache_positions", ("bias_rows_after_cache", "dtype-not-kept"),
     ("cache_len:k_len, :k_len]", "cache_len:k_len, :k_len].float()")),
]


def words(text: str) -> re.Pattern:
    """A contract's text as a pattern: its ``{dtypes}`` stands for any list of them."""
    return re.compile(re.escape(text).replace(re.escape("{dtypes}"), r"[\w →,]+"))


def test_every_contract_is_broken_here():
    assert sorted(c for _, _, c, _ in BROKEN_CONTRACTS) == sorted(CONTRACTS)


@pytest.mark.parametrize(("lab_id", "module", "contract", "edit"), BROKEN_CONTRACTS,
                         ids=[f"{c[0]}-{c[1]}" for _, _, c, _ in BROKEN_CONTRACTS])
def test_a_broken_contract_is_said_alike(lab_id, module, contract, edit, tmp_path):
    es, en = (words(text) for text in CONTRACTS[contract])
    said = [r for r in checked(lab_id, student_copy(tmp_path, module, edit))
            if es.search(r.detail_es)]
    assert said and all(en.search(r.detail_en) for r in said), "the self-check does not say it"
    verdicts = grade_source(module, mutated(module, edit), tmp_path)
    named = [f for v in verdicts.values() for f in v.findings if f.code == contract[1]]
    assert named, f"the grader does not name {contract[1]}"
    assert all(es.fullmatch(f.es) and en.fullmatch(f.en) for f in named)


def recorded(cell, source: str, folder) -> dict:
    """The cell's records as the kernel's recorder writes them and the grader reads them back,
    with ``source`` as the student's module and the cell's given names."""
    folder.mkdir()
    (folder / "student.py").write_text(source)
    spec = importlib.util.spec_from_file_location(f"student_{folder.name}", folder / "student.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    names = {"np": np, "torch": torch, **vars(module)}
    exec(cell.given, names)
    base = folder / "records" / cell.grade_id
    base.mkdir(parents=True)
    results = {}
    for name, expression in cell.records.items():
        try:
            results[name] = {"ok": True, "outputs": save_outputs(eval(expression, names),
                                                                 str(base / name))}
        except Exception as error:  # noqa: BLE001 - recorded, as the kernel's recorder does
            results[name] = {"ok": False, "error": {"type": type(error).__name__}}
    (base / "record.json").write_text(json.dumps(results))
    return read_records(Beneath(folder), NotebookChecks("lab", (cell,)), [])[cell.grade_id]


def _differs(a: dict, b: dict) -> bool:
    """Two recorded values differ (in an error, a kind, a shape or a value)."""
    if not (a.get("ok") and b.get("ok")):
        return a != b
    if len(a["outputs"]) != len(b["outputs"]):
        return True
    for x, y in zip(a["outputs"], b["outputs"], strict=True):
        arrays = [None if o.get("array") is None else np.asarray(o["array"], dtype=np.float64)
                  for o in (x, y)]
        if x.get("value") != y.get("value") or (arrays[0] is None) != (arrays[1] is None) or (
                arrays[0] is not None and not (arrays[0].shape == arrays[1].shape and
                                               np.array_equal(*arrays, equal_nan=True))):
            return True
    return False


@pytest.mark.parametrize(("lab_id", "cell", "item"), CELL_CASES,
                         ids=[f"{lab}-{c.grade_id}-{m.key}" for lab, c, m in CELL_CASES])
def test_a_notebook_cell_names_it_alike(lab_id, cell, item, tmp_path):
    right = recorded(cell, reference(item.module), tmp_path / "right")
    edit = MISTAKEN[item.module][item.code]
    try:
        wrong = recorded(cell, mutated(item.module, edit), tmp_path / "wrong")
    except Exception as error:  # noqa: BLE001 - as the notebook's given cells would raise
        pytest.skip(f"{item.code} breaks the given cells of {cell.grade_id} ({error!r}): "
                    "nothing is recorded to carry forward")
    refs = References(lab_id)

    def judged(records):
        return cell.judge(CellContext(cell, 2.0, records, refs.cell(cell.grade_id),
                                      {"status": "finished"}, refs.cell_mistakes(cell.grade_id)))

    verdict = judged(wrong)
    if not any(_differs(wrong[n], right[n]) for n in cell.records):  # none of the cell's values
        assert verdict.score == 2.0 and not verdict.findings
        pytest.skip(f"{item.code} changes none of the values of {cell.grade_id}")
    if verdict.score == 2.0 and not verdict.findings:  # rounding noise: norms of a rotation
        pytest.skip(f"{item.code} changes {cell.grade_id}'s values within its tolerance only")
    named = [f for f in verdict.findings if f.code == item.code]
    assert named, f"the cell does not name {item.code}: {verdict}"
    assert all(f.es == f"{item.target}: {item.es}" and f.en == f"{item.target}: {item.en}"
               for f in named)
    if raising := [n for n in cell.records if not wrong[n].get("ok") and right[n].get("ok")]:
        pytest.skip(f"{item.code} raises in {cell.grade_id}'s {raising}: what raises is not "
                    "carried forward")
    # one mistake costs once: in the module's items; the cell, built on it, keeps its points
    # (what the module itself gives outside the kernel is another matter: no probe here)
    assert verdict.score == judged(right).score, verdict.findings
    assert cell.group or not any(f.scoring for f in named)  # (a cell's probe: not run here)
    assert any(f.code == "built-on-mistake" and item.target in f.en for f in verdict.findings)
