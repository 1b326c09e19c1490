"""Reference outputs: regenerated deterministically, and the committed ones match the solutions."""

from __future__ import annotations

import numpy as np
import pytest

from grader.build import references
from grader.hidden import registry
from minimodel.course import LABS


def test_every_lab_with_hidden_checks_is_a_course_lab():
    ids = {lab.id for lab in LABS}
    assert set(registry()) <= ids
    assert "17.01" in registry()


def test_every_auto_graded_notebook_cell_has_a_hidden_check():
    from grader.trusted import nbexec

    for checks in registry().values():
        if checks.notebook is None:
            continue
        graded = nbexec.graded_cells(nbexec.source_notebook(checks.notebook.slug))
        auto = {gid for gid, info in graded.items() if info["kind"] == "auto"}
        assert auto == {cell.grade_id for cell in checks.notebook.cells}


def test_npz_writer_is_byte_deterministic(tmp_path):
    arrays = {"b/1": np.arange(5, dtype=np.float32), "a/0": np.eye(3)}
    references.write_npz(tmp_path / "one.npz", arrays)
    references.write_npz(tmp_path / "two.npz", dict(reversed(list(arrays.items()))))
    assert (tmp_path / "one.npz").read_bytes() == (tmp_path / "two.npz").read_bytes()
    with np.load(tmp_path / "one.npz", allow_pickle=False) as stored:
        assert np.array_equal(stored["a/0"], np.eye(3))


@pytest.mark.parametrize("lab_id", sorted(registry()))
def test_committed_references_match_the_solutions(lab_id):
    """Fails when solutions, lab sources or hidden checks changed without
    ``minimodel-grader references`` (``make sync``) being run (one lab per test, so that the
    labs spread over the test workers)."""
    assert references.drift([lab_id]) == []


def test_committed_references_name_the_sources_they_came_from():
    """A grading run warns about every lab whose sources changed after its references were
    computed, even where the outputs did not change: the committed hashes must be current, so
    that the warning means what it says."""
    from grader.trusted.references import References

    for lab_id, checks in registry().items():
        assert References(lab_id).stale(checks) == [], \
            f"{lab_id}: run minimodel-grader references --lab {lab_id}"
