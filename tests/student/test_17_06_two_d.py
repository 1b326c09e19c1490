"""Visible tests of lab 17.06: the same checks as ``make check LAB=17.06``, as pytest tests.

Run them with ``pytest tests/student/test_17_06_two_d.py``. They use your files in
``src/minimodel/positional/`` (or the implementation named by ``MINIMODEL_IMPL``).
"""

import pytest

from minimodel.selfcheck.lab_17_06 import checks


@pytest.mark.parametrize("check", checks, ids=[check.name for check in checks])
def test_visible(check):
    check.run()
