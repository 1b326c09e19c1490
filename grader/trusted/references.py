"""A lab's stored reference outputs, as the judges read them.

``grader.build.references`` computes them from the solutions and writes them into the lab's
folder (``solutions/labs/<slug>/references.{npz,json}``); this module only reads them, and says
when the sources they came from have changed since (:meth:`References.stale`).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from pathlib import Path

import numpy as np

from grader.hidden.spec import LabChecks
from grader.trusted import nbexec
from minimodel.course import find_lab
from minimodel.implementation import CATALOGUE_DIR, REFERENCE_DIR, REPO_ROOT


def paths(lab_id: str, root: Path = REPO_ROOT) -> tuple[Path, Path]:
    """``solutions/labs/<slug>/references.{npz,json}`` of the repository at ``root``."""
    folder = root / find_lab(lab_id).folder
    return folder / "references.npz", folder / "references.json"


def inputs_path(lab_id: str, root: Path = REPO_ROOT) -> Path:
    """``solutions/labs/<slug>/inputs.npz``: the hidden inputs the references were computed
    from, which every submission is run on (read back, never computed again while grading)."""
    return root / find_lab(lab_id).folder / "inputs.npz"


def code_hash(path: Path) -> str:
    """Hash of a Python file's code: comments, formatting and docstrings do not count (a lab
    source's markdown cells are comments), so only changes that can change outputs do."""
    if not path.exists():
        return "missing"
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return hashlib.sha256(text.encode()).hexdigest()[:16]
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return hashlib.sha256(ast.dump(tree).encode()).hexdigest()[:16]


def lab_modules(checks: LabChecks) -> list[str]:
    """The lab's modules and the course modules they import (two_d.py imports rope.py)."""
    found = list(checks.modules())
    for module in found:  # grows while walking
        text = (REFERENCE_DIR / f"{module}.py").read_text(encoding="utf-8")
        for name in re.findall(r"^from minimodel\.positional\.(\w+) import", text, flags=re.M):
            if name not in found:
                found.append(name)
    return found


def source_hashes(checks: LabChecks) -> dict[str, str]:
    """Hashes of everything a lab's references are computed from."""
    files = [REFERENCE_DIR / f"{m}.py" for m in lab_modules(checks)]
    files += [CATALOGUE_DIR / f"{m}.py" for m in find_lab(checks.lab_id).modules]
    files.append(REPO_ROOT / find_lab(checks.lab_id).folder / "checks.py")
    if checks.notebook:
        files.append(nbexec.source_path(checks.notebook.slug))
    return {str(f.relative_to(REPO_ROOT)): code_hash(f) for f in files}


def inputs_hash(arrays: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for key in sorted(arrays):
        digest.update(key.encode() + str(arrays[key].dtype).encode() + arrays[key].tobytes())
    return digest.hexdigest()[:16]


def record_value(described: list[dict], arrays: dict):
    """A stored record of one output as a cell's judge reads it (``cells.value``): ``None``, a
    string or a float64 array; a record of several outputs (a list of numbers) as the float64
    array of them all, stacked (``()`` when they cannot be)."""
    if len(described) > 1:
        parts = [np.asarray(arrays[e["array"]], dtype=np.float64) if "array" in e else None
                 for e in described]
        if all(p is not None and p.shape == parts[0].shape for p in parts):
            return np.stack(parts)
    entry = described[0] if len(described) == 1 else {}
    if entry.get("kind") == "none":
        return None
    if "value" in entry:
        return entry["value"]
    return np.asarray(arrays[entry["array"]], dtype=np.float64) if "array" in entry else ()


class References:
    """A lab's stored reference outputs, as the judges see them."""

    def __init__(self, lab_id: str, root: Path = REPO_ROOT):
        npz, js = paths(lab_id, root)
        if not npz.exists() or not js.exists():
            raise FileNotFoundError(
                f"no reference outputs for lab {lab_id}: run `minimodel-grader references`")
        self.meta = json.loads(js.read_text(encoding="utf-8"))
        with np.load(npz, allow_pickle=False) as stored:
            self.arrays = {key: stored[key] for key in stored.files}
        self.inputs_file = inputs_path(lab_id, root)
        self._mistakes: dict[str, list[dict]] = {}
        self._cell_mistakes: dict[str, list[dict]] = {}

    def _outputs(self, described: list[dict]) -> list[dict]:
        """Stored outputs as the judges read them: shapes as tuples, arrays loaded."""
        return [{**entry, "shape": tuple(entry.get("shape", ())),
                 "array": self.arrays.get(entry["array"]) if "array" in entry else None}
                for entry in described]

    def group(self, key: str) -> list[list[dict]]:
        return [self._outputs(case) for case in self.meta["groups"].get(key, [])]

    def mistakes(self, key: str) -> list[dict]:
        """The classic mistakes that change group ``key``'s outputs: each with its ``code``
        (``<module>.<name>``), texts and ``cases`` (case index -> outputs, as ``group`` gives, or
        ``{"error": type}`` where the mistake raises). Built once per group: every student's
        judges read the same lists."""
        if key not in self._mistakes:
            self._mistakes[key] = [
                {"code": code, "target": item["target"], "es": item["es"], "en": item["en"],
                 "cases": {int(i): d if isinstance(d, dict) else self._outputs(d)
                           for i, d in item["groups"][key].items()}}
                for code, item in sorted(self.meta.get("mistakes", {}).items())
                if item["groups"].get(key)]
        return self._mistakes[key]

    def cell(self, grade_id: str) -> dict[str, list[dict]]:
        values = self.meta.get("notebook", {}).get(grade_id, {})
        return {name: self._outputs(described) for name, described in values.items()}

    def cell_mistakes(self, grade_id: str) -> list[dict]:
        """The classic mistakes recognised from a notebook cell's records
        (``CellCheck.catalogue``): each with its ``code``, texts and ``values`` (record -> what
        the mistake records there: a float64 array, ``None`` or a string). Built once per cell:
        every student's judges read the same lists."""
        if grade_id not in self._cell_mistakes:
            self._cell_mistakes[grade_id] = [
                {"code": key.split(".", 1)[1], "es": item["es"], "en": item["en"],
                 "target": item.get("target") or self.meta.get("mistakes", {}).get(
                     key, {}).get("target"),
                 "values": {name: record_value(described, self.arrays)
                            for name, described in item["records"].items()}}
                for key, item in sorted(
                    self.meta.get("notebook_mistakes", {}).get(grade_id, {}).items())]
        return self._cell_mistakes[grade_id]

    def inputs(self) -> dict[str, np.ndarray]:
        """The hidden inputs these references were computed from (``inputs.npz``)."""
        with np.load(self.inputs_file, allow_pickle=False) as stored:
            return {key: stored[key] for key in stored.files}

    def stale(self, checks: LabChecks) -> list[str]:
        """Sources changed since these references were computed, and stored hidden inputs that
        are not the ones they were computed from. (Whether the checks still give those inputs,
        with the libraries installed now, is ``grader.build.references.drift``'s question.)"""
        now = source_hashes(checks)
        then = self.meta.get("sources", {})
        changed = [name for name, digest in now.items() if then.get(name) != digest]
        if not self.inputs_file.is_file() or \
                self.meta.get("inputs") != inputs_hash(self.inputs()):
            changed.append("hidden inputs")
        return changed
