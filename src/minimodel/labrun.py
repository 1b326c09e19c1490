"""Run lab notebooks headless against a chosen implementation and collect their figures.

``python -m minimodel.labrun --impl reference --figures build/figures`` (what ``make demo`` runs)
executes every lab from its source in ``solutions/labs/`` (or, in a student's copy, the notebook
in ``labs/``), writes the executed notebooks to ``build/labs/`` and the figures to
``--figures``. ``--size test`` runs the small version the test suite uses.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from minimodel.course import LABS, Lab, find_lab
from minimodel.implementation import ENV_VAR, REPO_ROOT
from minimodel.messages import pick


def lab_notebook(lab: Lab, root: Path = REPO_ROOT) -> Path:
    """The notebook to run: the solved source when the course has it, else the student's lab."""
    source = root / "solutions" / "labs" / f"{lab.slug}.py"
    return source if source.exists() else root / "labs" / f"{lab.slug}.ipynb"


def run_lab(
    lab: Lab,
    *,
    impl: str = "src",
    size: str = "full",
    figures: Path | None = None,
    out_dir: Path | None = None,
    timeout: int = 1800,
):
    """Execute one lab in a fresh kernel; return the executed notebook.

    The kernel sees ``MINIMODEL_IMPL=impl``, ``MINIMODEL_LAB_SIZE=size`` and, when given,
    ``MINIMODEL_FIGURES=figures``; it runs in ``labs/`` as a student's notebook would. A failing
    cell raises ``nbclient.exceptions.CellExecutionError`` naming the cell.
    """
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    notebook = jupytext.read(lab_notebook(lab))
    env = {**os.environ, ENV_VAR: impl, "MINIMODEL_LAB_SIZE": size, "MPLBACKEND": "agg"}
    if figures is not None:
        env["MINIMODEL_FIGURES"] = str(figures.resolve())
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO_ROOT / "labs")}},
    )
    client.execute(env=env)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, out_dir / f"{lab.slug}.ipynb")
    return notebook


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="src", help="src | reference | <folder>")
    parser.add_argument("--lab", action="append", help="lab id, e.g. 17.01 (default: all)")
    parser.add_argument("--size", choices=("full", "test"), default="full")
    parser.add_argument("--figures", type=Path, default=None, help="folder for the PNG figures")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "build" / "labs")
    args = parser.parse_args(argv)
    labs = [find_lab(key) for key in args.lab] if args.lab else list(LABS)
    failures = 0
    for lab in labs:
        start = time.perf_counter()
        try:
            run_lab(lab, impl=args.impl, size=args.size, figures=args.figures, out_dir=args.out)
            status = "ok"
        except Exception as error:  # report and go on with the next lab
            failures += 1
            status = pick("FALLA", "FAILED") + f": {str(error).strip().splitlines()[-1]}"
        print(f"{lab.id} {lab.slug:<28} {time.perf_counter() - start:6.1f} s  {status}")
    if args.figures is not None:
        count = len(list(args.figures.glob("*.png")))
        print(pick(f"{count} figuras en {args.figures}", f"{count} figures in {args.figures}"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
