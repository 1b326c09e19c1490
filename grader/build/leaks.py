"""Search a released student repository for an implementation of a graded function.

A target is one graded function in one probe group of a lab's hidden checks (``sinusoidal_pe``
in 17.01's group ``pe``): its ``"function"`` cases and the reference outputs stored for them
(:class:`grader.trusted.references.References`). A function the student writes in a lab notebook
is one too: the records of its graded cell that call it on arguments computed without the
notebook's variables (``rope_rotate_half(torch.linspace(...), ...)`` in 17.03's
``test-formulations``), with the arguments evaluated once with the reference implementation, and
each other signature the lab's checks declare for it (:class:`grader.hidden.spec.Form`). A child
process
(``grader/child/leak_search.py``, with the release's ``src`` on ``PYTHONPATH`` and the student
stubs as ``minimodel.positional``) calls
every callable of the released package, of the lab notebooks and of the code blocks a student
reads (lessons, docstrings, notebooks' text) whose signature binds a target's arguments on the
hidden inputs, as the probe runner builds them. A callable that gives every reference output of a
target is a leak: a student could call it for full marks.

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
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader.hidden import module_name, registry
from grader.hidden.spec import Case, Input
from grader.trusted.references import References
from grader.trusted.sandbox import copy_child_files
from minimodel.course import find_lab
from minimodel.implementation import REPO_ROOT

TIME_LIMIT_S = 5.0  # per call; the graded functions take milliseconds on the hidden inputs
STALL_S = 4 * TIME_LIMIT_S  # a searching child silent this long is stuck in C code: killed
MEMORY_MB = 1024  # the child's data limit: the hidden inputs are small
RTOL, ATOL = 1e-3, 1e-4  # loose: an implementation in float32 where the reference uses float64
MAX_RESTARTS = 20  # a candidate that kills the child is dropped and the search goes on


@dataclass(frozen=True)
class Target:
    """One graded function's cases in one probe group, and their reference outputs."""

    lab: str
    group: str  # a probe group's key, or "notebook:<grade id>" for a notebook's graded cell
    function: str  # "rope_rotate_half", or "rope_rotate_half[cos-sin-tables]" for a Form
    cases: tuple[Case, ...]
    outputs: tuple[list[dict], ...]
    arrays: dict[str, np.ndarray] | None = field(default=None, compare=False)  # None: the lab's
    parameters: tuple[str, ...] = ()  # a notebook function's; a module's come from its stub

    @property
    def id(self) -> str:
        return f"{self.lab}/{self.group}/{self.function}"


@dataclass(frozen=True)
class Leak:
    candidate: str  # "minimodel.selfcheck.lab_17_01.formula", "labs/<notebook>:<function>"
    target: str  # "17.01/pe/sinusoidal_pe"

    def __str__(self) -> str:
        lab, group, function = self.target.split("/")
        where = f"notebook cell {group[9:]!r}" if group.startswith("notebook:") else \
            f"hidden group {group!r}"
        return f"{self.candidate} computes {function} (lab {lab}, {where})"


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


def targets(labs: list[str] | None = None, notebooks: bool = True) -> list[Target]:
    """Every graded function's non-trivial targets: the modules', in course order, then the
    notebooks' (unless ``notebooks`` is false)."""
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
    if notebooks:
        found += notebook_targets([lab for lab, checks in registry().items()
                                   if checks.cells and (not labs or lab in labs)])
    return found


def written_functions(lab: str) -> dict[str, ast.FunctionDef]:
    """The functions the student writes in lab ``lab``'s notebook (a ``### BEGIN SOLUTION``
    block in their body, in the solved source), by name."""
    source = (REPO_ROOT / find_lab(lab).source).read_text(encoding="utf-8")
    return {node.name: node for node in ast.parse(source).body
            if isinstance(node, ast.FunctionDef)
            and "### BEGIN SOLUTION" in (ast.get_source_segment(source, node) or "")}


def _calls(lab: str) -> list[tuple[str, str, str, list[str], dict[str, str]]]:
    """``(grade id, record, function, argument sources, keyword sources)`` for every record of
    lab ``lab``'s graded cells that is one call of a function the student writes."""
    written = written_functions(lab)
    found = []
    for cell in registry()[lab].cells:
        for record, expression in cell.records.items():
            call = ast.parse(expression, mode="eval").body
            if record in cell.volatile or record.startswith("_") or not (
                    isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                    and call.func.id in written) or any(
                    isinstance(a, ast.Starred) for a in call.args) or \
                    any(k.arg is None for k in call.keywords):
                continue
            found.append((cell.grade_id, record, call.func.id,
                          [ast.unparse(a) for a in call.args],
                          {k.arg: ast.unparse(k.value) for k in call.keywords}))
    return found


def _evaluated(calls: list[tuple[list[str], dict[str, str]]]) -> tuple[list, dict]:
    """Each call's arguments evaluated with the reference implementation (``None`` where they
    need the notebook's variables), as JSON with ``$input`` markers, and the arrays they name."""
    env = {**os.environ, "MINIMODEL_IMPL": "reference", "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory(prefix="mmg-leaks-args-") as scratch:
        stored = Path(scratch) / "arguments.npz"
        run = subprocess.run([sys.executable, "-m", "grader.build.notebook_arguments", str(stored)],
                             input=json.dumps(calls), capture_output=True, text=True, env=env,
                             cwd=scratch, check=True)
        with np.load(stored) as arrays:
            return json.loads(run.stdout), {key: arrays[key] for key in arrays.files}


def _marker(value) -> dict:
    return value if isinstance(value, dict) else {}


def _value(argument, stored: dict):
    """An evaluated argument as a :class:`~grader.hidden.spec.Form` receives it: a tensor as its
    NumPy array, a dtype as its name."""
    marker = _marker(argument)
    return stored[marker["$input"]] if "$input" in marker else marker.get("$dtype", argument)


def _as_inputs(values: list, arrays: dict, prefix: str) -> list:
    """``values`` with each NumPy array stored in ``arrays`` and replaced by an ``Input``."""
    out = []
    for i, value in enumerate(values):
        if isinstance(value, np.ndarray):
            arrays[f"{prefix}{i}"] = value
            value = Input(f"{prefix}{i}", str(value.dtype))
        out.append(value)
    return out


def notebook_targets(labs: list[str]) -> list[Target]:
    """The non-trivial targets of the notebooks of ``labs``: per graded cell, each function the
    student writes there that a record calls on arguments computed without the notebook's
    variables, and each :class:`~grader.hidden.spec.Form` the lab's checks declare for it."""
    calls = [(lab, *call) for lab in labs for call in _calls(lab)]
    evaluated, stored = _evaluated([(args, kwargs) for *_, args, kwargs in calls])
    grouped: dict[tuple[str, str, str], list] = {}
    for (lab, grade_id, record, function, _, _), arguments in zip(calls, evaluated, strict=True):
        if arguments is not None:
            grouped.setdefault((lab, grade_id, function), []).append((arguments, record))
    found = []
    for (lab, grade_id, function), recorded in grouped.items():
        cell = References(lab).cell(grade_id)
        outputs = tuple(cell[record] for _, record in recorded)
        if trivial(outputs):
            continue
        own = (function, tuple(a.arg for a in written_functions(lab)[function].args.args))
        forms = [(own, None)] + [((f"{function}[{form.name}]", form.parameters), form.arguments)
                                 for form in registry()[lab].forms if form.function == function]
        for index, ((name, parameters), convert) in enumerate(forms):
            arrays: dict[str, np.ndarray] = {}
            cases = []
            for k, ((args, kwargs), _) in enumerate(recorded):
                if convert is None:  # the markers as evaluated, their dtypes kept
                    arrays.update({m["$input"]: stored[m["$input"]] for m in
                                   [*args, *kwargs.values()] if "$input" in _marker(m)})
                    cases.append(Case("function", name, tuple(args), kwargs))
                    continue
                converted = convert(*[_value(a, stored) for a in args],
                                    **{key: _value(v, stored) for key, v in kwargs.items()})
                cases.append(Case("function", name,
                                  tuple(_as_inputs(list(converted), arrays, f"f{index}c{k}_"))))
            found.append(Target(lab, f"notebook:{grade_id}", name, tuple(cases), outputs,
                                arrays, parameters))
    return found


def _request(found: list[Target], release: Path, work: Path) -> dict:
    """The child's request, with the hidden inputs and the reference outputs written as files."""
    inputs: dict[str, str] = {}
    entries = []
    for index, target in enumerate(found):
        if target.arrays is not None:  # a notebook's target: arguments of its own
            inputs[target.id] = str(work / f"target-{index}-inputs.npz")
            np.savez(inputs[target.id], **target.arrays)
        elif target.lab not in inputs:
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
        entries.append({"id": target.id, "expected": str(expected),
                        "inputs": inputs[target.id if target.arrays is not None else target.lab],
                        "cases": [c.to_json() for c in target.cases], "outputs": described,
                        "parameters": list(target.parameters)})
    return {"root": str(release), "labs": str(release / "labs"), "memory_mb": MEMORY_MB,
            "rtol": RTOL, "atol": ATOL, "skip": [], "results": str(work / "results.jsonl"),
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
    Python with a call: ``{"where": file, "code": code, "block": whether it is statements rather
    than one expression}``."""
    found: dict[str, tuple[str, bool]] = {}
    for path in sorted(release.rglob("*")):
        name = path.relative_to(release).as_posix()
        if not path.is_file() or name.startswith("site/") or \
                path.suffix not in (".py", ".md", ".ipynb"):
            continue
        for text in _readable_texts(path):
            for match in CODE.finditer(text):
                code = textwrap.dedent(next(g for g in match.groups() if g is not None)).strip()
                block = False
                try:
                    tree = ast.parse(code, mode="eval")
                except (SyntaxError, ValueError):
                    try:
                        tree, block = ast.parse(code), True
                    except (SyntaxError, ValueError):
                        continue
                if any(isinstance(node, ast.Call) for node in ast.walk(tree)):
                    found.setdefault(code, (name, block))
    return [{"where": where, "code": code, "block": block}
            for code, (where, block) in found.items()]


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
