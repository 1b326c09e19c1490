"""What one submission's feedback can say about the hidden inputs is bounded, and the README
states the bound (``grader.trusted.capacity``)."""

from __future__ import annotations

import re

from grader.trusted.capacity import run_bits
from minimodel.implementation import REPO_ROOT


def test_the_readme_states_the_bits_per_run():
    bits = run_bits()
    text = " ".join((REPO_ROOT / "grader" / "README.md").read_text(encoding="utf-8").split())
    stated = re.search(r"at most \*\*(\d+) bits per run\*\* \(17\.01: (\d+)\)", text)
    assert stated, "grader/README.md no longer states the bits per run"
    # a refused call is said by its package: the count of installed ones moves the figure a bit
    assert abs(int(stated[1]) - bits["all"]) <= 0.005 * bits["all"], bits["all"]
    assert abs(int(stated[2]) - bits["17.01"]) <= 0.005 * bits["17.01"], bits["17.01"]

