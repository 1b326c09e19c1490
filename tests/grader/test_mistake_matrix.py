"""One mistake costs once (ARCHITECTURE.md): each classic mistake of the catalogue
(``solutions/mistakes/``) costs points only in the items of the function that holds it, except in
items their lab declares cannot be judged apart (``LabChecks.composed``, with the reason). The
matrix is computed from the references and the judges (``grader.build.mistake_matrix``), and
``grader/mistake_matrix.md`` is its committed page."""

from __future__ import annotations

import pytest

import grader.hidden.common as common
from grader.build import mistake_matrix
from grader.hidden import chosen


@pytest.fixture(scope="module")
def found():
    return mistake_matrix.matrix()


def costs(found, key: str) -> list[str]:
    return [c.item for rows, _ in found.values() for r in rows if r.key == key for c in r.costs]


def test_a_mistake_costs_only_in_its_own_functions_items(found):
    elsewhere = [(lab, r.key, c.item, f"{c.score:g}/{c.points:g}")
                 for lab, (rows, _) in found.items() for r in rows for c in r.elsewhere
                 if not c.excused]
    assert not elsewhere, f"mistakes that cost in an item of another function: {elsewhere}"


def test_every_item_is_replayed(found):
    assert {lab: unjudged for lab, (_, unjudged) in found.items() if unjudged} == {}


def test_every_mistake_costs_somewhere(found):
    """A mistake that costs nothing on the hidden inputs is one the hidden cases miss."""
    free = [r.key for rows, _ in found.values() for r in rows if not r.costs]
    assert not free, f"mistakes the hidden cases do not catch: {free}"


def test_the_three_submissions_of_the_issue(found):
    assert set(costs(found, "sinusoidal.base-ignored")) <= {"pe.values", "pe.dtype", "pe.laws"}
    assert set(costs(found, "rope.convention-swapped")) == {"rotary"}
    assert set(costs(found, "rope.base-ignored")) == {"frequencies"}


def test_the_matrix_catches_a_mistake_charged_twice(monkeypatch):
    """Without error carried forward, a table's mistake costs in the module's items too."""
    monkeypatch.setattr(common, "carry_forward", lambda ctx, checks, **_: list(checks))
    rows, _ = mistake_matrix.lab_rows("17.01", chosen(["17.01"])["17.01"])
    swapped = next(r for r in rows if r.key == "sinusoidal.swapped")
    assert {c.item for c in swapped.elsewhere} >= {"module.values", "module.device"}


SIDES = ("device", "dtype")  # items that judge one side of a function's job, not its values


def test_a_wrong_value_costs_nothing_where_the_device_or_the_dtype_is_judged(found):
    """RoPE's "keeps the device" and the encoder's "keeps the dtype" grade where the output
    lives and what it is made of; a value mistake is charged in the values' item only."""
    sides = [(lab, r.key, c.item) for lab, (rows, _) in found.items() for r in rows
             for c in r.costs if c.item.rsplit(".", 1)[-1] in SIDES]
    assert not sides, sides
    assert set(costs(found, "sinusoidal.offset-off-by-one")) == {"module.values"}
    assert set(costs(found, "scaling.swapped")) == {"yarn_range"}  # not hf_config, built on it


def test_the_matrix_catches_a_device_item_charging_a_value_mistake(monkeypatch):
    """Without crediting an item's own functions' mistakes, 17.04's device item pays again."""
    original = common.carry_forward
    monkeypatch.setattr(common, "carry_forward",
                        lambda ctx, checks, own=False: original(ctx, checks))
    rows, _ = mistake_matrix.lab_rows("17.04", chosen(["17.04"])["17.04"])
    off_by_one = next(r for r in rows if r.key == "alibi.off-by-one")
    assert "device" in {c.item for c in off_by_one.costs}


def test_on_a_gpu_the_device_item_asks_for_the_cpus_own_values():
    """Graded with ``--device cuda``, 17.01's offset off by one still costs nothing in
    ``module.device`` when the GPU gives what the CPU gave; a GPU that gives other values than
    the CPU does cost there."""
    from grader.trusted.references import References
    from grader.trusted.status import Run
    from grader.trusted.verdicts import GroupOutcome, JudgeContext

    checks, refs = chosen(["17.01"])["17.01"], References("17.01")
    key = "sinusoidal.offset-off-by-one"
    runs = {g.key: mistake_matrix.replayed(refs, g, key) for g in checks.groups}
    item = next(i for i in checks.items if i.key == "module.device")
    group = checks.group(item.group)

    def score(mistake: str) -> float:
        on_gpu = mistake_matrix.replayed(refs, group, mistake, "cuda")
        ctx = JudgeContext(
            item=item, group=group, run=runs[group.key], refs=refs.group(group.key),
            gpu_run=GroupOutcome("cuda", Run.FINISHED, on_gpu.cases),
            meta_run=mistake_matrix.replayed(refs, group, key, "meta"), inputs=refs.inputs(),
            module_file="sinusoidal.py", mistakes=refs.mistakes(group.key), gpu_scores=True,
            lab={g.key: (g, runs[g.key], refs.mistakes(g.key)) for g in checks.groups})
        return item.judge(ctx).score

    assert score(key) == item.points
    assert score("") < item.points


def test_a_composed_item_exists_and_says_why():
    for lab_id, checks in chosen().items():
        for key, (es, en) in checks.composed.items():
            assert key in {i.key for i in checks.items}, f"{lab_id}: no item {key}"
            assert es and en


def test_the_page_is_current(found):
    assert mistake_matrix.PAGE.read_text(encoding="utf-8") == mistake_matrix.render(found), \
        "run `python -m grader.build.mistake_matrix` (make sync)"
