"""Generated copies (stubs, student notebooks) match what `make sync` makes from solutions/."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.build import stubs, sync
from minimodel import generated as generated_copy
from minimodel.course import LABS
from minimodel.implementation import STUBS_DIR

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def generated():
    """What `make sync` would write, from solutions/ (a student's edits never enter it)."""
    return sync.generated_files()


def test_committed_copies_are_in_sync(generated):
    """A file a student edited is checked in its committed version: their work is not drift."""
    stale = sync.out_of_date(generated)
    committed_work = [p for p in stale if p.exists() and not generated_copy.is_pristine(p)]
    note = ("\nThese hold edits that are committed in git. If they are your own work as a student, "
            "this check is for the course's authors and your work is safe (make sync refuses to "
            "overwrite it)." if committed_work else "")
    assert not stale, (
        f"out of date, run `make sync`: {[str(p.relative_to(ROOT)) for p in stale]}{note}")


def test_drift_is_detected(tmp_path):
    files = {tmp_path / "a.py": "x = 1\n", tmp_path / "b.py": "y = 2\n"}
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 3  # edited by hand\n")
    assert sync.drifted(files) == [tmp_path / "b.py"]


@pytest.mark.parametrize("module", [m for lab in LABS for m in lab.modules])
def test_stub_keeps_signatures_and_raises_bilingual_hint(module, generated):
    import ast

    stub = generated[STUBS_DIR / f"{module}.py"]
    solution = (ROOT / "solutions" / "positional" / f"{module}.py").read_text()
    assert "BEGIN SOLUTION" not in stub and "HINT" not in stub

    def signatures(text):
        """Public API: module-level functions and classes, and their methods (not helpers
        defined inside a solution block, which the stub rightly drops)."""
        found = {}
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef):
                found[node.name] = (ast.unparse(node.args), ast.get_docstring(node))
            elif isinstance(node, ast.ClassDef):
                found[node.name] = ("class", ast.get_docstring(node))
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        key = f"{node.name}.{item.name}"
                        found[key] = (ast.unparse(item.args), ast.get_docstring(item))
        return found

    assert signatures(stub) == signatures(solution)
    assert stub.count("raise NotImplementedError(") == solution.count("### BEGIN SOLUTION")


def test_stub_module_raises_not_implemented_in_both_languages(generated, tmp_path):
    (tmp_path / "sinusoidal.py").write_text(generated[STUBS_DIR / "sinusoidal.py"])
    code = (
        "from minimodel.positional.sinusoidal import sinusoidal_pe\n"
        "try:\n    sinusoidal_pe(4, 8)\nexcept NotImplementedError as e:\n    print(e)\n"
    )
    env = {**os.environ, "MINIMODEL_IMPL": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.startswith("[es] Falta implementar sinusoidal_pe")
    assert "[en] sinusoidal_pe is not implemented yet" in out.stdout


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("def f():\n    ### BEGIN SOLUTION\n    return 1\n", "without"),
        ("def f():\n    return 1\n    ### END SOLUTION\n", "without"),
        ("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n", "not inside a function"),
    ],
)
def test_broken_markers_are_reported(text, problem):
    with pytest.raises(stubs.StubError, match=problem):
        stubs.make_stub(text, "sinusoidal")


@pytest.mark.parametrize("lab", LABS, ids=[lab.id for lab in LABS])
def test_student_notebook_has_no_solutions_and_no_outputs(lab, generated):
    notebook = json.loads(generated[ROOT / "labs" / f"{lab.slug}.ipynb"])
    text = json.dumps(notebook)
    for leaked in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert leaked not in text
    for cell in notebook["cells"]:
        assert cell.get("outputs", []) == [] and cell.get("execution_count") is None
    graded = [c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]
    assert graded, "the lab has auto-graded or manually graded cells"
