"""Hidden checks, one module per lab: ``lab_17_01.py`` for lab 17.01, and so on.

Adding a lab's hidden checks is adding its file here: the registry finds every ``lab_*.py``
module that defines ``CHECKS`` (a :class:`~grader.hidden.spec.LabChecks`) and whose lab is
listed in ``minimodel.course.LABS``. Nothing in this package ships to students.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from grader.hidden.spec import LabChecks
from minimodel.course import LABS


@cache
def registry() -> dict[str, LabChecks]:
    """Lab id -> its hidden checks, in course order."""
    found: dict[str, LabChecks] = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("lab_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        checks = getattr(module, "CHECKS", None)
        if isinstance(checks, LabChecks):
            found[checks.lab_id] = checks
    order = [lab.id for lab in LABS]
    return {lab_id: found[lab_id] for lab_id in order if lab_id in found}


def module_name(lab_id: str) -> str:
    """``"17.01"`` -> ``"lab_17_01"`` (also the name of its reference-output files)."""
    return "lab_" + lab_id.replace(".", "_")
