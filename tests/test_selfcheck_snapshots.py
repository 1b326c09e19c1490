"""The self-check's stored answers: up to date with solutions/, and enough to name each mistake.

Course repository only (the computation needs ``solutions/`` and ``grader/``).
"""

import json

import pytest

snapshots_builder = pytest.importorskip("grader.build.snapshots")
mistakes = pytest.importorskip("grader.build.mistakes")

from minimodel.selfcheck import snapshots  # noqa: E402

LABS = snapshots_builder.labs_with_snapshots()


@pytest.fixture(scope="module")
def computed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("snapshots")
    snapshots_builder.compute_all(LABS, folder)
    return folder


@pytest.mark.parametrize("lab", LABS, ids=[lab.id for lab in LABS])
def test_stored_answers_match_the_solutions(lab, computed):
    assert snapshots_builder.drift(lab, computed) == [], (
        "the self-check's stored answers are out of date: python -m grader.build.snapshots"
    )


@pytest.mark.parametrize("lab", LABS, ids=[lab.id for lab in LABS])
def test_every_mistake_of_the_catalogue_is_stored_with_its_texts(lab, computed):
    meta = json.loads(snapshots.files(lab.id, computed)[1].read_text(encoding="utf-8"))
    catalogue = [m for module in lab.modules for m in mistakes.catalogue(module)]
    assert sorted(meta["mistakes"]) == sorted(m.key for m in catalogue)
    for item in catalogue:
        assert meta["mistakes"][item.key] == {"target": item.target, "es": item.es, "en": item.en}
        assert any(item.key in codes for codes in meta["wrong"].values())

