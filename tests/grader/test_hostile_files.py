"""What a submission leaves behind, and what it says, graded in the same run as honest classmates.

One class (lab 17.01) is graded twice: the honest students alone, then the same students with
submissions that attack what the trusted side reads (the notebook kernel's log replaced by a FIFO
or by links to ``/etc/shadow``, to the lab's ``references.json`` and to ``/dev/zero``; its
``records`` folder replaced by a link to a classmate's records), that try to carry hidden inputs
out through the feedback (an exception class, a ``SyntaxError``'s line, the exit code, a dtype,
digits written as words, the size of an error, IPython's input history), and archives (a
``.tar.gz``, a zip with a name twice, a zip of nested zips). The honest rows must be
byte-identical, each attacker scores like the stub or is flagged with a reason, the run finishes,
and nothing is left outside the output folder.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import warnings
import zipfile
from contextlib import redirect_stderr
from pathlib import Path

import numpy as np
import pytest
from conftest import TEST_LIMITS
from grader_corpus import (
    REFERENCE,
    REFERENCE_FORWARD,
    REFERENCE_PE,
    ZEROS_FORWARD,
    ZEROS_PE,
    Entry,
    findings,
    module_score,
    notebook_score,
    solved_cells,
    stub_with,
    temporary_files_in,
)
from test_archive_limits import nested_bomb

from grader.hidden import registry
from grader.trusted import gradebook
from grader.trusted.grading import Options, grade
from grader.trusted.references import References
from minimodel.implementation import REPO_ROOT

pytestmark = pytest.mark.slow

LAB = "17.01"
MODULE = "src/minimodel/positional/sinusoidal.py"
REFERENCES_JSON = REPO_ROOT / "solutions" / "labs" / "17_01_sinusoidal" / "references.json"
WORDS = ["alfa", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliett"]


def honest() -> list[Entry]:
    return [Entry("honest", REFERENCE, cells=solved_cells()),
            Entry("honest_stub", REFERENCE, stub_notebook=True),
            Entry("honest_zeros", stub_with(ZEROS_PE, ZEROS_FORWARD))]


def kernel_attack(name: str, code: str) -> Entry:
    """The reference module, the released notebook with ``code`` as its first solution cell."""
    return Entry(name, REFERENCE, cells={"shift-matrix": code})


def relink(target: str) -> str:
    return (f"import os\nos.remove('kernel-output.log')\n"
            f"os.symlink({target!r}, 'kernel-output.log')\n")


def attackers(planted: Path) -> list[Entry]:
    return [
        kernel_attack("log_fifo", "import os\nos.remove('kernel-output.log')\n"
                                  "os.mkfifo('kernel-output.log')\n"),
        kernel_attack("log_shadow", relink("/etc/shadow")),
        kernel_attack("log_references", relink(str(REFERENCES_JSON))),
        kernel_attack("log_zero", relink("/dev/zero")),
        kernel_attack("records_link", "import os, shutil\nshutil.rmtree('records')\n"
                                      f"os.symlink({str(planted)!r}, 'records')\n"),
        kernel_attack("input_history", "raise ValueError(next(c for c in _ih if 'lambda' in c))"),
        Entry("leak_class", stub_with(
            'name = "Leak" + "".join(chr(65 + int(c)) for c in f"{T}{d}")\n'
            "raise type(name, (Exception,), {})()\n", REFERENCE_FORWARD)),
        Entry("leak_line", stub_with(
            'raise SyntaxError("bad", ("sinusoidal.py", 700000 + 1000 * T + d, 1, "x"))\n',
            REFERENCE_FORWARD)),
        Entry("leak_exit", stub_with("import os\nos._exit(T % 200 + 20)\n", REFERENCE_FORWARD)),
        Entry("leak_dtype", stub_with(REFERENCE_PE, (
            "class _Leaky(torch.Tensor):\n"
            "    @property\n"
            "    def dtype(self):\n"
            '        return "leakdtype" + "".join(chr(97 + int(c)) for c in str(x.shape[-2]))\n'
            "return torch.Tensor._make_subclass(_Leaky, x + self.pe[offset : offset + "
            "x.shape[-2]].to(x.dtype))\n"))),
        Entry("leak_words", stub_with(
            f"words = {WORDS!r}\n"
            'raise ValueError(" ".join(words[int(c)] for c in f"{T}{d}"))\n',
            REFERENCE_FORWARD)),
        Entry("leak_error", stub_with(REFERENCE_PE.replace("return pe",
                                                           "return pe + np.float32(T / 1000)"),
                                      REFERENCE_FORWARD)),
    ]


def archives(folder: Path) -> None:
    """A ``.tar.gz`` of honest work, a zip with one name twice, a zip of nested zips."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        info = tarfile.TarInfo(f"repo/{MODULE}")
        info.size = len(REFERENCE.encode())
        archive.addfile(info, io.BytesIO(REFERENCE.encode()))
    (folder / "tar_honest.tar.gz").write_bytes(buffer.getvalue())
    with zipfile.ZipFile(folder / "twice.zip", "w") as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile's "Duplicate name": the point here
        archive.writestr(MODULE, stub_with(ZEROS_PE, ZEROS_FORWARD))
        archive.writestr(MODULE, REFERENCE)
    nested_bomb(folder / "bomb.zip")


def plant_records(folder: Path) -> Path:
    """A classmate's records of lab 17.01, as the recorder writes them: the reference's values,
    which score full marks."""
    refs = References(LAB)
    for cell in registry()[LAB].notebook.cells:
        base = folder / cell.grade_id
        base.mkdir(parents=True)
        record = {}
        for name, outputs in refs.cell(cell.grade_id).items():
            metas = []
            for index, output in enumerate(outputs):
                meta = {k: list(v) if k == "shape" else v for k, v in output.items()
                        if k != "array"}
                if output.get("array") is not None:
                    np.save(base / f"{name}_{index}.npy", output["array"])
                    meta["file"] = f"{name}_{index}.npy"
                metas.append(meta)
            record[name] = {"ok": True, "outputs": metas}
        (base / "record.json").write_text(json.dumps(record))
    return folder


def graded(folder: Path, entries: list[Entry], extra=None) -> dict:
    subs = folder / "subs"
    subs.mkdir(parents=True)
    for entry in entries:
        entry.build(subs)
    if extra:
        extra(subs)
    log = io.StringIO()
    with redirect_stderr(log):
        summary = grade(subs, folder / "out", Options(workers=2, labs=[LAB], limits=TEST_LIMITS,
                                                      progress=False), stream=log)
    out = folder / "out"
    return {"summary": summary, "out": out, "log": log.getvalue(),
            "records": {r["student_id"]: r for r in gradebook.load_records(out)},
            "rows": {line.split(",", 1)[0]: line for line in
                     (out / "grades.csv").read_text(encoding="utf-8").splitlines()}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, capabilities):
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    root = tmp_path_factory.mktemp("hostile-files")
    planted = plant_records(root / "classmate" / "records")
    alone = graded(root / "alone", honest())
    temporary = root / "tmp"
    temporary.mkdir()
    with temporary_files_in(temporary):
        mixed = graded(root / "mixed", honest() + attackers(planted), archives)
    return {"alone": alone, "mixed": mixed, "temporary": temporary}


def feedback(run: dict, student: str) -> str:
    folder = run["out"] / "feedback" / student
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("feedback.*.md")))


def test_the_run_finishes_and_leaves_nothing_outside_its_output(runs):
    mixed = runs["mixed"]
    assert mixed["summary"]["failed"] == [] and "run completed" in mixed["log"]
    assert len(mixed["records"]) == len(honest()) + len(attackers(Path("/x"))) + 3
    assert list(runs["temporary"].iterdir()) == []  # no scratch folder, no spooled archive


def test_honest_classmates_are_graded_as_if_alone(runs):
    for entry in honest():
        assert runs["mixed"]["rows"][entry.name] == runs["alone"]["rows"][entry.name]
        assert feedback(runs["mixed"], entry.name) == feedback(runs["alone"], entry.name)
    assert notebook_score(runs["alone"]["records"]["honest"]) == 9


@pytest.mark.parametrize("name", ["log_fifo", "log_shadow", "log_references", "log_zero",
                                  "records_link"])
def test_what_the_kernel_left_is_never_followed(runs, name):
    records = runs["mixed"]["records"]
    # like the stub at best (records_link also lost the records its link replaced)
    assert notebook_score(records[name]) <= notebook_score(records["honest_stub"]), name
    assert "unsafe-output" in findings(records[name])
    log = (runs["mixed"]["out"] / "logs" / f"{name}.log").read_bytes()
    assert len(log) < 1 << 20  # not /dev/zero's
    assert b"root:" not in log  # not /etc/shadow's
    assert b'"mistakes"' not in log and b"sinusoidal_pe" not in log  # not the references'


@pytest.mark.parametrize(("name", "leaked"), [
    ("leak_class", r"Leak"), ("leak_line", r"\d{6}"), ("leak_exit", r"exit code|código de salida"),
    ("leak_dtype", r"leakdtype"), ("leak_words", "|".join(WORDS)),
    ("leak_error", r"largest error|error máximo"),
    ("input_history", r"__minimodel_record|lambda|base=")])
def test_no_hidden_input_reaches_the_feedback(runs, name, leaked):
    text = feedback(runs["mixed"], name)
    assert text and not re.search(leaked, text), re.search(leaked, text)


def test_the_feedback_still_says_what_happened(runs):
    records = runs["mixed"]["records"]
    assert "a class defined in your code" in feedback(runs["mixed"], "leak_class")
    assert "with an error code" in feedback(runs["mixed"], "leak_exit")
    assert "values" in findings(records["leak_error"])


def test_archives_are_graded_like_zips_or_flagged_with_a_reason(runs):
    records = runs["mixed"]["records"]
    assert module_score(records["tar_honest"]) == module_score(records["honest"]) == 9
    assert records["tar_honest"]["status"] != "flagged" and not \
        records["tar_honest"]["status"].startswith("flagged")
    assert records["twice"]["status"] == "flagged: duplicate-entry"
    assert module_score(records["twice"]) == 9  # the last copy, as unzip leaves it
    assert records["bomb"]["status"].startswith("flagged: ") and \
        "too-much-data" in records["bomb"]["status"]
