"""Visible tests of lab 18.01: the same checks as ``make check LAB=18.01``, as pytest tests.

Run them with ``pytest tests/student/test_18_01_extrapolation.py``. They use your files in
``src/minimodel/positional/`` (or the implementation named by ``MINIMODEL_IMPL``).
"""

import pytest

from minimodel.selfcheck.lab_18_01 import checks


@pytest.mark.parametrize("check", checks, ids=[check.name for check in checks])
def test_visible(check):
    check.run()
