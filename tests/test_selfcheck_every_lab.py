"""Every lab's self-check: the reference passes every visible check, and the untouched stubs say
"not implemented" in both languages for every one of them."""

import pytest
from selfcheck_copies import TIMEOUT, released_stubs, statuses

from minimodel.course import LABS
from minimodel.selfcheck.runner import run_checks


@pytest.mark.parametrize("lab", LABS, ids=[lab.id for lab in LABS])
def test_reference_passes_every_visible_check(lab):
    assert set(statuses(run_checks(lab, "reference", timeout=TIMEOUT)).values()) == {"pass"}


@pytest.mark.parametrize("lab", LABS, ids=[lab.id for lab in LABS])
def test_untouched_stubs_say_not_implemented_in_both_languages(lab, tmp_path):
    results = run_checks(lab, str(released_stubs(tmp_path)), timeout=TIMEOUT)
    assert set(statuses(results).values()) == {"todo"}
    for result in results:
        assert "Falta implementar" in result.detail_es, result.check.name
        assert "is not implemented yet" in result.detail_en, result.check.name
