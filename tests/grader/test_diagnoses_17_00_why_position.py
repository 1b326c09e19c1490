"""Hidden checks of lab 17.00 (permutation equivariance) on real sources: the reference, the stub
and the reference with one typical mistake written in. The layers are built in the child from
lambdas (``spec.Function``), here as in a grading run.

Each expected score follows from the hidden cases the mistake changes (``grader/hidden/
lab_17_00.py``): the identity permutation and ``T = 1`` give 0 whatever the mistake, the two
equivariant layers give 0 unless the output is compared unpermuted or with the inverse.
"""

from __future__ import annotations

import pytest
from mistaken_sources import MISTAKEN as SOURCES
from source_runs import (
    assert_not_implemented,
    codes,
    grade_sources,
    mutated,
    points,
    reference,
    stub,
)

from grader.hidden import lab_17_00 as lab
from grader.hidden import registry
from grader.trusted.references import References

RETURN = "return (permuted_first - permuted_after).abs().max().item()"

# the gap's mistakes (the catalogue's, written as in mistaken_sources): {item: score left}
SCORES = {"not-permuted": {"gap": 0.5}, "inverse": {"gap": 0.5},
          "inverse-both": {"gap": 1.5},  # the inverse displaces as far as perm: the ramp's and
          "batch-axis": {"gap": 0.75},   # table's gaps stay
          "no-abs": {"gap": 1.5}, "mean": {"gap": 1.0}, "norm": {"gap": 1.0}}
MISTAKES = [(name, [SOURCES["equivariance"][name]], scores, name)
            for name, scores in SCORES.items()]
MISTAKES += [
    # (name, replacements, {item: score left}, diagnosis)
    ("returns-tensor", [(RETURN, "return (permuted_first - permuted_after).abs().max()")],
     {"contract": 0.5}, "returns-tensor"),
    ("gradients-on", [("with torch.no_grad():", "if True:")], {"contract": 0.5},
     "gradients-on"),
]


def test_every_mistake_of_the_catalogue_is_scored():
    assert sorted(SCORES) == sorted(SOURCES["equivariance"])


def test_item_points_and_layers():
    assert {i.key: i.points for i in registry()["17.00"].items} == {"gap": 2, "contract": 1}
    outputs = References("17.00").group("gap")
    gaps = [float(outputs[k][0]["array"]) for k in lab.GAP_CASES]
    assert all(g < 1e-6 for g in gaps[:2]) and all(g > 0.1 for g in gaps[2:6])
    assert gaps[6] == gaps[7] == 0  # identity permutation, T = 1


def test_reference_scores_full_marks(tmp_path):
    verdicts = grade_sources("17.00", {"equivariance": reference("equivariance")}, tmp_path)
    assert points(verdicts) == 3
    assert all(v.status == "passed" and not v.findings for v in verdicts.values())


def test_stub_scores_zero_and_says_not_implemented(tmp_path):
    assert_not_implemented(grade_sources("17.00", {"equivariance": stub("equivariance")},
                                         tmp_path))


@pytest.mark.parametrize("name, replacements, scores, code", MISTAKES,
                         ids=[m[0] for m in MISTAKES])
def test_mistake_is_named_and_costs_its_points(tmp_path, name, replacements, scores, code):
    verdicts = grade_sources("17.00", {"equivariance": mutated("equivariance", *replacements)},
                             tmp_path)
    (item,) = scores
    assert code in codes(verdicts[item])
    finding = next(f for f in verdicts[item].findings if f.code == code)
    assert finding.es and finding.en and finding.es != finding.en
    assert {k: v.score for k, v in verdicts.items()} == {"gap": 2, "contract": 1, **scores}


def test_judges_answer_nonsense_outputs_with_no_points():
    from source_runs import judge_garbage

    assert all(v.score < v.points for v in judge_garbage("17.00"))
