"""One vocabulary of mistakes: what the self-check names, the grader names with the same code and
the same words, on the same student's file (``solutions/mistakes/`` is the only source of both).

For each lab of ``mistaken_sources`` and each mistake of its catalogue, a copy of the reference
with that mistake written in is checked by ``minimodel check`` (visible inputs, stored answers)
and graded (hidden inputs, reference outputs).
"""

from __future__ import annotations

import pytest
from mistaken_sources import MISTAKEN
from selfcheck_copies import student_copy
from source_runs import grade_source, mutated

from grader.build.mistakes import lab_mistakes
from minimodel.course import find_lab
from minimodel.selfcheck.runner import run_checks

CASES = [(lab_id, item) for lab_id in MISTAKEN for item in lab_mistakes(lab_id)]


def test_every_mistake_of_those_labs_has_a_source():
    assert sorted((lab_id, item.code) for lab_id, item in CASES) == sorted(
        (lab_id, code) for lab_id, codes in MISTAKEN.items() for code in codes)


@pytest.mark.parametrize(("lab_id", "item"), CASES, ids=[f"{lab}-{m.key}" for lab, m in CASES])
def test_the_self_check_and_the_grader_name_it_alike(lab_id, item, tmp_path):
    edit = MISTAKEN[lab_id][item.code]
    said = [r for r in run_checks(find_lab(lab_id), str(student_copy(tmp_path, item.module, edit)))
            if item.es in r.detail_es]
    assert said and all(item.en in r.detail_en for r in said), "the self-check does not name it"
    verdicts = grade_source(lab_id, mutated(item.module, edit), tmp_path)
    named = [f for v in verdicts.values() for f in v.findings if f.code == item.code]
    assert named, f"the grader does not name {item.code}"
    assert all(f.es == item.es and f.en == item.en for f in named)
