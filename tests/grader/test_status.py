"""Every status word of a grading run is spelt once, in ``grader/trusted/status.py``.

A status written out by hand elsewhere (``"not run"`` in one file, ``"not-run"`` in another) is how
"not run" once had two spellings; these tests read every file of ``grader/`` and fail on such a
word, and fail on one word spelt two ways across the module's enums. The sandbox's child imports
nothing of the grader, so its words are checked against :class:`~grader.trusted.status.Report`
instead.
"""

from __future__ import annotations

import ast
import json

import pytest

from grader.trusted import status
from grader.trusted.status import Gpu, Item, Notebook, Report, Run, Student
from minimodel.implementation import REPO_ROOT

# the words that are nothing but a status; "cpu", "error", "missing" or "manual" also name a
# device, a comparison's reason or an item's kind, and are read through the enums where they are
# statuses
STATUS_WORDS = {"not run", "not-run", "not_run", "n/a", "kernel-died", "awaiting manual grading",
                "finished", "exited", "crashed", "capped", "grader-error", "passed",
                "student wall cap", "student cpu cap", "no hidden check"}
STATUS_PREFIXES = ("flagged:", "flagged: ", "problems:", "problems: ")
OWN_MODULE = REPO_ROOT / "grader" / "trusted" / "status.py"


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}


def _finding_codes(tree: ast.AST) -> set[int]:
    """The codes of ``Finding(code, es, en)``: their own vocabulary ("exited", "crashed")."""
    return {id(node.args[0]) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Finding"
            and node.args}


def status_literals(source: str) -> list[tuple[int, str]]:
    """``(line, word)`` of every status word written out in ``source`` (docstrings, comments
    and finding codes aside)."""
    tree = ast.parse(source)
    skip = _docstrings(tree) | _finding_codes(tree)
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and id(node) not in skip
                  and (node.value in STATUS_WORDS or node.value.startswith(STATUS_PREFIXES)))


def test_a_status_written_out_is_found():
    source = ('def f(v):\n    """passed"""\n    if v.gpu == "not run":\n'
              '        return "problems: " + Finding("exited", "", "").code\n')
    assert status_literals(source) == [(3, "not run"), (4, "problems: ")]


def _grader_files():
    return [path for path in sorted((REPO_ROOT / "grader").rglob("*.py"))
            if "child" not in path.parts and path != OWN_MODULE]


@pytest.mark.parametrize("path", _grader_files(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_no_status_word_outside_its_module(path):
    found = status_literals(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name}: use grader.trusted.status instead of {found}"


def _report_words(source: str) -> set[str]:
    """The words ``zygote.py`` gives a report's ``status``: a ``"status"`` key's value, and what
    is assigned to ``reason`` or ``report["status"]`` (each operand of an ``or``)."""
    tree = ast.parse(source)
    values: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            values += [v for k, v in zip(node.keys, node.values, strict=True)
                       if isinstance(k, ast.Constant) and k.value == "status"]
        elif isinstance(node, ast.Assign):
            target = node.targets[0]
            if getattr(target, "id", None) == "reason" or (
                    isinstance(target, ast.Subscript)
                    and getattr(target.slice, "value", None) == "status"):
                values.append(node.value)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "setdefault" \
                and node.args and getattr(node.args[0], "value", None) == "status":
            values.append(node.args[1])
    words = set()
    for value in values:
        operands = value.values if isinstance(value, ast.BoolOp) else [value]
        words |= {o.value for o in operands if isinstance(o, ast.Constant) and o.value}
    return words


def test_the_child_reports_only_the_words_the_parent_reads():
    words = _report_words((REPO_ROOT / "grader" / "child" / "zygote.py").read_text())
    assert {"exited", "signal", "timeout"} <= words
    assert words <= set(Report), words - set(Report)


ENUMS = (Report, status.Run, status.Notebook, Item, Gpu, status.Problem, Student)


def _spelling_clashes(enums) -> dict[str, set[str]]:
    """Words that differ only by case, ``-``, ``_`` or spaces, across ``enums``."""
    spellings: dict[str, set[str]] = {}
    for enum in enums:
        for member in enum:
            key = "".join(ch for ch in member.value.lower() if ch.isalnum())
            spellings.setdefault(key, set()).add(member.value)
    return {key: words for key, words in spellings.items() if len(words) > 1}


def test_no_status_is_spelt_twice():
    from enum import StrEnum
    assert not _spelling_clashes(ENUMS)
    planted = StrEnum("Planted", {"NOT_RUN": "not-run"})
    assert _spelling_clashes((*ENUMS, planted)) == {"notrun": {"not run", "not-run"}}


def test_members_are_their_words_in_json_and_text():
    """Records and grades.csv hold the same text as when the statuses were plain strings."""
    assert json.dumps({"gpu": Gpu.NOT_RUN, "run": Run.NOT_RUN}) == \
        '{"gpu": "not run", "run": "not run"}'
    assert f"{Student.AWAITING_MANUAL}" == "awaiting manual grading"
    assert Item("passed") is Item.PASSED and Notebook.KERNEL_DIED == "kernel-died"


def test_student_status_words():
    assert status.problems([]) == "ok"
    assert status.problems(["sandbox", "judge", "sandbox"]) == "problems: judge, sandbox"
    assert status.flagged("zip bomb") == "flagged: zip bomb"
    assert status.is_flagged("flagged: zip bomb") and not status.is_flagged(None)
    assert status.flag_reason("flagged: zip bomb") == "zip bomb"


def test_run_status_from_a_report():
    assert status.run_status({"status": "exited"}, done=True) == Run.FINISHED
    assert status.run_status({"status": "exited"}, done=False) == Run.EXITED
    assert status.run_status({"status": "signal", "signal": 11}, done=False) == Run.CRASHED
    assert status.run_status({"status": "grader-error"}, done=False) == Run.ERROR
    assert status.run_status({}, done=False) == Run.ERROR


def test_gpu_summary_is_the_worst():
    assert status.gpu_summary([]) == "n/a"
    assert status.gpu_summary(["passed", "not run"]) == "not run"
    assert status.gpu_summary(["not run", "failed"]) == "failed"
    assert status.gpu_summary(["passed"]) == "passed"
