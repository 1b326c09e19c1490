"""The grader README's worked example of adding a lab's checks, run as written.

The example's ``checks.py`` is taken from ``grader/README.md``, its references are computed as
``minimodel-grader references`` computes them (the reference and the catalogue's mistakes through
the sandbox), and it grades real sources: what the README says it does, it must do.
"""

from __future__ import annotations

import re

import pytest
from mistaken_sources import MISTAKEN
from source_runs import codes, grade_sources, mutated, reference

from grader.build import references
from grader.trusted.references import References
from minimodel.implementation import REPO_ROOT

README = REPO_ROOT / "grader" / "README.md"


def example_checks():
    """``CHECKS`` of the README's code block under "Adding a lab's checks"."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Adding a lab's checks"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, "grader/README.md", "exec"), namespace)  # noqa: S102 - our own README
    return namespace["CHECKS"]


@pytest.fixture(scope="module")
def grade(tmp_path_factory):
    """alibi.py source -> the verdict of the example's one item."""
    checks = example_checks()
    root = tmp_path_factory.mktemp("course")
    arrays, meta = references.compute(checks, root / "work", root / "log")
    references.write(checks.lab_id, arrays, meta, root, checks)
    refs = References(checks.lab_id, root)

    def graded(source: str):
        verdicts = grade_sources(checks.lab_id, {"alibi": source}, tmp_path_factory.mktemp("s"),
                                 checks=checks, refs=refs)
        return verdicts["slopes"]

    return graded


def test_the_reference_gets_the_item_s_two_points(grade):
    verdict = grade(reference("alibi"))
    assert (verdict.score, verdict.passed, verdict.total) == (2, 6, 6)
    assert verdict.findings == []


def test_the_power_of_two_rule_for_every_head_count_fails_four_cases_and_is_named(grade):
    """README: it "fails the cases of 3, 6, 12 and 96 heads, and the feedback names that
    mistake in both languages"."""
    verdict = grade(mutated("alibi", MISTAKEN["alibi"]["geometric"]))
    assert (verdict.passed, verdict.total) == (2, 6)  # 1 and 8 heads are powers of two
    assert verdict.score == pytest.approx(2 * 2 / 6, abs=0.01)
    assert "geometric" in codes(verdict)
    named = next(f for f in verdict.findings if f.code == "geometric")
    assert named.es and named.en and named.es != named.en
