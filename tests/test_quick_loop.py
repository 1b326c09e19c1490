"""The inner loop's slow modules (``tests/conftest.py``) are modules that exist."""

import importlib.util
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_slow_module_exists():
    spec = importlib.util.spec_from_file_location("tests_conftest", TESTS / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    assert conftest.SLOW and sorted(p for p in conftest.SLOW if not (TESTS / p).is_file()) == []
    assert list(TESTS.glob(conftest.SLOW_NAMES))  # the self-check's, by name
