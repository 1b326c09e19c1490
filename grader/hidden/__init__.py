"""Hidden checks: the vocabulary here, each lab's checks in its own folder.

A lab's hidden checks are ``solutions/labs/<slug>/checks.py`` (instructor-only, never released),
next to the lab's notebook source and its reference outputs (:attr:`minimodel.course.Lab.folder`).
They import as ``grader.hidden.lab_<id>`` (``grader.hidden.lab_17_01`` for lab 17.01). Adding a
lab's checks is writing that file, which defines ``CHECKS`` (a :class:`spec.LabChecks`).
This package holds what every lab's checks share: ``spec`` (cases, probe groups, items), ``common``
(the small judges), ``cells`` (the notebook cells' judge) and ``depends``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from functools import cache

from grader.hidden.spec import LabChecks
from minimodel.course import LABS
from minimodel.implementation import REPO_ROOT


def module_name(lab_id: str) -> str:
    """``"17.01"`` -> ``"lab_17_01"``."""
    return "lab_" + lab_id.replace(".", "_")


class _LabChecksFinder(importlib.abc.MetaPathFinder):
    """Imports ``grader.hidden.lab_<id>`` from ``solutions/labs/<slug>/checks.py``."""

    def find_spec(self, fullname, path=None, target=None):
        lab = next((lab for lab in LABS if fullname == f"{__name__}.{module_name(lab.id)}"), None)
        source = REPO_ROOT / lab.folder / "checks.py" if lab else None
        if source is None or not source.exists():
            return None
        return importlib.util.spec_from_file_location(fullname, source)


if not any(isinstance(finder, _LabChecksFinder) for finder in sys.meta_path):
    sys.meta_path.append(_LabChecksFinder())


@cache
def registry() -> dict[str, LabChecks]:
    """Lab id -> its hidden checks, in course order."""
    found: dict[str, LabChecks] = {}
    for lab in LABS:
        if (REPO_ROOT / lab.folder / "checks.py").exists():
            checks = getattr(importlib.import_module(f"{__name__}.{module_name(lab.id)}"),
                             "CHECKS", None)
            if isinstance(checks, LabChecks) and checks.lab_id == lab.id:
                found[lab.id] = checks
    return found
