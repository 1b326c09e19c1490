"""Hidden checks of lab 18.03 (KV cache positions) on the reference, the stub, and copies of the
reference with one typical mistake each, run through the probe (CPU and ``meta`` device): each
mistake is named and costs exactly the hidden cases it changes. A mistake in ``chunk_positions``
or ``relative_positions`` also reaches the functions built on them, as it would for a student."""

from __future__ import annotations

import numpy as np
import pytest
from mistake_models import mask, positions, relative, rows
from source_runs import (
    assert_named_costing_its_cases,
    codes,
    grade_source,
    mutated,
    points,
    reference,
    stub,
)

from grader.hidden import lab_18_03 as lab

MODULE = "cache_positions"
POINTS = {"chunk": 1, "relative": 1, "mask": 2, "rows": 1, "device": 1}
TABLES = lab.inputs()


def test_reference_full_marks(tmp_path):
    verdicts = grade_source("cache_positions", reference(MODULE), tmp_path)
    assert {k: v.score for k, v in verdicts.items()} == POINTS
    assert not any(codes(v) for v in verdicts.values())
    assert verdicts["device"].gpu == "not run"


def test_stub_scores_zero_and_says_not_implemented(tmp_path):
    verdicts = grade_source("cache_positions", stub(MODULE), tmp_path)
    assert points(verdicts) == 0
    assert all(codes(v) == {"not-implemented"} for v in verdicts.values())


def differs(a, b):
    return a.shape != b.shape or not np.array_equal(a, b)


def chunk_changed(name):
    return [differs(positions(c, q, name), positions(c, q)) for c, q in lab.CHUNK_CASES]


def relative_changed(name):
    return [differs(relative(c, q, name), relative(c, q)) for c, q in lab.RELATIVE_CASES]


def mask_changed(name):
    return [differs(mask(c, q, name), mask(c, q)) for c, q, _ in lab.MASK_CASES]


def rows_changed(name):
    return [differs(rows(TABLES[key], c, q, name), rows(TABLES[key], c, q))
            for key, _, c, q in lab.ROWS_CASES]


CHUNK = "torch.arange(cache_len, cache_len + q_len, dtype=torch.long, device=device)"
KEYS = "torch.arange(cache_len + q_len, dtype=torch.long, device=device)[None, :]"
FUTURE = "future = relative_positions(cache_len, q_len, device=device) > 0"
ZEROS = "torch.zeros(future.shape, dtype=dtype, device=device)"
ROWS = "return table[..., cache_len:k_len, :k_len]"
# item, diagnosis, replacements, hidden cases it changes, other items it reaches (and names)
MISTAKES = [
    ("chunk", "restart", [(CHUNK, "torch.arange(q_len, dtype=torch.long, device=device)")],
     chunk_changed("restart"), {"relative": "restart", "mask": "top-left", "device": "restart"}),
    ("chunk", "off-by-one", [(CHUNK, CHUNK.replace("cache_len,", "cache_len + 1,")
                              .replace("cache_len + q_len,", "cache_len + 1 + q_len,"))],
     chunk_changed("off-by-one"), {"relative": "off-by-one", "mask": "off-by-one",
                                   "device": "off-by-one"}),
    ("chunk", "not-int64", [(CHUNK, CHUNK.replace("torch.long", "torch.int32"))],
     [True] * len(lab.CHUNK_CASES), {"device": None}),
    ("relative", "sign", [("    return key - query\n", "    return query - key\n")],
     relative_changed("sign"), {"mask": None, "device": "sign"}),
    ("relative", "chunk-restart", [
        ("query = chunk_positions(cache_len, q_len,", "query = chunk_positions(0, q_len,"),
        (KEYS, "torch.cat([torch.arange(cache_len), torch.arange(q_len)]).to(device)[None, :]")],
     relative_changed("chunk-restart"), {"mask": None, "device": "chunk-restart"}),
    ("relative", "new-keys-only", [(KEYS, KEYS.replace("arange(cache_len + q_len,",
                                                       "arange(cache_len, cache_len + q_len,"))],
     relative_changed("new-keys-only"), {"mask": None, "device": "new-keys-only"}),
    ("mask", "top-left", [(FUTURE, "future = torch.ones(q_len, cache_len + q_len, "
                                   "dtype=torch.bool, device=device).triu(1)")],
     mask_changed("top-left"), {"device": "top-left"}),
    ("mask", "strict", [(FUTURE, FUTURE.replace("> 0", ">= 0"))], mask_changed("strict"),
     {"device": "strict"}),
    ("mask", "finite-mask", [('mask.masked_fill(future, float("-inf"))',
                              "mask.masked_fill(future, -1e9)")],
     [mask(c, q).min() < 0 for c, q, _ in lab.MASK_CASES],  # float16: -1e9 overflows
     {"device": None}),
    ("mask", "bool-mask", [('return mask.masked_fill(future, float("-inf"))', "return future")],
     [True] * len(lab.MASK_CASES), {"device": None}),
    ("mask", "dtype-ignored", [(ZEROS, ZEROS.replace("dtype=dtype", "dtype=torch.float32"))],
     [dtype is not None for _, _, dtype in lab.MASK_CASES], {}),
    ("rows", "first-rows", [(ROWS, "return table[..., :q_len, :k_len]")],
     rows_changed("first-rows"), {"device": "first-rows"}),
    ("rows", "last-rows", [(ROWS, "return table[..., -q_len:, :k_len]")],
     rows_changed("last-rows"), {"device": "last-rows"}),
    ("rows", "rows-off-by-one", [(ROWS, "return table[..., cache_len + 1 : k_len + 1, :k_len]")],
     rows_changed("off-by-one"), {"device": "rows-off-by-one"}),
    ("rows", "all-columns", [(ROWS, "return table[..., cache_len:k_len, :]")],
     rows_changed("all-columns"), {"device": "all-columns"}),
    ("rows", "rows-new-keys-only", [(ROWS,
                                     "return table[..., cache_len:k_len, cache_len:k_len]")],
     rows_changed("new-keys-only"), {"device": "rows-new-keys-only"}),
    ("rows", "dtype-not-kept", [(ROWS, ROWS + ".float()")],
     [dtype != "float32" for _, dtype, _, _ in lab.ROWS_CASES], {}),
    ("device", "device", [(CHUNK, CHUNK.replace(", device=device", ""))],
     [True, True, True, False], {}),
]


@pytest.mark.parametrize("item, mistake, replacements, changed, reaches", MISTAKES,
                         ids=[f"{m[0]}-{m[1]}" for m in MISTAKES])
def test_mistake_is_named_and_costs_its_cases(item, mistake, replacements, changed, reaches,
                                              tmp_path):
    verdicts = grade_source("cache_positions", mutated(MODULE, *replacements), tmp_path)
    verdict = verdicts[item]
    assert_named_costing_its_cases(verdict, mistake, changed, POINTS[item])
    for other, score in POINTS.items():
        if other == item:
            continue
        if other in reaches and reaches[other]:
            # built on the broken function, and its own work right on top of it, or its device
            # kept with the values the mistake gives: it keeps its points and says where the
            # mistake is (one mistake costs once)
            assert verdicts[other].score == score, (other, verdicts[other].findings)
            assert "built-on-mistake" in codes(verdicts[other]), (other, verdicts[other].findings)
        elif other in reaches:  # a mistake outside the catalogue, run on another device
            assert verdicts[other].score <= score, other
        else:
            assert verdicts[other].score == score, (other, verdicts[other].findings)
