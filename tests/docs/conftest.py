"""Fixtures for the docs tests: one build of both sites per test run, shared by the workers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "docs-test-site"
sys.path.insert(0, str(ROOT / "docs_site"))
from figures.exclusive import locked  # noqa: E402


@pytest.fixture(scope="session")
def built_site() -> dict:
    """Build both sites with ``docs_site/build.py`` (``--strict``) into ``build/docs-test-site``.

    With pytest-xdist each worker has its own session; the first one builds and the others reuse
    that build (same test run id), so the sites are built once per ``make test``.

    Returns:
        ``{"site": Path, "seconds": float, "log": str}``.
    """
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid-{os.getpid()}"
    stamp = SITE.parent / "docs-test-site.stamp"
    with locked(SITE.parent / "docs-test-site.lock"):
        if stamp.is_file():
            done_by, seconds, *log = stamp.read_text().split("\n")
            if done_by == run_id:
                return {"site": SITE, "seconds": float(seconds), "log": "\n".join(log)}
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, str(ROOT / "docs_site" / "build.py"), "--out", str(SITE)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        seconds = time.perf_counter() - start
        log = result.stdout + result.stderr
        if result.returncode != 0:
            stamp.unlink(missing_ok=True)
            pytest.fail(f"docs build failed (mkdocs build --strict):\n{log}", pytrace=False)
        stamp.write_text(f"{run_id}\n{seconds}\n{log}")
    return {"site": SITE, "seconds": seconds, "log": log}
