"""A function that never returns costs its student little, and the same on every machine.

Each case of a probe group runs on a CPU-time budget of its own (:func:`case_cpu_s`, from the
run's limits: no clock of the machine decides). When a case spends it, the sandbox finds the
innermost function of the student's modules that has not returned since, replaces it by one that
raises at once and names it in ``dead.json`` (``grader.child.probe_runner.CaseTimer``): the cases
of that group that call it afterwards fail at once. :class:`OutOfTime` keeps those functions for
the rest of the student's grading: every later probe group (of every lab) and every notebook
kernel replaces them before any of the student's code runs, so one loop costs one case's budget,
not every group's CPU limit and every cell's time-out. Those cases score 0, and the feedback
says so once, at the top, naming the function where the course's specification names it (a
helper of the student's own is said as one, without its name).

What the sandbox wrote is data from the student's side: it can only hurt that student (a forged
list makes their own functions fail), and it is read as such: a few entries, each a function or
a method that the student's module defines (read from its source, never run), or it is ignored.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field

from grader.child.probe_runner import DEAD_FILE, MAX_DEAD
from grader.trusted.findings import Finding
from grader.trusted.safe_io import Beneath, UnsafeData, read_json
from minimodel.implementation import STUBS_DIR

CASE_SHARE = 0.7  # of a probe group's CPU limit, at most, for one case: the rest is for the others
MAX_FUNCTIONS = 2 * MAX_DEAD  # over all of a student's runs


def case_cpu_s(limits: dict) -> float:
    """The CPU seconds one case may use: the run's ``case_cpu_s``, at most :data:`CASE_SHARE`
    of the group's CPU limit (so that the case, not the group, runs out of time first)."""
    return round(min(float(limits["case_cpu_s"]), CASE_SHARE * float(limits["cpu_s"])), 3)


@functools.lru_cache(maxsize=64)
def defined_functions(source: bytes) -> frozenset[str]:
    """The functions a module's source defines at its top level, and the methods of its
    top-level classes (``Class.method``); none when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names |= {f"{node.name}.{method.name}" for method in node.body
                      if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return frozenset(names)


@dataclass
class OutOfTime:
    """The functions of one student that ran out of their time, in the order they did: each a
    ``(module, qualified name)`` of ``modules`` (module -> the source the sandbox runs)."""

    modules: dict[str, bytes]
    limit_s: float = 0.0  # the CPU time a case may use, as the feedback states it
    functions: list[tuple[str, str]] = field(default_factory=list)

    def request(self) -> list[list[str]]:
        """What a probe group's request and a notebook kernel's set-up carry."""
        return [list(entry) for entry in self.functions]

    def take(self, folder: Beneath) -> bool:
        """Add the functions a run's ``dead.json`` names (in ``folder``); whether there was one
        new. What is not a function of the student's modules, or over the caps, is ignored."""
        try:
            data = read_json(folder / DEAD_FILE)
        except UnsafeData:
            return False
        entries = data.get("dead") if isinstance(data, dict) else None
        new = False
        for entry in entries[:MAX_DEAD] if isinstance(entries, list) else []:
            if not (isinstance(entry, list) and len(entry) == 2 and
                    all(isinstance(part, str) for part in entry)):
                continue
            module, name = entry
            if module in self.modules and name in defined_functions(self.modules[module]) and \
                    (module, name) not in self.functions and len(self.functions) < MAX_FUNCTIONS:
                self.functions.append((module, name))
                new = True
        return new

    def findings(self) -> list[Finding]:
        """What the student reads at the top of the feedback: each function of the course's
        specification once, by name; the student's own helpers once per module, without their
        names (which one ran out of time could depend on a hidden input; ``make check`` names
        it on the visible cases)."""
        limit_es = f" (más de {self.limit_s:g} s de CPU)" if self.limit_s else ""
        limit_en = f" (over {self.limit_s:g} s of CPU)" if self.limit_s else ""
        said = list(dict.fromkeys(
            (module, name if name in specified_functions(module) else None)
            for module, name in self.functions))
        return [Finding(
            "out-of-time",
            (f"{name} ({module}.py)" if name else f"Una función auxiliar tuya de {module}.py")
            + f" se quedó sin tiempo en un caso oculto{limit_es} y no se volvió a ejecutar: cada "
            "caso que la llama después, en este laboratorio, en los siguientes y en los "
            "cuadernos, vale 0. ¿Hay un bucle que nunca acaba?"
            + ("" if name else " Con make check verás cuál, si también se queda sin tiempo en "
               "sus casos visibles."),
            (f"{name} ({module}.py)" if name else f"A helper function of yours in {module}.py")
            + f" ran out of time on a hidden case{limit_en} and was not run again: every case "
            "that calls it afterwards, in this lab, the later ones and the notebooks, scores 0. "
            "Is there a loop that never ends?"
            + ("" if name else " make check shows which one, if it also runs out of time on "
               "its visible cases."))
            for module, name in said]


@functools.cache
def specified_functions(module: str) -> frozenset[str]:
    """The functions and methods the released stub of ``module`` defines: the course's names,
    which the feedback may say."""
    stub = STUBS_DIR / f"{module}.py"
    return defined_functions(stub.read_bytes()) if stub.is_file() else frozenset()
