"""Which implementation the tests exercise, and which tests the inner loop leaves out.

In the course repository the tests run against the reference solutions; in a student's copy
(without them) they run against the student's own files. ``MINIMODEL_IMPL`` overrides both.

The course's quick loop runs ``pytest -m "not slow and not browser"``: the course's slow tests,
which ``slow_tests.py`` lists in the course repository, are marked ``slow`` here, and run first.
"""

import os
from pathlib import Path

import pytest

from minimodel.implementation import REFERENCE_DIR

os.environ.setdefault("MINIMODEL_IMPL", "reference" if REFERENCE_DIR.is_dir() else "src")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the labs' tiny Llama is built from a config

TESTS = Path(__file__).resolve().parent
try:  # the course's own tests; a student's copy has only its visible tests, none of them slow
    from slow_tests import SLOW, SLOW_NAMES
except ImportError:
    SLOW, SLOW_NAMES = set(), None


def pytest_collection_modifyitems(items):
    """Mark the slow tests, and put the files that hold slow or browser tests first, each file
    whole: the workers take files in this order (``make test``: ``--dist loadfile
    --no-loadscope-reorder``), so the long ones start early and the quick ones fill the end."""
    for item in items:
        path = item.path.relative_to(TESTS)
        if path.as_posix() in SLOW or SLOW_NAMES and path.match(SLOW_NAMES):
            item.add_marker(pytest.mark.slow)
    long = {item.path for item in items
            if any(map(item.get_closest_marker, ("slow", "browser")))}
    items.sort(key=lambda item: item.path not in long)
