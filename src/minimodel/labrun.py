"""Run lab notebooks headless against a chosen implementation and collect their figures.

``python -m minimodel.labrun --impl reference --size demo --figures build/figures`` (what
``make demo`` runs) executes every lab from its solved source (in the instructors' repository; in
a student's copy, the notebook in ``labs/``), writes the executed notebooks to
``build/labs/`` and the figures to ``--figures``. Sizes: ``full`` is what students run; ``test``
is the small version the test suite uses; ``demo`` runs at full size the labs that take under
half a minute and the others (they train models for minutes) at test size. Each lab announces
itself with its expected time, a cell that runs long says so while it runs, and the run ends with
where to look.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

from minimodel.course import DEMO_FULL_S, LABS, Lab, find_lab
from minimodel.implementation import ENV_VAR, REPO_ROOT, choices
from minimodel.messages import LANGUAGES, pick, split_bilingual

SIZES = ("full", "test", "demo")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # a terminal's colour codes
LONG_CELL_S = 15.0  # a cell running longer than this is announced, then every minute


def lab_notebook(lab: Lab, root: Path = REPO_ROOT) -> Path:
    """The notebook to run: the solved source when the course has it, else the student's lab."""
    source = root / lab.source
    return source if source.exists() else root / "labs" / f"{lab.slug}.ipynb"


def size_of(lab: Lab, size: str) -> str:
    """The size a lab runs at: ``demo`` picks ``full`` for the quick labs, ``test`` otherwise."""
    if size != "demo":
        return size
    return "full" if lab.full_run_s < DEMO_FULL_S else "test"


class CellProgress:
    """Says which cell is running once it has run for ``LONG_CELL_S``, then every minute."""

    def __init__(self, lab: Lab, cells: int, stream):
        self.lab, self.cells, self.stream = lab, cells, stream
        self.index, self.started, self.next_say = -1, 0.0, LONG_CELL_S
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def start(self, cell=None, cell_index: int = 0, **_) -> None:
        self.index, self.started, self.next_say = cell_index, time.monotonic(), LONG_CELL_S

    def finish(self, cell=None, cell_index: int = 0, **_) -> None:
        spent = time.monotonic() - self.started
        if spent >= LONG_CELL_S:
            self._say(pick(f"celda {cell_index + 1}/{self.cells} terminada en {spent:.0f} s",
                           f"cell {cell_index + 1}/{self.cells} done in {spent:.0f} s"))
        self.index = -1

    def _watch(self) -> None:
        while not self.done.wait(1.0):
            if self.index < 0:
                continue
            spent = time.monotonic() - self.started
            if spent >= self.next_say:
                self._say(pick(f"celda {self.index + 1}/{self.cells} en marcha ({spent:.0f} s)…",
                               f"cell {self.index + 1}/{self.cells} running ({spent:.0f} s)…"))
                self.next_say += 60.0

    def _say(self, text: str) -> None:
        print(f"        {self.lab.id} · {text}", file=self.stream, flush=True)


def run_lab(
    lab: Lab,
    *,
    impl: str = "src",
    size: str = "full",
    figures: Path | None = None,
    out_dir: Path | None = None,
    timeout: int = 1800,
    stream=None,
):
    """Execute one lab in a fresh kernel; return the executed notebook.

    The kernel sees ``MINIMODEL_IMPL=impl``, ``MINIMODEL_LAB_SIZE=size`` (``demo`` resolved by
    ``size_of``) and, when given, ``MINIMODEL_FIGURES=figures``; it runs in ``labs/`` as a
    student's notebook would, over local sockets (no TCP). With a ``stream``, long cells are
    announced on it. A failing cell raises ``nbclient.exceptions.CellExecutionError``.
    """
    import jupytext
    import nbformat
    from jupyter_client import KernelManager
    from nbclient import NotebookClient

    notebook = jupytext.read(lab_notebook(lab))
    env = {**os.environ, ENV_VAR: impl, "MINIMODEL_LAB_SIZE": size_of(lab, size),
           "MINIMODEL_AUTORELOAD": "0", "MPLBACKEND": "agg"}
    if figures is not None:
        env["MINIMODEL_FIGURES"] = str(figures.resolve())
    progress = CellProgress(lab, len(notebook.cells), stream) if stream is not None else None
    hooks = {"on_cell_start": progress.start, "on_cell_executed": progress.finish} \
        if progress else {}
    failed = {}
    hooks["on_cell_error"] = lambda cell, cell_index, **_: failed.update(cell=cell,
                                                                          index=cell_index)
    with tempfile.TemporaryDirectory() as sockets:
        kernel = KernelManager(kernel_name="python3", transport="ipc",
                               ip=os.path.join(sockets, "kernel"))
        client = NotebookClient(notebook, km=kernel, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(REPO_ROOT / "labs")}},
                                **hooks)
        if progress:
            progress.thread.start()
        try:
            client.execute(env=env)
        except Exception as error:
            if failed:  # which cell, for failure()
                error.cell_number, error.cell_count = failed["index"] + 1, len(notebook.cells)
                error.cell_id = failed["cell"].get("metadata", {}).get("nbgrader", {}).get(
                    "grade_id")
            raise
        finally:
            if progress:
                progress.done.set()
            if kernel.has_kernel:  # a kernel manager handed to nbclient is ours to stop
                kernel.shutdown_kernel(now=True)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, out_dir / f"{lab.slug}.ipynb")
    return notebook


def failure(error: Exception) -> str:
    """What stopped a lab, in one plain line in the reader's language: for a cell that raised,
    which cell (its number and, for a graded cell, its name), its exception and message (not the
    traceback's last line, coloured for a terminal). A ``NotImplementedError`` without a message
    is a notebook cell still to complete: the line says so and names the function that raised."""
    if getattr(error, "ename", None):  # nbclient's CellExecutionError
        message = pick(*split_bilingual(error.evalue or ""))
        if error.ename == "NotImplementedError" and not message.strip():
            raised = re.findall(r", in (\w+)", ANSI.sub("", getattr(error, "traceback", "")))
            where = [name for name in raised if name != "<module>"][-1:]
            message = pick(
                f"{where[0]} aún sin completar en el cuaderno (TU CÓDIGO AQUÍ)" if where
                else "una celda aún sin completar (TU CÓDIGO AQUÍ)",
                f"{where[0]} not completed yet in the notebook (YOUR CODE HERE)" if where
                else "a cell not completed yet (YOUR CODE HERE)")
        text = f"{error.ename}: {message}"
    else:
        text = f"{type(error).__name__}: {pick(*split_bilingual(str(error)))}"
    text = (ANSI.sub("", text).strip().splitlines() or [""])[0]
    number = getattr(error, "cell_number", None)
    if number is None:
        return text
    cell = f"{number}/{error.cell_count}" + (f" ({error.cell_id})" if error.cell_id else "")
    return pick(f"celda {cell}: ", f"cell {cell}: ") + text


def about(lab: Lab) -> str:
    """The lab's measured time at full size (``Lab.full_run_s``) as said to a student: ``50 s``,
    ``7 min``. The labs' own text states it in these words (a test checks)."""
    return f"{lab.full_run_s:.0f} s" if lab.full_run_s < 90 else f"{lab.full_run_s / 60:.0f} min"


def announce(position: int, count: int, lab: Lab, size: str) -> str:
    """``[3/12] 17.02 Learned vs sinusoidal positions: full size, about 25 s``."""
    title = pick(lab.title_es, lab.title_en)
    if size_of(lab, size) == "full":
        how = pick(f"tamaño completo, unos {about(lab)}", f"full size, about {about(lab)}")
    else:
        how = pick("tamaño reducido, unos segundos", "small size, a few seconds")
    return f"[{position}/{count}] {lab.id} {title}: {how}"


def summary(labs_run: int, failures: int, elapsed: float, out: Path,
            figures: Path | None) -> str:
    """Where to look once the labs have run."""
    lines = [pick(f"{labs_run} laboratorios en {elapsed / 60:.1f} min, {failures} con fallos.",
                  f"{labs_run} labs in {elapsed / 60:.1f} min, {failures} failed."),
             pick(f"  cuadernos ejecutados: {out}/", f"  executed notebooks: {out}/")]
    if figures is not None:
        count = len(list(figures.glob("*.png")))
        lines.append(pick(f"  {count} figuras: {figures}/", f"  {count} figures: {figures}/"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="src", help=choices())
    parser.add_argument("--lab", action="append", help="lab id, e.g. 17.01 (default: all)")
    parser.add_argument("--size", choices=SIZES, default="full")
    parser.add_argument("--figures", type=Path, default=None, help="folder for the PNG figures")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "build" / "labs")
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help="es | en")
    args = parser.parse_args(argv)
    if args.lang:
        os.environ["MINIMODEL_LANG"] = args.lang
    labs = [find_lab(key) for key in args.lab] if args.lab else list(LABS)
    if args.size == "full":
        total = sum(lab.full_run_s for lab in labs) / 60
        print(pick(f"Tamaño completo: unos {total:.0f} min en 2 núcleos.",
                   f"Full size: about {total:.0f} min on 2 cores."), flush=True)
    failures = 0
    begin = time.perf_counter()
    for position, lab in enumerate(labs, 1):
        print(announce(position, len(labs), lab, args.size), flush=True)
        start = time.perf_counter()
        try:
            run_lab(lab, impl=args.impl, size=args.size, figures=args.figures,
                    out_dir=args.out, stream=sys.stdout)
            status = "ok"
        except Exception as error:  # report and go on with the next lab
            failures += 1
            status = pick("FALLA", "FAILED") + f": {failure(error)}"
        print(f"        {lab.id} {time.perf_counter() - start:6.1f} s  {status}", flush=True)
    print(summary(len(labs), failures, time.perf_counter() - begin, args.out, args.figures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
