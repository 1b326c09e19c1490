"""The catalogue of classic mistakes: ``solutions/mistakes/<module>.py``, one file per module.

Each mistake is a wrong version of one function (or method) of the module, with its code and its
explanation in both languages: what a student who makes that mistake would have written. Where a
student's value matches what the wrong version gives, the explanation is shown, by the self-check
and by the grader alike, with the same code and the same words. The wrong versions are
instructor material: they run only where the course is built, on the visible inputs for the
self-check's stored answers (``grader.build.snapshots``) and on the hidden inputs for the grader's
reference outputs (:func:`hidden_outputs`, stored by ``grader.build.references``), and on the
records of a notebook test cell that names their module (``CellCheck.catalogue``); only their
outputs on the visible inputs reach the student's repository.

A catalogue file binds the right functions it starts from at import
(``from minimodel.positional.sinusoidal import sinusoidal_pe as right``): while a mistake runs,
the module's attribute is the wrong version. A wrong version is a function written out under
``@mistake``, or one built from the right ones and declared with ``name = mistake(...)(wrong)``:
another right function (NTK scaling that is linear scaling), :func:`ignoring` one argument, or a
file's helper that does the reference's steps with one of them done wrong.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import inspect
import os
import pickle
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from minimodel.implementation import CATALOGUE_DIR, ENV_VAR

OUTCOMES = "outcomes.pickle"  # what the child that runs the mistakes hands back


@dataclass(frozen=True)
class Mistake:
    """One classic mistake in ``module``: ``wrong`` replaces ``target`` (``"f"`` or
    ``"Class.method"``) of the module and gives what that mistake gives."""

    code: str
    target: str
    es: str
    en: str
    wrong: Callable = field(repr=False, compare=False)
    module: str = ""

    @property
    def key(self) -> str:
        """The code that names the mistake everywhere: ``<module>.<code>``."""
        return f"{self.module}.{self.code}"


def mistake(target: str, code: str, *, es: str, en: str) -> Callable[[Callable], Mistake]:
    """Decorator for a catalogue file: ``@mistake("sinusoidal_pe", "swapped", es=..., en=...)``."""
    return functools.partial(Mistake, code, target, es, en)


def ignoring(right: Callable, argument: str) -> Callable:
    """``right`` as a student who ignores its ``argument`` writes it: whatever is passed, ``right``
    runs with that argument's default."""
    signature = inspect.signature(right)
    default = signature.parameters[argument].default

    @functools.wraps(right)
    def wrong(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.arguments[argument] = default
        return right(*bound.args, **bound.kwargs)

    return wrong


def catalogue(module: str) -> list[Mistake]:
    """The mistakes of one student module (none when it has no catalogue file).

    The file is loaded where ``minimodel.positional`` is the reference implementation."""
    path = CATALOGUE_DIR / f"{module}.py"
    if not path.exists():
        return []
    spec = importlib.util.spec_from_file_location(f"mistakes_{module}", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    found = [replace(m, module=module) for m in vars(loaded).values() if isinstance(m, Mistake)]
    codes = [m.code for m in found]
    if len(codes) != len(set(codes)):
        raise ValueError(f"{path}: two mistakes with one code: {sorted(codes)}")
    return found


@contextlib.contextmanager
def made(item: Mistake) -> Iterator[None]:
    """Within the block, the student module (``minimodel.positional.<module>``) has the mistake,
    as a student's module would: the function is replaced, and so is every entry of the module's
    own tables that holds it (``scaling.SCALINGS``, through which given code calls a method)."""
    loaded = importlib.import_module(f"minimodel.positional.{item.module}")
    owner_name, _, attribute = item.target.rpartition(".")
    owner = getattr(loaded, owner_name) if owner_name else loaded
    original = getattr(owner, attribute)
    entries = [(table, key) for table in vars(loaded).values() if isinstance(table, dict)
               for key, value in table.items() if value is original]
    setattr(owner, attribute, item.wrong)
    for table, key in entries:
        table[key] = item.wrong
    try:
        yield
    finally:
        setattr(owner, attribute, original)
        for table, key in entries:
            table[key] = original


def forked(function, *args) -> dict:
    """``function(*args)`` in a forked child; its result comes back pickled."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            result = {"ok": function(*args)}
        except BaseException:  # noqa: BLE001
            result = {"error": traceback.format_exc()}
        with os.fdopen(write_fd, "wb") as out:
            pickle.dump(result, out)
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as data:
        payload = data.read()
    os.waitpid(pid, 0)
    result = pickle.loads(payload) if payload else {"error": "the pass died"}
    if "error" in result:
        raise RuntimeError(result["error"])
    return result["ok"]


def _hidden_run(item: Mistake | None, run, cells: list[tuple]) -> dict:
    """In the forked child: the lab's probe groups with ``item`` made (none: the reference),
    through the driver that grades (``run``, a ``grader.trusted.runs.LabRun`` on its plain path),
    and the notebook records of ``cells`` (:func:`cell_records`); one thread, as :func:`main`
    set before forking."""
    with made(item) if item else contextlib.nullcontext():
        return {"groups": run.groups() if item else {}, "cells": cell_records(cells)}


def cell_records(cells: list[tuple]) -> dict[str, dict]:
    """grade id -> record name -> value (float64 array, ``None`` or ``str``) for each
    ``(grade id, module, given, records)``: ``given`` run, then each record evaluated, with
    NumPy, PyTorch and the module's names; a record that raises is left out."""
    import numpy as np
    import torch

    found = {}
    for grade_id, module, given, records in cells:
        names = {"np": np, "torch": torch, **{
            k: v for k, v in vars(importlib.import_module(f"minimodel.positional.{module}"))
            .items() if not k.startswith("_")}}
        values = found[grade_id] = {}
        try:
            exec(given, names)  # noqa: S102 - the course's own source, from a lab's checks.py
        except Exception:  # noqa: BLE001 - a mistake that breaks the given cells records nothing
            continue
        for name, expression in records.items():
            with contextlib.suppress(Exception):  # the mistake raises there
                value = eval(expression, names)  # noqa: S307 - as above
                if isinstance(value, torch.Tensor):
                    value = value.detach().cpu().double().numpy()
                values[name] = value if value is None or isinstance(value, str) else \
                    np.asarray(value, dtype=np.float64)
    return found


def hidden_outputs(checks, inputs: Path, out_dir: Path) -> dict[str, dict]:
    """What every mistake of the lab's modules gives on the probe groups of ``checks`` (a
    ``LabChecks``; ``inputs``: the hidden inputs' file) and on the records of its notebook cells
    that name a ``catalogue``: mistake key (``""``: the reference) -> ``{"groups": group key ->
    {"cpu": GroupOutcome}, "cells": grade id -> record -> value}``. Runs in a child process where
    ``minimodel.positional`` is the reference; ``out_dir/<mistake key>/`` gets what the probe
    runner writes."""
    from grader.hidden.spec import LabChecks

    cells = [(c.grade_id, c.catalogue, c.given,
              {n: e for n, e in c.records.items() if n not in c.volatile})
             for c in checks.cells if c.catalogue]
    out_dir.mkdir(parents=True)
    reference_child("grader.build.mistakes", str(inputs), str(out_dir),
                    input=pickle.dumps((LabChecks(checks.lab_id, groups=checks.groups), cells)))
    return pickle.loads((out_dir / OUTCOMES).read_bytes())


def reference_child(module: str, *args: str, **options) -> None:
    """``python -m <module> <args>`` where ``minimodel.positional`` is the reference."""
    subprocess.run([sys.executable, "-m", module, *args], check=True, **options,
                   env={**os.environ, ENV_VAR: "reference", "PYTHONDONTWRITEBYTECODE": "1"})


def lab_mistakes(lab_id: str) -> list[Mistake]:
    """The mistakes of a lab's own modules."""
    from minimodel.course import find_lab

    return [item for module in find_lab(lab_id).modules for item in catalogue(module)]


def main() -> int:
    from grader.child.warmup import load_probe_libraries
    from grader.trusted.runs import LabRun
    from grader.trusted.sandbox import ItemFolders

    inputs, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    checks, cells = pickle.loads(sys.stdin.buffer.read())  # the lab's probe groups and cells
    load_probe_libraries()  # once, as the sandbox's zygote does, not in every forked pass
    outcomes = {item.key: forked(_hidden_run, item,
                                 LabRun(checks, ItemFolders(out_dir / item.key), inputs), cells)
                for item in lab_mistakes(checks.lab_id)}
    outcomes[""] = forked(_hidden_run, None, None, cells)
    (out_dir / OUTCOMES).write_bytes(pickle.dumps(outcomes))
    return 0


if __name__ == "__main__":  # the catalogue files import grader.build.mistakes: run that one's main
    from grader.build.mistakes import main as catalogue_main

    sys.exit(catalogue_main())
