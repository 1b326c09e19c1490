"""Visible tests of lab 19.02: the same checks as ``make check LAB=19.02``, as pytest tests.

Run them with ``pytest tests/student/test_19_02_experiments.py``. They train and run tiny
Mini-GPTs with each of your encodings from ``src/minimodel/positional/`` (or the implementation
named by ``MINIMODEL_IMPL``).
"""

import pytest

from minimodel.selfcheck.lab_19_02 import checks


@pytest.mark.parametrize("check", checks, ids=[check.name for check in checks])
def test_visible(check):
    check.run()
