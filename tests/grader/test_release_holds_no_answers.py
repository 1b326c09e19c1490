"""The student repository holds no implementation of a graded function, and no answer of a hidden
case.

Every callable of the released package (outside the stubs) and of the released lab notebooks
whose signature binds a graded function's hidden arguments is called on the hidden inputs in a
child process and compared with the reference outputs (``grader.build.leaks``); one that gives them
all would earn a student the points without the work. The self-check's stored answers (which ship)
are compared with the reference outputs of the hidden cases: none may be one of them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from grader.build import release
from grader.build.leaks import (
    Leak,
    notebook_targets,
    search,
    targets,
    trivial,
    written_functions,
)
from grader.hidden import registry
from grader.trusted import references
from minimodel.implementation import REFERENCE_DIR
from minimodel.selfcheck import snapshots

SHORTCUT = f'''"""Tables."""
import importlib.util
import os
import signal

import torch

_spec = importlib.util.spec_from_file_location("answers", {str(REFERENCE_DIR / "sinusoidal.py")!r})
_answers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_answers)
sinusoidal_pe = _answers.sinusoidal_pe


class Heads:
    @staticmethod
    def slopes(n_heads):
        import math

        def powers(n):
            start = 2.0 ** (-8.0 / n)
            return [start ** (i + 1) for i in range(n)]

        closest = 2 ** math.floor(math.log2(n_heads))
        extra = powers(2 * closest)[0::2][: n_heads - closest]
        return torch.tensor(powers(closest) + extra)


def bias(q_len, k_len, slopes, causal=True):  # with NumPy arrays only (astype)
    import numpy as np

    distance = np.arange(k_len - q_len, k_len)[:, None] - np.arange(k_len)[None, :]
    m = slopes.astype(np.float64)[:, None, None]
    if not causal:
        return -m * np.abs(distance)
    return np.where(distance < 0, -np.inf, -m * distance)


def crash(n_heads):
    os.kill(os.getpid(), signal.SIGKILL)


def spin(n_heads):
    while True:
        pass
'''
DOCSTRING = '''"""Resizing tables of positions.

A table of ``L`` rows becomes one of ``new_len`` rows with
``F.interpolate(table.T[None], new_len, mode="linear", align_corners=True)[0].T``.
"""
'''
# 17.03's notebook formula (rope_rotate_half) as a benchmark would write it, with the tables built.
BENCHMARK = '''"""RoPE against a plain rotate-half."""
import torch


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def plain_rotate_half(x, cos, sin):
    return x * cos + rotate_half(x) * sin
'''
# A lesson's code blocks: sinusoidal_pe's answer as statements, the same formula as a function.
LESSON_BLOCKS = '''
```python
angles = np.arange(T)[:, None] * base ** (-np.arange(0, d, 2) / d)
table = np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(T, d)
```

```python
def rotar(x, cos, sin):
    mitad = x.shape[-1] // 2
    girada = torch.cat([-x[..., mitad:], x[..., :mitad]], dim=-1)
    return x * cos + girada * sin
```
'''
NOTEBOOK_CELL = '''def frequencies(rotary_dim, base=10000.0):
    return 1.0 / base ** (torch.arange(0, rotary_dim, 2).float() / rotary_dim)
'''


def test_the_release_holds_no_implementation_of_a_graded_function(released):
    found = search(released)
    assert found.targets == len(targets())
    assert found.candidates > found.notebook_candidates > 0
    assert not found.leaks, "a student could call these for full marks:\n" + "\n".join(
        map(str, found.leaks))
    print(f"{found.candidates} callables ({found.notebook_candidates} in notebooks) on "
          f"{found.targets} targets in {found.seconds:.1f} s; killed the child: "
          f"{found.crashed or 'none'}; dropped as slow: {found.slow or 'none'}")


def test_every_graded_function_is_searched():
    graded = {(lab, case.name) for lab, checks in registry().items() for group in checks.groups
              for case in group.cases if case.call == "function"}
    searched = {(target.lab, target.function) for target in targets(notebooks=False)}
    assert searched == graded
    assert trivial([[{"array": [0.0, 0.0]}], [{"array": []}, {"kind": "none"}]])
    assert not trivial([[{"array": [0.0, 0.0]}], [{"array": [1.0]}]])


def test_the_notebooks_answers_are_searched_in_the_forms_their_checks_declare():
    found = {target.id: target for target in notebook_targets(["17.03"])}
    cell = "17.03/notebook:test-formulations"
    assert {f"{cell}/rope_complex", f"{cell}/rope_rotate_half",
            f"{cell}/rope_rotate_half[cos-sin-tables]"} <= set(found), sorted(found)
    half = found[f"{cell}/rope_rotate_half"]
    tables = found[f"{cell}/rope_rotate_half[cos-sin-tables]"]
    assert half.parameters == ("x", "positions", "inv_freq")
    assert tables.parameters == ("x", "cos", "sin") and tables.outputs is half.outputs
    x, cos, sin = (tables.arrays[argument.key] for argument in tables.cases[0].args)
    rotated = np.concatenate([-x[..., 3:], x[..., :3]], axis=-1)  # D = 6
    assert np.allclose(x * cos + rotated * sin, half.outputs[0][0]["array"], atol=1e-5), \
        "the form's tables give the notebook's answer"
    for lab, checks in registry().items():
        for form in checks.forms:
            assert form.function in written_functions(lab), (lab, form.name)


@pytest.fixture(scope="module")
def planted(released, tmp_path_factory) -> Path:
    """The release with eight answers planted: the reference ``sinusoidal_pe`` imported by a
    new module, ALiBi's slopes rewritten as a static method and its biases with NumPy, RoPE's
    frequencies rewritten in a notebook cell, ``interpolate_positions`` as one expression in a
    docstring, 17.03's notebook formula ``rope_rotate_half`` in a benchmark file and in a lesson's
    code block, ``sinusoidal_pe`` as a lesson's block of statements; and two functions that kill
    the search's child and never return."""
    repo = tmp_path_factory.mktemp("planted") / "repo"
    shutil.copytree(released, repo)
    (repo / "src" / "minimodel" / "shortcut.py").write_text(SHORTCUT, encoding="utf-8")
    (repo / "src" / "minimodel" / "resize.py").write_text(DOCSTRING, encoding="utf-8")
    (repo / "benchmarks").mkdir()
    (repo / "benchmarks" / "rope.py").write_text(BENCHMARK, encoding="utf-8")
    with (repo / "docs_es" / "17" / "03-rope.md").open("a", encoding="utf-8") as lesson:
        lesson.write(LESSON_BLOCKS)
    lab = repo / "labs" / "17_03_rope.ipynb"
    notebook = json.loads(lab.read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "code", "execution_count": None, "id": "planted",
                              "metadata": {}, "outputs": [], "source": NOTEBOOK_CELL})
    lab.write_text(json.dumps(notebook), encoding="utf-8")
    return repo


def test_the_search_finds_planted_implementations(planted):
    found = search(planted, labs=["17.01", "17.02", "17.03", "17.04"], time_limit_s=1.0)
    assert set(found.leaks) >= {
        Leak("minimodel.shortcut.sinusoidal_pe", "17.01/pe/sinusoidal_pe"),
        Leak("minimodel.shortcut.Heads.slopes", "17.04/slopes/alibi_slopes"),
        Leak("minimodel.shortcut.bias", "17.04/bias/alibi_bias"),
        Leak("labs/17_03_rope.ipynb:frequencies", "17.03/freq/rope_frequencies"),
    }, found.leaks
    assert "minimodel.shortcut.sinusoidal_pe computes sinusoidal_pe (lab 17.01" in \
        "\n".join(map(str, found.leaks))
    assert any(leak.candidate.startswith("src/minimodel/resize.py: F.interpolate(")
               and leak.target.endswith("/interpolate_positions") for leak in found.leaks), \
        "an answer written in a docstring"
    half = "17.03/notebook:test-formulations/rope_rotate_half[cos-sin-tables]"
    assert {Leak("benchmarks/rope.py:plain_rotate_half", half),
            Leak("docs_es/17/03-rope.md:rotar", half),
            Leak("docs_es/17/03-rope.md: angles = np.arange(T)[:, None] * base ** "
                 "(-np.arange(0, d, 2) / d) …", "17.01/pe/sinusoidal_pe")} <= set(found.leaks)
    assert "benchmarks/rope.py:plain_rotate_half computes rope_rotate_half[cos-sin-tables] " \
        "(lab 17.03, notebook cell 'test-formulations')" in "\n".join(map(str, found.leaks))
    assert "minimodel.shortcut.crash" in found.crashed, "skipped, and the search went on"
    assert "minimodel.shortcut.spin" in found.slow


def test_a_release_that_ships_a_benchmark_with_a_notebook_answer_is_refused(
        released, tmp_path, monkeypatch):
    """A maintainer ships ``benchmarks/`` again, 17.03's notebook formula in ``rope.py``."""
    repo = tmp_path / "repo"
    shutil.copytree(released, repo)
    (repo / "benchmarks").mkdir()
    (repo / "benchmarks" / "rope.py").write_text(BENCHMARK, encoding="utf-8")
    monkeypatch.setattr(release, "SHIPPED", (*release.SHIPPED, "benchmarks/"))
    said = []
    message = str(release.refused(release.scan(repo, say=said.append, labs=["17.03"])))
    assert message.startswith("No publico / refusing to release:\n")
    assert "benchmarks/rope.py:plain_rotate_half computes rope_rotate_half[cos-sin-tables] (lab " \
        "17.03, notebook cell 'test-formulations') · con ella se saca la nota entera / a " \
        "student could call it for full marks" in message, message
    assert any("Buscando en la publicación" in line for line in said)


def hidden_outputs_shipped(lab_id: str) -> list[tuple[str, str]]:
    """(stored value, hidden case) pairs where an array of the self-check's stored answers (the
    reference's or a classic mistake's, on the visible inputs) is the reference output of one of
    the lab's hidden cases; single numbers aside. The groups a notebook cell reads
    (``CellCheck.group``) are not hidden cases: they compute that cell's own records again,
    visible ones included, outside the kernel."""
    shipped_npz, shipped_json = snapshots.files(lab_id)
    if not shipped_npz.exists():
        return []
    notebook = registry()[lab_id].notebook
    cell_groups = {f"g/{c.group}/" for c in notebook.cells if c.group} if notebook else set()
    meta = json.loads(shipped_json.read_text(encoding="utf-8"))
    names = {d["array"]: name for name, d in meta["right"].items()}
    names |= {key: f"{name} ({code})" for name, wrong in meta["wrong"].items()
              for code, key in wrong.items()}
    with np.load(shipped_npz) as shipped, np.load(references.paths(lab_id)[0]) as hidden:
        cases = {key: hidden[key].astype(np.float64) for key in hidden.files
                 if key.startswith("g/") and not key.startswith(tuple(cell_groups))
                 and hidden[key].size > 1}
        return [(names[key], case) for key in shipped.files
                for case, output in cases.items() if output.shape == shipped[key].shape
                and np.allclose(shipped[key].astype(np.float64), output, rtol=1e-5, atol=1e-6)]


@pytest.mark.parametrize("lab_id", sorted(registry()))
def test_the_stored_answers_hold_no_hidden_output(lab_id):
    assert hidden_outputs_shipped(lab_id) == [], (
        "the self-check's visible inputs must differ from the hidden ones")
