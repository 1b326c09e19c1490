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
from minimodel.course import LABS, find_lab
from minimodel.implementation import REPO_ROOT
from minimodel.messages import bilingual


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


class LabChoiceError(ValueError):
    """A lab asked for (``--lab``) has no hidden checks, or no lab has any here."""


def chosen(labs: list[str] | None = None) -> dict[str, LabChecks]:
    """The hidden checks of ``labs`` (ids, slugs or the start of a slug; default: every lab that
    has them), in course order. A run that would grade nothing is refused: an unknown lab (a
    typo), or no hidden checks at all (``minimodel`` imported from a student's repository, which
    has no ``solutions/``)."""
    found = registry()
    if not found:
        folder = REPO_ROOT / "solutions" / "labs"
        raise LabChoiceError(bilingual(
            f"No hay comprobaciones ocultas en {folder}: el calificador se ejecuta con el paquete "
            "minimodel del repositorio del curso (el del profesor), no con el de un estudiante.",
            f"There are no hidden checks in {folder}: the grader runs with the minimodel package "
            "of the course repository (the instructor's), not a student's."))
    try:  # an id, a slug or the start of one, as everywhere in the course
        wanted = {find_lab(key).id for key in labs or ()}
    except KeyError as error:
        raise LabChoiceError(error.args[0]) from None
    unknown = sorted(wanted - set(found))
    if unknown:
        listed = ", ".join(found)
        raise LabChoiceError(bilingual(
            f"No hay comprobaciones ocultas para: {', '.join(unknown)}. Laboratorios que las "
            f"tienen: {listed}.",
            f"There are no hidden checks for: {', '.join(unknown)}. Labs that have them: "
            f"{listed}."))
    return {lab_id: checks for lab_id, checks in found.items() if not wanted or lab_id in wanted}
