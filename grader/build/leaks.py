"""Search a released student repository for an implementation of a graded function.

A target is one graded function in one probe group of a lab's hidden checks (``sinusoidal_pe``
in 17.01's group ``pe``): its ``"function"`` cases and the reference outputs stored for them
(:class:`grader.trusted.references.References`). A child process
(``grader/child/leak_search.py``, with the release's ``src`` on ``PYTHONPATH`` and the student
stubs as ``minimodel.positional``) calls
every callable of the released package and of the lab notebooks whose signature binds a target's
arguments on the hidden inputs, as the probe runner builds them. A callable that gives every
reference output of a target is a leak: a student could call it for full marks.

Targets whose reference outputs are all empty or one constant are left out: anything that
returns that constant would match them.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader.hidden import module_name, registry
from grader.hidden.spec import Case
from grader.trusted.references import References
from grader.trusted.sandbox import copy_child_files

TIME_LIMIT_S = 5.0  # per call; the graded functions take milliseconds on the hidden inputs
STALL_S = 4 * TIME_LIMIT_S  # a searching child silent this long is stuck in C code: killed
MEMORY_MB = 1024  # the child's data limit: the hidden inputs are small
RTOL, ATOL = 1e-3, 1e-4  # loose: an implementation in float32 where the reference uses float64
MAX_RESTARTS = 20  # a candidate that kills the child is dropped and the search goes on


@dataclass(frozen=True)
class Target:
    """One graded function's cases in one probe group, and their reference outputs."""

    lab: str
    group: str
    function: str
    cases: tuple[Case, ...]
    outputs: tuple[list[dict], ...]

    @property
    def id(self) -> str:
        return f"{self.lab}/{self.group}/{self.function}"


@dataclass(frozen=True)
class Leak:
    candidate: str  # "minimodel.selfcheck.lab_17_01.formula", "labs/<notebook>:<function>"
    target: str  # "17.01/pe/sinusoidal_pe"

    def __str__(self) -> str:
        lab, group, function = self.target.split("/")
        return f"{self.candidate} computes {function} (lab {lab}, hidden group {group!r})"


@dataclass
class Search:
    leaks: list[Leak] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)  # killed the child; dropped from then on
    slow: list[str] = field(default_factory=list)  # dropped after running out of time
    targets: int = 0
    candidates: int = 0  # callables found in the release
    notebook_candidates: int = 0  # of which defined in the lab notebooks
    seconds: float = 0.0


def trivial(outputs) -> bool:
    """Whether every number in ``outputs`` (cases' outputs) is one value, or there is none."""
    numbers = [np.asarray(o["array"], dtype=np.float64).ravel()
               for case in outputs for o in case if o.get("array") is not None]
    values = np.concatenate(numbers) if numbers else np.zeros(0)
    return values.size == 0 or bool(np.all(values == values[0]))


def targets(labs: list[str] | None = None) -> list[Target]:
    """Every graded function's non-trivial targets, in course order."""
    found = []
    for lab, checks in registry().items():
        if labs and lab not in labs:
            continue
        references = None
        for group in checks.groups:
            names = dict.fromkeys(c.name for c in group.cases if c.call == "function")
            if not names:
                continue
            references = references or References(lab)
            stored = references.group(group.key)
            for name in names:
                indices = [i for i, c in enumerate(group.cases)
                           if c.call == "function" and c.name == name]
                outputs = tuple(stored[i] for i in indices)
                if not trivial(outputs):
                    found.append(Target(lab, group.key, name,
                                        tuple(group.cases[i] for i in indices), outputs))
    return found


def _request(found: list[Target], release: Path, work: Path) -> dict:
    """The child's request, with the hidden inputs and the reference outputs written as files."""
    inputs: dict[str, str] = {}
    entries = []
    for index, target in enumerate(found):
        if target.lab not in inputs:
            path = work / f"{module_name(target.lab)}-inputs.npz"
            np.savez(path, **registry()[target.lab].inputs())
            inputs[target.lab] = str(path)
        arrays, described = {}, []
        for k, case in enumerate(target.outputs):
            described.append([])
            for j, output in enumerate(case):
                entry = {key: output.get(key) for key in ("kind", "dtype", "value")}
                if output.get("array") is not None:
                    arrays[f"c{k}_{j}"] = output["array"]
                    entry["array"] = f"c{k}_{j}"
                described[-1].append(entry)
        expected = work / f"target-{index}.npz"
        np.savez(expected, **arrays)
        entries.append({"id": target.id, "inputs": inputs[target.lab], "expected": str(expected),
                        "cases": [c.to_json() for c in target.cases], "outputs": described})
    return {"labs": str(release / "labs"), "memory_mb": MEMORY_MB, "rtol": RTOL,
            "atol": ATOL, "skip": [], "results": str(work / "results.jsonl"),
            "targets": entries, "snippets": snippets(release)}


CODE = re.compile(r"```[\w-]*\n(.*?)```|``(.+?)``|`([^`\n]+)`", re.S)


def _readable_texts(path: Path) -> list[str]:
    """What a student reads as text in one released file: a Python file's docstrings, a
    markdown file, a notebook's text cells."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return [text]
    if path.suffix == ".py":
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return []
        return [ast.get_docstring(node) or "" for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef,
                                     ast.ClassDef))]
    if path.suffix == ".ipynb":
        cells = json.loads(text).get("cells", [])
        return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                for c in cells if c.get("cell_type") == "markdown"]
    return []


def snippets(release: Path) -> list[dict]:
    """Every piece of code in what a student reads in ``release`` (inline code and code blocks
    of docstrings, lessons and notebooks' text cells; the built site repeats the lessons) that is
    one Python expression with a call: ``{"where": file, "code": expression}``."""
    found: dict[str, str] = {}
    for path in sorted(release.rglob("*")):
        name = path.relative_to(release).as_posix()
        if not path.is_file() or name.startswith("site/") or \
                path.suffix not in (".py", ".md", ".ipynb"):
            continue
        for text in _readable_texts(path):
            for match in CODE.finditer(text):
                code = next(group for group in match.groups() if group is not None).strip()
                try:
                    tree = ast.parse(code, mode="eval")
                except (SyntaxError, ValueError):
                    continue
                if any(isinstance(node, ast.Call) for node in ast.walk(tree)):
                    found.setdefault(code, name)
    return [{"where": where, "code": code} for code, where in found.items()]


def _child_env(release: Path, home: Path) -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "MPLCONFIGDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(PYTHONPATH=str(release / "src"), HOME=str(home), MPLBACKEND="agg",
               PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def _run_child(command: list[str], cwd: Path, env: dict, results: Path,
               deadline: float) -> None:
    """Run the child until it exits, or kill it when ``results`` stops growing for
    :data:`STALL_S` once it grew (a call stuck where no signal reaches it; importing the
    candidates, before that, takes what it takes) or past ``deadline``."""
    results.touch()
    child = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    size, changed = results.stat().st_size, time.perf_counter()
    first = size
    try:
        while child.poll() is None:
            now = time.perf_counter()
            if results.stat().st_size != size:
                size, changed = results.stat().st_size, now
            if size != first and now - changed > STALL_S:
                break
            if now > deadline:
                raise TimeoutError("the leak search ran past its time limit")
            time.sleep(0.1)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def search(release: Path, labs: list[str] | None = None,
           time_limit_s: float = TIME_LIMIT_S) -> Search:
    """Search the released repository ``release`` for implementations of graded functions
    (those of ``labs``, default all), each call stopped after ``time_limit_s``."""
    start = time.perf_counter()
    found = targets(labs)
    result = Search(targets=len(found))
    with tempfile.TemporaryDirectory(prefix="mmg-leaks-") as scratch:
        work = Path(scratch)
        runner, cwd, home = work / "runner", work / "cwd", work / "home"
        for folder in (runner, cwd, home):
            folder.mkdir()
        copy_child_files(runner, ("probe_runner.py", "leak_search.py"))
        request = {**_request(found, release, work), "time_limit_s": time_limit_s}
        results = Path(request["results"])
        for _ in range(MAX_RESTARTS):
            (work / "request.json").write_text(json.dumps(request), encoding="utf-8")
            _run_child([sys.executable, str(runner / "leak_search.py"),
                        str(work / "request.json")], cwd, _child_env(release, home), results,
                       start + 600)  # seconds for the whole search
            events = [json.loads(line) for line in
                      results.read_text(encoding="utf-8").splitlines() if line.strip()]
            if events and events[-1].get("done"):
                break
            started = [e["start"] for e in events if "start" in e]
            if not started or started[-1][0] in request["skip"]:
                raise RuntimeError(f"the leak search's child died before searching "
                                   f"({len(events)} events)")
            request["skip"].append(started[-1][0])
            result.crashed.append(started[-1][0])
        else:
            raise RuntimeError("the leak search's child died too often")
        result.leaks = list(dict.fromkeys(Leak(*e["leak"]) for e in events if "leak" in e))
        result.slow = [e["slow"] for e in events if "slow" in e]
        found_in = [e for e in events if "candidates" in e][-1]
        result.candidates, result.notebook_candidates = found_in["candidates"], \
            found_in["notebooks"]
    result.seconds = time.perf_counter() - start
    return result
