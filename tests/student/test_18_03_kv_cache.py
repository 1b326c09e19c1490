"""Visible tests of lab 18.03: the same checks as ``make check LAB=18.03``, as pytest tests.

Run them with ``pytest tests/student/test_18_03_kv_cache.py``. They use your files in
``src/minimodel/positional/`` (or the implementation named by ``MINIMODEL_IMPL``).
"""

import pytest

from minimodel.selfcheck.lab_18_03 import checks


@pytest.mark.parametrize("check", checks, ids=[check.name for check in checks])
def test_visible(check):
    check.run()
