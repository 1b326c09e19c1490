"""``minimodel-grader demo``: grade the bundled sample submissions and print the table.

Four samples are assembled into ``build/demo/submissions`` (see ``grader/samples/README.md``):
``reference`` (the solutions and the solved notebooks), ``stubs`` (the untouched student repo),
``buggy`` (typical mistakes) and ``hostile`` (attacks on the grader). They are graded with
``--force`` into ``build/demo/grades`` with short limits, and the table shows each one's automatic
points per lab and the findings that explain them. ``--out`` puts both elsewhere: in a new or empty
folder, or one an earlier demo made.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat

from grader.build.sync import released_text
from grader.trusted import nbexec
from grader.trusted.grading import GradingError, Options, grade
from grader.trusted.sandbox import Limits
from minimodel.course import LABS, encoding_modules
from minimodel.generated import END_MARK, START_MARK
from minimodel.implementation import REFERENCE_DIR, REPO_ROOT, STUBS_DIR
from minimodel.messages import bilingual

SAMPLES_DIR = Path(__file__).resolve().parent.parent / "samples"
SAMPLES = ("reference", "stubs", "buggy", "hostile")
EXPECTED = {"reference": "full marks", "stubs": "zero", "buggy": "partial", "hostile": "zero"}
DEMO_MARK = ".minimodel-demo"  # in a folder given with --out: the demo made it


def snippets(sample: str) -> dict[str, str]:
    """``{"<target>.<name>": source}`` for one sample folder."""
    folder = SAMPLES_DIR / sample
    return {p.name[: -len(".snippet")]: p.read_text(encoding="utf-8")
            for p in sorted(folder.glob("*.snippet"))}


def reference_bodies(module: str) -> dict[str, str]:
    """The body of each solution block of ``solutions/positional/<module>.py``, by function."""
    from grader.build.stubs import BEGIN, END, HINT, _owner

    text = (REFERENCE_DIR / f"{module}.py").read_text(encoding="utf-8")
    lines, bodies = text.splitlines(), {}
    for block in re.finditer(rf"^( *){BEGIN}\n(.*?)^ *{END}$", text, flags=re.M | re.S):
        body = [line[len(block[1]):] for line in block[2].splitlines() if not HINT.search(line)]
        bodies[_owner(lines, text.count("\n", 0, block.start()))] = "\n".join(body) + "\n"
    return bodies


def fill_stub(stub: str, bodies: dict[str, str], module_code: str = "") -> str:
    """The stub with each ``YOUR CODE`` block replaced by the body written for its function."""
    def filled(block: re.Match) -> str:
        name = re.search(r"Falta implementar ([\w.]+)|$", block[0])[1]
        if name not in bodies:
            return block[0]
        return "\n".join(block[1] + line if line.strip() else ""
                         for line in bodies[name].rstrip("\n").splitlines())

    pattern = rf"^( *){re.escape(START_MARK)}$.*?^ *{re.escape(END_MARK)}$"
    text = re.sub(pattern, filled, stub, flags=re.M | re.S)
    return text + ("\n\n" + module_code if module_code else "")


def fill_notebook(notebook: nbformat.NotebookNode, cells: dict[str, str]) -> nbformat.NotebookNode:
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in cells:
            cell.source = cells[grade_id].rstrip("\n")
    return notebook


def build_sample(sample: str, dest: Path) -> Path:
    """Write one sample submission (a copy of the student-editable files) into ``dest``."""
    positional = dest / "src" / "minimodel" / "positional"
    labs = dest / "labs"
    positional.mkdir(parents=True, exist_ok=True)
    labs.mkdir(parents=True, exist_ok=True)
    parts = snippets(sample) if sample in ("buggy", "hostile") else {}
    for module in encoding_modules():
        if not (REFERENCE_DIR / f"{module}.py").exists():
            continue
        if sample == "reference":
            shutil.copy2(REFERENCE_DIR / f"{module}.py", positional / f"{module}.py")
            continue
        stub = STUBS_DIR / f"{module}.py"
        prefix = f"{module}."
        bodies = {k[len(prefix):]: v for k, v in parts.items() if k.startswith(prefix)}
        module_code = bodies.pop("__module__", "")
        if bodies.pop("__base__", "").strip() == "reference":  # right but for the snippets
            bodies = {**reference_bodies(module), **bodies}
        (positional / f"{module}.py").write_text(
            fill_stub(released_text(stub), bodies, module_code), encoding="utf-8")
    for lab in LABS:
        if not nbexec.source_path(lab.slug).exists():
            continue
        if sample == "reference":
            nbformat.write(nbexec.source_notebook(lab.slug), labs / f"{lab.slug}.ipynb")
            continue
        notebook = nbformat.reads(released_text(REPO_ROOT / "labs" / f"{lab.slug}.ipynb"),
                                  as_version=4)
        prefix = f"{lab.slug}."
        cells = {k[len(prefix):]: v for k, v in parts.items() if k.startswith(prefix)}
        nbformat.write(fill_notebook(notebook, cells), labs / f"{lab.slug}.ipynb")
    return dest


def build_samples(folder: Path) -> Path:
    if folder.exists():
        shutil.rmtree(folder)
    for sample in SAMPLES:
        build_sample(sample, folder / sample)
    return folder


def table(records: list[dict]) -> str:
    """The sample table: automatic points per lab, total, and what explains the score."""
    labs = sorted({lab for r in records for lab in r["labs"]})
    header = ["sample", *labs, "automatic", "expected", "findings"]
    rows = []
    order = {name: i for i, name in enumerate(SAMPLES)}
    for record in sorted(records, key=lambda r: order.get(r["student_id"], 99)):
        cells = [record["student_id"]]
        for lab_id in labs:
            lab = record["labs"].get(lab_id, {})
            cells.append(f"{lab.get('auto', 0):g}/{lab.get('auto_max', 0):g}")
        findings = [finding for lab in record["labs"].values() for finding in [
            *(f for verdict in lab["items"] for f in verdict.get("findings", [])
              if f.get("scoring", True)),
            *lab.get("notebook", {}).get("findings", [])]]
        codes = list(dict.fromkeys(finding["code"] for finding in findings))
        shown = ", ".join(codes[:7]) + (", …" if len(codes) > 7 else "")
        cells += [f"{record['auto']:g}/{record['auto_max']:g}",
                  EXPECTED.get(record["student_id"], ""), shown or "-"]
        rows.append(cells)
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header) - 1)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False))
             + "  " + str(row[-1]) for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  " + "-" * 8)
    return "\n".join(lines)


def demo_folder(out: Path | None) -> Path:
    """Where the demo writes (``build/demo`` by default). A folder of one's own is used only when
    it is empty or a demo made it: the demo replaces its ``submissions/`` and ``grades/``."""
    if out is None:
        return REPO_ROOT / "build" / "demo"
    if out.exists() and any(out.iterdir()) and not (out / DEMO_MARK).exists():
        raise GradingError(bilingual(
            f"{out} no está vacía y no la creó la demo, que sustituye sus carpetas submissions/ "
            "y grades/: elige una carpeta nueva o vacía.",
            f"{out} is not empty and no demo made it; the demo replaces its submissions/ and "
            "grades/ folders: choose a new or empty folder."))
    out.mkdir(parents=True, exist_ok=True)
    (out / DEMO_MARK).write_text("minimodel-grader demo\n", encoding="utf-8")
    return out


def run_demo(out: Path | None = None, workers: int = 0, device: str = "auto") -> int:
    base = demo_folder(out)
    submissions = build_samples(base / "submissions")
    limits = Limits(wall_s=6, cpu_s=7, cell_timeout_s=60)
    summary = grade(submissions, base / "grades", Options(workers=workers, force=True,
                                                          limits=limits, device=device))
    print("\nSamples / muestras (automatic points; written answers are graded by hand):")
    print(table(summary["records"]))
    print(f"Feedback: {base / 'grades' / 'feedback'}/<sample>/feedback.{{es,en}}.html")
    print(f"run completed: {len(summary['records'])} samples graded")
    return 0
