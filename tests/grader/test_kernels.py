"""The notebook kernels: forked in the sandbox by a server that loaded PyTorch once.

Each test runs real sandboxed kernels (``grader.trusted.nbexec.run_notebook``) and reads what the
kernel wrote in its own folder.
"""

from __future__ import annotations

import time

import nbformat
import pytest

from grader.trusted import nbexec
from grader.trusted.budget import _children
from grader.trusted.forkservers import KernelServer
from grader.trusted.safe_io import Beneath, read_json
from grader.trusted.sandbox import Limits, Scratch, probe_capabilities


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    work = tmp_path_factory.mktemp("kernels")
    server = KernelServer(work / "server", work / "server.log")
    server.ensure()
    yield server, work
    server.close()


def run(kernels, name: str, *cells: str, **limits) -> tuple[Beneath, dict]:
    server, work = kernels
    scratch = Scratch(work / name, {})
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    return nbexec.run_notebook(notebook, scratch=scratch, name=name, caps=probe_capabilities(),
                               limits=Limits(**limits), extra_hide=[],
                               log_path=work / f"{name}.log", kernels=server)


def written(folder: Beneath) -> dict:
    return read_json(folder / "out.json")


SAVE = "import json; json.dump({}, open('out.json', 'w'))"


def test_a_kernel_starts_with_pytorch_already_loaded(kernels):
    folder, outcome = run(kernels, "loaded",
                          "import sys; loaded = 'torch' in sys.modules",
                          "import torch; value = float(torch.ones(3).sum())",
                          SAVE.format("{'loaded': loaded, 'value': value}"))
    assert outcome["status"] == "finished", outcome
    assert written(folder) == {"loaded": True, "value": 3.0}


def test_what_the_server_loaded_is_out_of_the_collectors_sight(kernels):
    """The server froze its objects before forking (``gc.freeze``): a full collection in the
    kernel walks only the kernel's own. And a notebook run once from top to bottom checks no
    module for edits before each cell (``MINIMODEL_AUTORELOAD=0``)."""
    folder, outcome = run(kernels, "frozen",
                          "import gc, torch; frozen = gc.get_freeze_count()",
                          "from minimodel.labkit import reload_edited_modules\n"
                          "reload_edited_modules()\n"
                          "reloading = 'autoreload' in get_ipython().extension_manager.loaded",
                          SAVE.format("{'frozen': frozen, 'reloading': reloading}"))
    assert outcome["status"] == "finished", outcome
    seen = written(folder)
    assert seen["frozen"] > 100_000 and not seen["reloading"], seen


def test_an_interrupted_cell_lets_the_next_cells_run(kernels):
    """A cell over its time limit is interrupted (SIGINT through the proxy), not the kernel."""
    folder, outcome = run(kernels, "interrupt", "while True:\n    pass",
                          SAVE.format("{'after': 1}"), cell_timeout_s=3)
    assert [e["ename"] for e in outcome["cell_errors"]] == ["CellTimeout"]
    assert written(folder) == {"after": 1}


def test_the_kernel_cannot_reach_the_server(kernels):
    """Student code cannot ask the server for a kernel of its own (outside the sandbox)."""
    server, _ = kernels
    folder, outcome = run(kernels, "reach", (
        "import socket\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        f"    s.connect({str(server.socket_path)!r}); reached = True\n"
        "except OSError as error:\n"
        "    reached = type(error).__name__\n"), SAVE.format("{'reached': reached}"))
    assert outcome["status"] == "finished", outcome
    assert written(folder)["reached"] in ("FileNotFoundError", "PermissionError")


def test_nothing_is_left_running_after_a_notebook(kernels):
    """A kernel stuck past the notebook's limit is killed with everything it started."""
    server, _ = kernels
    _, outcome = run(kernels, "stuck",
                     "import subprocess; subprocess.Popen(['sleep', '600'])",
                     "import time\nwhile True:\n    try:\n        time.sleep(60)\n"
                     "    except KeyboardInterrupt:\n        pass",
                     cell_timeout_s=2, notebook_wall_s=4)
    assert outcome["status"] == "timeout"
    deadline = time.monotonic() + 10
    while _children(server.process.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _children(server.process.pid) == []
