"""Hidden checks of lab 17.06 (2-D positions) on real sources: the reference, the stub, the
reference with one typical mistake written in, and a student's rope.py that two_d.py depends on.

The expected scores follow from how many hidden cases each mistake changes (see the case lists
in ``solutions/labs/17_06_two_d/checks.py``): e.g. ``align_corners=True`` changes 5 of the 6
resizes (the same-size one stays the identity), so the 2-point grid item keeps 2 * 1/6 = 0.33.
"""

from __future__ import annotations

import pytest
from source_runs import (
    assert_not_implemented,
    codes,
    grade_sources,
    mutated,
    points,
    reference,
    scoring,
    stub,
)

from grader.hidden import registry

ROPE = reference("rope")
ITEM_POINTS = {"sin": 2, "grid": 2, "rope": 2}

MISTAKES = [
    # (name, replacements in two_d.py, item, score left, diagnosis)
    ("column-first", [("torch.cat((rows, cols), dim=-1)", "torch.cat((cols, rows), dim=-1)")],
     "sin", 0.0, "column-first"),
    ("blocks", [("return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)",
                 "return torch.cat((angles.sin(), angles.cos()), dim=-1)")],
     "sin", 0.5, "blocks"),  # d = 4: one frequency, so [sin | cos] is the interleaved order
    ("over-d", [("dtype=torch.float64) / half)", "dtype=torch.float64) / d)")],
     "sin", 0.5, "over-d"),  # d = 4: the only frequency is 1 either way
    ("align-corners", [("size=(new_h, new_w), mode=mode, align_corners=False)",
                        "size=(new_h, new_w), mode=mode, align_corners=True)")],
     "grid", 0.33, "align-corners"),
    ("transposed", [("cells_table.reshape(h, w, D)", "cells_table.reshape(w, h, D)"),
                    ("F.interpolate(image, size=(new_h, new_w)",
                     "F.interpolate(image, size=(new_w, new_h)")],
     "grid", 1.0, "transposed"),  # only the three non-square grids change
    ("prefix-lost", [("return torch.cat((prefix, resized), dim=0).to(table.dtype)",
                      "return resized.to(table.dtype)")],
     "grid", 1.33, "prefix"),  # two of the six tables have prefix rows
    ("grid-dtype", [("return torch.cat((prefix, resized), dim=0).to(table.dtype)",
                     "return torch.cat((prefix, resized), dim=0)")],
     "grid", 1.67, "dtype-not-kept"),  # the bfloat16 table comes back float32
    ("blocks-swapped", [("apply_rotary(x[..., :r], cos_r, sin_r,",
                         "apply_rotary(x[..., :r], cos_c, sin_c,"),
                        ("apply_rotary(x[..., r : 2 * r], cos_c, sin_c,",
                         "apply_rotary(x[..., r : 2 * r], cos_r, sin_r,")],
     "rope", 0.0, "swapped"),
    ("rows-only", [("apply_rotary(x[..., r : 2 * r], cos_c, sin_c,",
                    "apply_rotary(x[..., r : 2 * r], cos_r, sin_r,")],
     "rope", 0.0, "rows-only"),
]


def test_item_points():
    assert {i.key: i.points for i in registry()["17.06"].items} == ITEM_POINTS


def test_reference_scores_full_marks(tmp_path):
    verdicts = grade_sources("17.06", {"two_d": reference("two_d"), "rope": ROPE}, tmp_path)
    assert points(verdicts) == 6
    assert all(v.status == "passed" and not v.findings for v in verdicts.values())


def test_stub_scores_zero_and_says_not_implemented(tmp_path):
    assert_not_implemented(grade_sources("17.06", {"two_d": stub("two_d"), "rope": ROPE}, tmp_path),
                           only=False)


@pytest.mark.parametrize("name, replacements, item, left, code", MISTAKES,
                         ids=[m[0] for m in MISTAKES])
def test_mistake_is_named_and_costs_its_points(tmp_path, name, replacements, item, left, code):
    verdicts = grade_sources("17.06", {"two_d": mutated("two_d", *replacements), "rope": ROPE},
                             tmp_path)
    assert verdicts[item].score == left
    assert code in codes(verdicts[item])
    finding = next(f for f in verdicts[item].findings if f.code == code)
    assert finding.es and finding.en and finding.es != finding.en
    others = {k: v.score for k, v in verdicts.items() if k != item}
    assert others == {k: p for k, p in ITEM_POINTS.items() if k != item}


def test_stub_rope_py_is_named_as_the_cause(tmp_path):
    verdicts = grade_sources("17.06", {"two_d": reference("two_d"), "rope": stub("rope")},
                             tmp_path)
    assert verdicts["sin"].score == 2 and verdicts["grid"].score == 2
    rope = verdicts["rope"]
    assert rope.score == 0 and scoring(rope) == {"depends-on-rope"}
    finding = next(f for f in rope.findings if f.code == "depends-on-rope")
    assert "rope.py" in finding.es and "17.03" in finding.es
    assert "no está implementado" in finding.es
    assert "depends on rope.py" in finding.en and "not implemented yet" in finding.en


def test_wrong_rope_py_costs_nothing_when_two_d_is_verified_on_top_of_it(tmp_path):
    swapped = ROPE.replace('if convention == "interleaved":\n        # Pair (2i',
                           'if convention != "interleaved":\n        # Pair (2i')
    assert swapped != ROPE
    verdicts = grade_sources("17.06", {"two_d": reference("two_d"), "rope": swapped}, tmp_path)
    rope = verdicts["rope"]
    assert rope.score == 2 and not scoring(rope)
    note = next(f for f in rope.findings if f.code == "depends-on-rope")
    assert not note.scoring and "rope.py" in note.es and "lab 17.03" in note.en
    # the same rope.py under a two_d.py with its own mistake: that mistake is still named
    broken = mutated("two_d", ("apply_rotary(x[..., r : 2 * r], cos_c, sin_c,",
                               "apply_rotary(x[..., r : 2 * r], cos_r, sin_r,"))
    verdicts = grade_sources("17.06", {"two_d": broken, "rope": swapped}, tmp_path)
    assert verdicts["rope"].score == 0


def test_rope_py_that_hides_the_result_fails_with_the_reason(tmp_path):
    wrong = ROPE.replace(
        "return angles.cos() * attention_factor, angles.sin() * attention_factor",
        "return angles.sin() * attention_factor, angles.cos() * attention_factor")
    verdicts = grade_sources("17.06", {"two_d": reference("two_d"), "rope": wrong}, tmp_path)
    rope = verdicts["rope"]
    assert rope.score == 0 and scoring(rope) == {"depends-on-rope"}
    assert "no da los valores esperados" in rope.findings[0].es


def test_rope_py_that_does_not_import_stops_every_item_and_says_so(tmp_path):
    verdicts = grade_sources("17.06", {"two_d": reference("two_d"),
                                       "rope": ROPE + "\ndef broken(:\n"}, tmp_path)
    assert points(verdicts) == 0
    for verdict in verdicts.values():
        assert {"depends-on-rope", "syntax-error"} <= codes(verdict)
        syntax = next(f for f in verdict.findings if f.code == "syntax-error")
        assert syntax.en.startswith("rope.py has a syntax error")


def test_grading_run_without_rope_py_uses_the_released_stub(tmp_path):
    """A submission without rope.py still imports two_d.py (the released rope.py stub is put
    in its place): the 2-D table and the resize are graded, apply_rope_2d says it depends on
    rope.py. Through the real sandbox."""
    import io

    from grader.trusted import gradebook
    from grader.trusted.grading import Options, grade
    from grader.trusted.sandbox import Limits

    for student, files in (("no_rope", {}), ("rope_stub", {"rope": stub("rope")})):
        folder = tmp_path / "subs" / student / "src" / "minimodel" / "positional"
        folder.mkdir(parents=True)
        for name, source in {"two_d": reference("two_d"), **files}.items():
            (folder / f"{name}.py").write_text(source, encoding="utf-8")
    options = Options(workers=1, limits=Limits(wall_s=20, cpu_s=20, memory_mb=1024),
                      progress=False, labs=["17.06"])
    summary = grade(tmp_path / "subs", tmp_path / "out", options, stream=io.StringIO())
    assert not summary["failed"]
    for record in gradebook.load_records(tmp_path / "out"):
        items = {v["key"]: v for v in record["labs"]["17.06"]["items"]}
        assert items["sin"]["score"] == 2 and items["grid"]["score"] == 2, record["student_id"]
        assert items["rope"]["score"] == 0
        assert {f["code"] for f in items["rope"]["findings"]} == {"depends-on-rope"}


def test_judges_answer_nonsense_outputs_with_no_points():
    from source_runs import judge_garbage

    assert all(v.score < v.points for v in judge_garbage("17.06"))
