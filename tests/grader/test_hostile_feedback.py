"""Feedback on hidden cases says nothing that varies with a hidden input beyond its fixed words.

Each attacker reads the hidden inputs (its arguments, the probe runner's request at import, the
recorder cells' sources through IPython's ``In``, ``_ih`` and ``linecache``, its caller's frame)
and picks from them which of sixteen lines raises, each with a literal of its own, always the
same class. Two attackers do the same with the picks shifted: were a line or a literal of theirs
to reach the feedback, the two would read differently. Both are graded in one run with an honest
classmate, whose row must be byte-identical to the row it gets alone.
"""

from __future__ import annotations

import nbformat
import pytest
from grader_corpus import REFERENCE, SLUG, Entry, graded_class, module_score, solved_cells

from grader.build.demo import fill_notebook
from grader.build.sync import released_text
from grader.trusted.sandbox import Limits
from minimodel.implementation import REPO_ROOT

pytestmark = pytest.mark.slow

LIMITS = Limits(wall_s=2.5, cpu_s=3, memory_mb=1024, cell_timeout_s=40, notebook_wall_s=120)
WORDS = ("alfa", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliett", "kilo", "lima", "mike", "november", "oscar", "papa")


def raiser(name: str, shift: int) -> str:
    """``name(numbers)``: raises ``LookupError`` from one of sixteen lines, each with its own
    literal, picked by ``numbers`` (the hidden inputs it found) and ``shift``; prints the pick
    (for the instructor's log only)."""
    lines = [f"def {name}(numbers):", f"    pick = (sum(numbers) + {shift}) % {len(WORDS)}",
             "    print('PICKED', pick)"]
    for index, word in enumerate(WORDS):
        lines += [f"    if pick == {index}:", f"        raise LookupError({word!r})"]
    return "\n".join(lines) + "\n"


def module_attack(shift: int) -> str:
    """The reference whose ``sinusoidal_pe`` and ``forward`` raise by their arguments."""
    return REFERENCE + "\n\n" + raiser("_leak", shift) + '''

def sinusoidal_pe(T, d, base=10000.0):
    _leak([T, d, int(base)])


def _forward(self, x, offset=0):
    _leak([*x.shape, offset])


SinusoidalPositionalEncoding.forward = _forward
'''


def import_attack(shift: int) -> str:
    """The reference that, at import, finds the probe runner's request in its callers' frames
    and raises by the hidden cases' arguments."""
    return REFERENCE + "\n\n" + raiser("_leak", shift) + '''

import sys as _sys

_frame, _numbers = _sys._getframe(), []
while _frame is not None:
    _request = _frame.f_locals.get("request")
    if isinstance(_request, dict):
        _numbers = [a for case in _request["cases"] for a in case.get("args", [])
                    if isinstance(a, int)]
    _frame = _frame.f_back
_leak(_numbers)
'''


# A solution cell called by a test cell: reads the recorder's source through its caller's frame
SHIFT_MATRIX = '''\
import linecache as _linecache, re as _re, sys as _sys


def shift_matrix(delta, d, base=10000.0):
    frame, source = _sys._getframe(1), ""
    while frame is not None and "__minimodel_record" not in source:
        source = "".join(_linecache.getlines(frame.f_code.co_filename))
        frame = frame.f_back
    _leak_cell([int(n) for n in _re.findall(r"\\d+", source)] + [delta, d])
'''
# A cell of the student's own, after a test cell: reads the recorder's source from the history
HISTORY = '''\
import linecache as _linecache, re as _re
_seen = " ".join([*map(str, In), *_ih, _i, _ii, _iii,
                  *("".join(entry[2]) for entry in _linecache.cache.values())])
_leak_cell([int(n) for n in _re.findall(r"\\d+", _seen[_seen.find("__minimodel_record"):])])
'''


def notebook_attack(shift: int) -> bytes:
    """The solved notebook with :data:`SHIFT_MATRIX` as its ``shift-matrix`` and :data:`HISTORY`
    added after ``test-table``."""
    notebook = nbformat.reads(released_text(REPO_ROOT / "labs" / f"{SLUG}.ipynb"), as_version=4)
    cells = solved_cells()
    notebook = fill_notebook(notebook, {**cells, "shift-matrix": raiser("_leak_cell", shift)
                                        + "\n\n" + SHIFT_MATRIX})
    after = next(index for index, cell in enumerate(notebook.cells)
                 if cell.metadata.get("nbgrader", {}).get("grade_id") == "test-table")
    notebook.cells.insert(after + 1, nbformat.v4.new_code_cell(
        raiser("_leak_cell", shift) + "\n\n" + HISTORY))
    return nbformat.writes(notebook).encode()


HONEST = Entry("z_honest", REFERENCE, cells=solved_cells())
ATTACKERS = [
    *(Entry(f"{name}_runs", module_attack(shift),
            extra={f"labs/{SLUG}.ipynb": notebook_attack(shift)})
      for name, shift in (("a", 0), ("b", 5))),
    *(Entry(f"{name}_imports", import_attack(shift)) for name, shift in (("c", 0), ("d", 5))),
]
PAIRS = (("a_runs", "b_runs"), ("c_imports", "d_imports"))


def feedback(run: dict, name: str) -> dict[str, str]:
    """The four feedback files of ``name``, its id written as ``<student>``."""
    folder = run["out"] / "feedback" / name
    return {path.name: path.read_text(encoding="utf-8").replace(name, "<student>")
            for path in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def class_run(tmp_path_factory, capabilities):
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    root = tmp_path_factory.mktemp("hostile-feedback")
    return {"class": graded_class(root / "class", [*ATTACKERS, HONEST], LIMITS),
            "alone": graded_class(root / "alone", [HONEST], LIMITS)}


def test_the_honest_row_is_what_it_is_alone(class_run):
    together = class_run["class"]
    assert together["failed"] == []
    assert together["rows"]["z_honest"] == class_run["alone"]["rows"]["z_honest"]
    assert module_score(together["records"]["z_honest"]) == 9


@pytest.mark.parametrize("pair", PAIRS, ids=[first for first, _ in PAIRS])
def test_attackers_that_pick_differently_read_the_same_feedback(class_run, pair):
    run = class_run["class"]
    picks = [[line for line in (run["out"] / "logs" / f"{name}.log").read_text(
        encoding="utf-8").splitlines() if "PICKED" in line] for name in pair]
    assert picks[0] and picks[0] != picks[1]  # they did pick apart
    first, second = (feedback(run, name) for name in pair)
    assert first == second
    assert "LookupError" in first["feedback.en.md"]  # the class, from Python's fixed set
    for text in first.values():
        assert not any(word in text for word in WORDS), text
