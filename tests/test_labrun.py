"""`make demo`'s lab runner: demo sizes, progress while a cell runs long, no kernel warnings."""

import io
import os
import re
import subprocess
import sys
import time

from minimodel import labrun
from minimodel.course import DEMO_FULL_S, LABS, find_lab
from minimodel.implementation import REPO_ROOT


def test_demo_runs_the_quick_labs_whole_and_the_training_labs_small():
    sizes = {lab.id: labrun.size_of(lab, "demo") for lab in LABS}
    assert sizes["17.01"] == "full" and sizes["18.01"] == "test"
    assert all((size == "full") == (find_lab(i).full_run_s < DEMO_FULL_S)
               for i, size in sizes.items())
    assert labrun.size_of(find_lab("18.01"), "full") == "full"


def test_a_long_cell_is_announced_while_it_runs(monkeypatch):
    monkeypatch.setattr(labrun, "LONG_CELL_S", 0.2)
    said = io.StringIO()
    progress = labrun.CellProgress(find_lab("18.01"), 12, said)
    progress.start(cell_index=4)
    progress.thread.start()
    announced = ("18.01 · cell 5/12 running", "18.01 · celda 5/12 en marcha")
    deadline = time.monotonic() + 60
    while not any(text in said.getvalue() for text in announced) and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    progress.finish(cell_index=4)
    progress.done.set()
    assert any(text in said.getvalue() for text in announced)
    assert "5/12" in said.getvalue().splitlines()[-1]


def test_the_runner_says_each_lab_and_where_to_look_without_warnings(tmp_path):
    env = {**os.environ, "MINIMODEL_LANG": "en"}
    run = subprocess.run(
        [sys.executable, "-m", "minimodel.labrun", "--impl", "reference", "--size", "demo",
         "--lab", "17.01", "--figures", str(tmp_path / "figures"), "--out", str(tmp_path / "nb")],
        env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "[1/1] 17.01 Sinusoidal positional encoding: full size, about" in run.stdout
    assert f"executed notebooks: {tmp_path / 'nb'}/" in run.stdout
    assert "figures:" in run.stdout and (tmp_path / "nb" / "17_01_sinusoidal.ipynb").exists()
    assert "WARNING" not in run.stdout + run.stderr


def test_a_failed_lab_says_the_error_and_its_message_in_plain_text(monkeypatch):
    """A stub's NotImplementedError in a cell: its name and message, no colour codes."""
    from nbclient.exceptions import CellExecutionError
    from nbformat.v4 import new_code_cell

    from minimodel.messages import bilingual

    message = bilingual("Falta implementar sinusoidal_pe (lección 17.01).",
                        "sinusoidal_pe is not implemented yet (lesson 17.01).")
    error = CellExecutionError.from_cell_and_msg(new_code_cell("sinusoidal_pe(4, 8)"), {
        "ename": "NotImplementedError", "evalue": message,
        "traceback": ["\x1b[31m---------\x1b[39m", "\x1b[31mNotImplementedError\x1b[39m: "
                      + message.replace("\n", "\n\x1b[39m")]})
    monkeypatch.setenv("MINIMODEL_LANG", "en")
    assert labrun.failure(error) == \
        "NotImplementedError: sinusoidal_pe is not implemented yet (lesson 17.01)."
    monkeypatch.setenv("MINIMODEL_LANG", "es")
    assert labrun.failure(RuntimeError(message)) == \
        "RuntimeError: Falta implementar sinusoidal_pe (lección 17.01)."


UNMEASURED = re.compile(r"menos de un minuto|under a minute", re.I)
STATED = re.compile(r"(?:unos|about) (\d+ (?:s|min))\b")


def test_the_times_a_lab_states_are_the_measured_ones():
    """A lab's text says how long it takes only in the words of its measured full-size time
    (``Lab.full_run_s``, what ``make demo-full`` announces), never an unmeasured promise."""
    for lab in LABS:
        source = (REPO_ROOT / lab.source).read_text(encoding="utf-8")
        prose = " ".join(line.lstrip("# ") for line in source.splitlines()
                         if line.startswith("#"))
        assert not UNMEASURED.search(prose), lab.id
        assert all(said == labrun.about(lab) for said in STATED.findall(prose)), lab.id
    stated = (REPO_ROOT / find_lab("18.03").source).read_text(encoding="utf-8")
    assert f"unos {labrun.about(find_lab('18.03'))}" in stated
    assert f"about {labrun.about(find_lab('18.03'))}" in stated


def test_18_03_says_first_which_labs_it_needs():
    lab = find_lab("18.03")
    intro = (REPO_ROOT / lab.source).read_text(encoding="utf-8").split("# %%", 2)[1]
    assert lab.needs and all(need in intro for need in lab.needs)
    assert f"make check LAB={lab.id}" in intro


def test_a_cell_left_to_complete_is_named_with_its_function(monkeypatch):
    """`make demo` in the student's repository runs the notebooks of labs/: a cell still to
    complete raises a NotImplementedError without a message, and the line says which cell and
    which function, not an empty message."""
    import pytest
    from nbclient.exceptions import CellExecutionError

    lab = find_lab("17.00")
    student_notebook = REPO_ROOT / "labs" / f"{lab.slug}.ipynb"
    monkeypatch.setattr(labrun, "lab_notebook", lambda lab: student_notebook)
    with pytest.raises(CellExecutionError) as raised:
        labrun.run_lab(lab, impl="reference", size="test")
    monkeypatch.setenv("MINIMODEL_LANG", "en")
    said = labrun.failure(raised.value)
    assert re.fullmatch(r"cell \d+/\d+ \([\w-]+\): NotImplementedError: self_attention not "
                        r"completed yet in the notebook \(YOUR CODE HERE\)", said), said
    monkeypatch.setenv("MINIMODEL_LANG", "es")
    assert "self_attention aún sin completar en el cuaderno" in labrun.failure(raised.value)
