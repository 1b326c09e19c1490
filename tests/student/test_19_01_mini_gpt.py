"""Visible tests of lab 19.01: the same checks as ``make check LAB=19.01``, as pytest tests.

Run them with ``pytest tests/student/test_19_01_mini_gpt.py``. They build the Mini-GPT with each of
your encodings from ``src/minimodel/positional/`` (or the implementation named by
``MINIMODEL_IMPL``).
"""

import pytest

from minimodel.selfcheck.lab_19_01 import checks


@pytest.mark.parametrize("check", checks, ids=[check.name for check in checks])
def test_visible(check):
    check.run()
