"""Record values inside a student's notebook kernel, for judging outside it.

The grader runs the student's notebook with each auto-graded test cell replaced by a call like::

    __minimodel_record("test-table", {"pe": lambda: pe,
                                      "small": lambda: sinusoidal_pe(5, 6, base=100.0)})

Each expression is evaluated in the kernel (where the student's code lives) and its value saved
as plain data under ``records/<cell>/`` in the scratch folder, exactly as ``probe_runner`` saves
probe outputs. No test runs in the kernel and nothing here knows the expected values: the parent
reads the files and decides. A failing expression is recorded as its exception.
"""

from __future__ import annotations

import os

import probe_runner


def make_recorder(out_dir: str, dead: list = (), package: str = "minimodel.positional"):
    """A ``record(cell_id, expressions)`` function that writes under ``out_dir/records``.

    Called in the kernel's first cell, before any of the student's: from then on the student's
    code cannot import the self-check (``probe_runner.block_borrowed_imports``), and each
    function of the student's modules in ``dead`` (``[module, qualified name]`` pairs: those that
    ran out of their time in the probe groups) raises at once (``probe_runner.kill_dead``).
    """
    probe_runner.block_borrowed_imports()
    probe_runner.kill_dead(package, list(dead))

    def record(cell_id: str, expressions: dict) -> None:
        folder = os.path.join(out_dir, "records", cell_id)
        os.makedirs(folder, exist_ok=True)
        results = {}
        for name, thunk in expressions.items():
            try:
                value = thunk()
                outputs = probe_runner.save_outputs(value, os.path.join(folder, name))
                results[name] = {"ok": True, "outputs": outputs}
            except BaseException as error:  # recorded, never raised into the notebook
                results[name] = {"ok": False, "error": probe_runner.describe_error(error)}
        probe_runner._write_json(os.path.join(folder, "record.json"), results)

    return record

