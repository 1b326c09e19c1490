"""Hidden checks of lab 18.01 (extrapolation) on the reference, the stub, and copies of the
reference with one typical mistake each, run through the probe: each mistake is named and costs
exactly the hidden cases it changes."""

from __future__ import annotations

import numpy as np
import pytest
from mistake_models import buckets, failure, means, needle
from source_runs import (
    assert_named_costing_its_cases,
    codes,
    grade_source,
    mutated,
    points,
    reference,
    stub,
)

from grader.hidden import lab_18_01 as lab

MODULE = "extrapolation"
POINTS = {"buckets": 1, "means": 1, "failure": 2, "needle": 1}
INPUTS = lab.inputs()


def test_reference_full_marks(tmp_path):
    verdicts = grade_source("extrapolation", reference(MODULE), tmp_path)
    assert {k: v.score for k, v in verdicts.items()} == POINTS
    assert not any(codes(v) for v in verdicts.values())


def test_stub_scores_zero_and_says_not_implemented(tmp_path):
    verdicts = grade_source("extrapolation", stub(MODULE), tmp_path)
    assert points(verdicts) == 0
    assert all(codes(v) == {"not-implemented"} for v in verdicts.values())
    finding = verdicts["failure"].findings[0]
    assert "implementar" in finding.es and "implemented" in finding.en


def bucket_changed(name):
    return [buckets(*c, mistake=name) != buckets(*c) for c in lab.BUCKET_CASES]


def mean_changed(name):
    return [not np.allclose(means(INPUTS[key], spans, name), means(INPUTS[key], spans),
                            equal_nan=True, rtol=1e-5, atol=1e-6)
            for key, _, spans in lab.MEAN_CASES]


def failure_changed(name):
    return [failure(INPUTS[key], T, tol, w, name) != failure(INPUTS[key], T, tol, w)
            for key, _, T, tol, w in lab.FAILURE_CASES]


def needle_changed(name):
    return [needle(*c, mistake=name) != needle(*c) for c in lab.NEEDLE_CASES]


SMOOTH = "curve[max(0, p - window + 1) : p + 1].nanmean()"
# item, diagnosis, replacements in the reference, which hidden cases the mistake changes
MISTAKES = [
    ("buckets", "linear", [("min(2 * edges[-1], length)", "min(edges[-1] + train_len, length)")],
     bucket_changed("linear")),
    ("buckets", "not-cut", [("edges = [0, min(train_len, length)]", "edges = [0, train_len]"),
                            ("min(2 * edges[-1], length)", "2 * edges[-1]")],
     bucket_changed("not-cut")),
    ("buckets", "not-ints", [("return list(zip(", "return torch.tensor(list(zip("),
                             ("strict=True))\n", "strict=True)))\n")],
     [True] * len(lab.BUCKET_CASES)),
    ("buckets", "not-ints", [("return list(zip(edges[:-1], edges[1:], strict=True))",
                              "return [(float(a), float(b)) for a, b in zip(edges, edges[1:])]")],
     [True] * len(lab.BUCKET_CASES)),
    ("means", "mean-of-means", [(".float().nanmean() for", ".float().nanmean(-1).nanmean() for")],
     mean_changed("mean-of-means")),
    ("means", "nan-not-skipped", [(".float().nanmean() for", ".float().mean() for")],
     mean_changed("nan-not-skipped")),
    ("means", "nan-as-zero", [(".float().nanmean() for", ".float().nan_to_num().mean() for")],
     mean_changed("nan-as-zero")),
    ("means", "not-float32", [(".float().nanmean() for", ".nanmean() for"),
                              ("torch.stack(means).to(torch.float32)", "torch.stack(means)")],
     [dtype != "float32" for _, dtype, _ in lab.MEAN_CASES]),
    ("failure", "centred", [(SMOOTH, "curve[max(0, p - window // 2) : p + (window + 1) // 2]"
                                     ".nanmean()")], failure_changed("centred")),
    ("failure", "forward", [(SMOOTH, "curve[p : p + window].nanmean()")],
     failure_changed("forward")),
    ("failure", "no-smoothing", [(SMOOTH, "curve[p : p + 1].nanmean()")],
     failure_changed("no-smoothing")),
    ("failure", "reference-from-start", [("curve[train_len // 2 : train_len]",
                                          "curve[:train_len]")],
     failure_changed("reference-from-start")),
    ("failure", "search-from-zero", [("range(train_len, len(curve))", "range(len(curve))")],
     failure_changed("search-from-zero")),
    ("failure", "failure-nan-not-skipped", [("train_len].nanmean()", "train_len].mean()"),
                                    (SMOOTH, SMOOTH.replace("nanmean", "mean"))],
     failure_changed("nan-not-skipped")),
    ("failure", "greater-equal", [("if smooth > reference", "if smooth >= reference")],
     failure_changed("greater-equal")),
    ("failure", "window-start", [("            return p\n", "            return p - window + 1\n")],
     failure_changed("window-start")),
    ("failure", "not-int", [("            return p\n", "            return torch.tensor(p)\n")],
     [failure(INPUTS[key], T, tol, w) is not None for key, _, T, tol, w in lab.FAILURE_CASES]),
    ("failure", "not-int", [("            return p\n", "            return float(p)\n")],
     [failure(INPUTS[key], T, tol, w) is not None for key, _, T, tol, w in lab.FAILURE_CASES]),
    ("needle", "truncated", [("round(depth * filler)", "int(depth * filler)")],
     needle_changed("truncated")),
    ("needle", "half-up", [("round(depth * filler)", "int(depth * filler + 0.5)")],
     needle_changed("half-up")),
    ("needle", "off-by-one", [("first_digit = 1 + before + 1", "first_digit = 1 + before")],
     needle_changed("off-by-one")),
    ("needle", "digits-fixed", [("filler = length - 2 * n_digits - 2", "filler = length - 12"),
                                ("query = length - n_digits", "query = length - 5")],
     needle_changed("digits-fixed")),
    ("needle", "not-int", [("return int(query - first_digit)",
                            "return torch.tensor(query - first_digit)")],
     [True] * len(lab.NEEDLE_CASES)),
    ("needle", "not-int", [("return int(query - first_digit)",
                            "return float(query - first_digit)")],
     [True] * len(lab.NEEDLE_CASES)),
]


@pytest.mark.parametrize("item, mistake, replacements, changed", MISTAKES,
                         ids=[f"{m[0]}-{m[1]}" for m in MISTAKES])
def test_mistake_is_named_and_costs_its_cases(item, mistake, replacements, changed, tmp_path):
    verdicts = grade_source("extrapolation", mutated(MODULE, *replacements), tmp_path)
    verdict = verdicts[item]
    assert_named_costing_its_cases(verdict, mistake, changed, POINTS[item])
    for other, score in POINTS.items():  # the other functions keep their points
        if other != item:
            assert verdicts[other].score == score, (other, verdicts[other].findings)
