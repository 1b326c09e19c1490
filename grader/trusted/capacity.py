"""How much one submission's feedback can say about the hidden inputs, at most: bits per run.

Whatever a submission's code does with the hidden inputs reaches the student only through the
feedback's fixed words (``grader.trusted.redact``), so what one run can carry out is at most the
logarithm of the number of distinct feedback states those words allow. This counts them per
graded item, from each lab's hidden checks and references, and sums ``log2`` over a full
submission (every lab):

- a module item of ``n`` cases: how many passed; how many raised, the first one's class (one of
  Python's built-in exceptions, or "a class of your own") and whether the others differ; a stub's
  own ``NotImplementedError`` message or none; how many ran out of time; a refused call, said by
  its package; how many failed for each reason the feedback names (``findings.MISMATCH``); which
  of the catalogue's classic mistakes for its group are named (any subset); and, once per probe
  group, how its run went (its status, a signal's name, an import error's class, output flood,
  unsafe output), which its items repeat;
- a notebook cell item of ``n`` records: the same, with how many were not recorded, and the
  catalogue's mistakes for that cell;
- each notebook: how the kernel ended, unsafe output, and up to three cells that raised (which
  cells, in order, each with its class);
- once per submission, the functions that ran out of time, at the top of the feedback: in order,
  each a function of the course's specification or "a helper of yours" in one of the modules.

It is an upper bound: it counts every combination as possible. Not counted: the findings a
judge writes itself (a contract, a device mismatch, a carried-forward note: one fixed sentence
each, at most a bit each) and which of an item's asked dtypes a ``dtype-not-kept`` finding names
(never the dtype that came back).

``python -m grader.trusted.capacity`` prints the figure per lab and in all.
"""

from __future__ import annotations

import math
import pkgutil
from functools import cache

from grader.hidden import registry
from grader.trusted import nbexec
from grader.trusted.findings import MISMATCH, SIGNAL_NAMES
from grader.trusted.out_of_time import MAX_FUNCTIONS, specified_functions
from grader.trusted.redact import BUILTIN_EXCEPTIONS, course_messages
from grader.trusted.references import References
from minimodel.course import encoding_modules
from minimodel.own_work import kind_of

CLASSES = len(BUILTIN_EXCEPTIONS) + 1  # and OWN_CLASS
# run_findings: finished, timeout, cpu, memory, error; crashed on each named signal or another;
# exited with or without an error code
RUN_STATES = 5 + len(SIGNAL_NAMES) + 1 + 2
CELL_ERRORS = 3  # the cell errors kernel_findings says


@cache
def refused_names() -> int:
    """What a refused call can be said as: the self-check, the switched-off watch, or the
    package of an installed library (``findings.refused_in_run``)."""
    return 2 + sum(1 for module in pkgutil.iter_modules()
                   if module.ispkg and kind_of(module.name) == "library")


def case_states(n: int) -> int:
    """What the feedback can say about ``n`` cases (or records) that each pass or fail, apart
    from the classic mistakes it names."""
    raised = 1 + n * CLASSES * 2  # none, or how many, the first one's class, others or not
    stub = 1 + len(course_messages()) + 1  # no stub message, one of them, or none said
    refused = 1 + refused_names()
    reasons = math.comb(n + len(MISMATCH), len(MISMATCH))  # counts per reason, at most n in all
    return (n + 1) * raised * stub * (n + 1) * refused * reasons


def group_bits() -> float:
    """How one probe group's run went, which every item of the group repeats: its status, and
    an import error (none, an exit, a class, a refused import), output flood, unsafe output."""
    return math.log2(RUN_STATES * (1 + 1 + CLASSES + refused_names()) * 2 * 2)


def item_bits(n: int, mistakes: int) -> float:
    """A module item of ``n`` cases whose group's catalogue has ``mistakes`` classic mistakes."""
    return math.log2(case_states(n)) + mistakes


def cell_bits(n: int, mistakes: int) -> float:
    """A notebook cell item of ``n`` records (one more count: those not recorded)."""
    return math.log2(case_states(n) * (n + 1)) + mistakes


def kernel_bits(cells: int) -> float:
    """One notebook of ``cells`` code cells (the student's, the given ones, the test cells, and
    one more for the cells the student adds)."""
    said = CLASSES + 2  # a class, a cell time-out, or a function out of time
    errors = sum(math.comb(cells + 1, k) * said ** k for k in range(CELL_ERRORS + 1))
    return math.log2((1 + len(nbexec.RUN_FINDINGS)) * 2 * errors)


def lab_bits(lab_id: str) -> float:
    """The bits one lab's items and notebook can carry in one run."""
    checks = registry()[lab_id]
    refs = References(lab_id)
    groups = {group.key: group for group in checks.groups}
    bits = group_bits() * len({item.group for item in checks.items})
    bits += sum(item_bits(len(groups[item.group].cases), len(refs.mistakes(item.group)))
                for item in checks.items)
    bits += sum(cell_bits(len(cell.records), len(refs.cell_mistakes(cell.grade_id)))
                for cell in checks.cells)
    if checks.notebook:
        source = nbexec.source_notebook(checks.notebook.slug)  # test cells too: a cell error
        bits += kernel_bits(sum(cell.cell_type == "code" for cell in source.cells))  # names them
    return bits


def out_of_time_bits() -> float:
    """The functions that ran out of time, said at the top of the feedback: an ordered list of
    distinct entries, each a function of a module's specification or one module's helpers
    (``OutOfTime.findings``), at most ``MAX_FUNCTIONS`` of them."""
    entries = sum(len(specified_functions(module)) + 1 for module in encoding_modules())
    return math.log2(sum(math.perm(entries, k)
                         for k in range(min(entries, MAX_FUNCTIONS) + 1)))


def run_bits() -> dict[str, float]:
    """Lab id -> its bits per run, ``"out of time"``: the functions named at the top, and
    ``"all"``: the sum, a full submission's."""
    labs = {lab_id: lab_bits(lab_id) for lab_id in registry()}
    labs["out of time"] = out_of_time_bits()
    return {**labs, "all": sum(labs.values())}


if __name__ == "__main__":
    for lab_id, bits in run_bits().items():
        print(f"{lab_id}\t{bits:.0f} bits")
