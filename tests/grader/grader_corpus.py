"""Submissions for the grader's tests: honest ones, buggy ones, and a corpus of hostile ones.

Each entry builds a student's copy of the repository (only the files the grader takes) and says
what its module items of lab 17.01 must score (9 points in all), or which other submission it
must score exactly like (a cheat must gain nothing over the same code without the cheat).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from grader.build.demo import fill_notebook, fill_stub
from grader.build.sync import released_text
from grader.trusted import nbexec
from minimodel.implementation import REFERENCE_DIR, REPO_ROOT, STUBS_DIR

SLUG = "17_01_sinusoidal"
MODULE_POINTS = 9
REFERENCE = (REFERENCE_DIR / "sinusoidal.py").read_text(encoding="utf-8")
STUB = released_text(STUBS_DIR / "sinusoidal.py")
MARKER = "987654321"  # in the command line of processes that must not survive


def stub_with(pe: str | None = None, forward: str | None = None, module: str = "") -> str:
    bodies = {}
    if pe is not None:
        bodies["sinusoidal_pe"] = pe
    if forward is not None:
        bodies["SinusoidalPositionalEncoding.forward"] = forward
    return fill_stub(STUB, bodies, module)


REFERENCE_PE = """\
inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
angles = np.arange(T, dtype=np.float64)[:, None] * inv_freq[None, :]
pe = np.empty((T, d), dtype=np.float32)
pe[:, 0::2] = np.sin(angles)
pe[:, 1::2] = np.cos(angles)
return pe
"""
REFERENCE_FORWARD = """\
rows = self.pe[offset : offset + T].to(device=x.device, dtype=x.dtype)
return x + rows
"""
ZEROS_PE = "return np.zeros((T, d), dtype=np.float32)\n"
ZEROS_FORWARD = "return x.clone()\n"


@dataclass
class Entry:
    name: str
    module: str | bytes | None = None  # sinusoidal.py
    cells: dict[str, str] | None = None  # solution cells of the notebook (None: no notebook)
    stub_notebook: bool = False  # submit the released notebook untouched
    score: float | None = None  # expected module points
    same_as: str | None = None  # ...or exactly the score of this entry
    zip: bool = False
    extra: dict[str, bytes] = field(default_factory=dict)  # more files (zip: raw names)
    link_module_to: Path | None = None  # sinusoidal.py is a symbolic link to this path

    def build(self, folder: Path) -> Path:
        files: dict[str, bytes] = {}
        if self.module is not None:
            data = self.module if isinstance(self.module, bytes) else self.module.encode()
            files["src/minimodel/positional/sinusoidal.py"] = data
        if self.cells is not None or self.stub_notebook:
            notebook = nbformat.reads(released_text(REPO_ROOT / "labs" / f"{SLUG}.ipynb"),
                                      as_version=4)
            notebook = fill_notebook(notebook, self.cells or {})
            files[f"labs/{SLUG}.ipynb"] = nbformat.writes(notebook).encode()
        files.update(self.extra)
        if self.zip:
            path = folder / f"{self.name}.zip"
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as archive:
                for name, data in files.items():
                    archive.writestr(f"{self.name}-main/{name}" if not name.startswith(
                        ("/", "..")) else name, data)
                if self.link_module_to is not None:
                    info = zipfile.ZipInfo(f"{self.name}-main/src/minimodel/positional/"
                                           "sinusoidal.py")
                    info.external_attr = (0o120777 << 16)
                    archive.writestr(info, str(self.link_module_to))
            path.write_bytes(buffer.getvalue())
            return path
        root = folder / self.name
        for name, data in files.items():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if self.link_module_to is not None:
            target = root / "src/minimodel/positional/sinusoidal.py"
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(self.link_module_to, target)
        return root


def solved_cells() -> dict[str, str]:
    """The solution cells of the solved lab source, by grade_id."""
    source = nbexec.source_notebook(SLUG)
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in source.cells
            if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"}


TRANSPOSED_SHIFT = '''\
def shift_matrix(delta: int, d: int, base: float = 10000.0) -> np.ndarray:
    omega = base ** (-np.arange(0, d, 2) / d)
    c, s = np.cos(delta * omega), np.sin(delta * omega)
    m = np.zeros((d, d))
    m[0::2, 0::2] = np.diag(c)
    m[0::2, 1::2] = np.diag(-s)
    m[1::2, 0::2] = np.diag(s)
    m[1::2, 1::2] = np.diag(c)
    return m
'''


def corpus(out_dir: Path) -> list[Entry]:
    """Every submission of the grader's tests (``out_dir``: where the run writes)."""
    solved = solved_cells()
    noisy_cells = {k: "import sys, warnings\nprint('ruido ' * 50000)\n"
                      "sys.stderr.write('stderr ' * 20000)\n"
                      "warnings.warn('aviso', UserWarning)\n" + v for k, v in solved.items()}
    repo = str(REPO_ROOT)
    entries = [
        Entry("reference", REFERENCE, score=MODULE_POINTS),
        Entry("noisy", stub_with(
            "import sys, warnings\nprint('x' * 2_000_000)\nsys.stderr.write('e' * 500_000)\n"
            "warnings.warn('a warning / un aviso', RuntimeWarning)\n" + REFERENCE_PE,
            "print('forward', x.shape)\nwarnings.warn('again')\nT = x.shape[-2]\n"
            + REFERENCE_FORWARD, module="import warnings\nprint('y' * 1_000_000)\n"),
            same_as="reference"),
        Entry("zeros", stub_with(ZEROS_PE, ZEROS_FORWARD), score=1),
        Entry("hardcoded", stub_with(
            "if (T, d, base) in ((64, 32, 10000.0), (5, 6, 100.0), (7, 32, 10000.0)):\n"
            + "\n".join("    " + line for line in REFERENCE_PE.splitlines()) + "\n"
            + ZEROS_PE, ZEROS_FORWARD), same_as="zeros"),  # the visible cases only
        Entry("monkeypatch", stub_with(ZEROS_PE, ZEROS_FORWARD, module=(
            "np.allclose = lambda *a, **k: True\n"
            "np.array_equal = lambda *a, **k: True\n"
            "np.isclose = lambda a, b, **k: np.ones(np.shape(a), bool)\n"
            "np.testing.assert_allclose = lambda *a, **k: None\n"
            "torch.allclose = lambda *a, **k: True\n"
            "torch.equal = lambda *a, **k: True\n"
            "torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)\n"
            "import builtins\nbuiltins.abs = lambda value: 0\n")), same_as="zeros"),
        Entry("liar", stub_with(
            "return np.zeros((T, d), dtype=np.float32).view(_Liar)\n", ZEROS_FORWARD, module=(
                "class _Liar(np.ndarray):\n"
                "    def __eq__(self, other):\n"
                "        return np.ones(np.shape(other), dtype=bool)\n"
                "    def __array__(self, dtype=None, copy=None):\n"
                "        return np.ones(self.shape, dtype=np.float32)\n"
                "    def tobytes(self, order='C'):\n"
                "        return b''\n")), score=0),
        Entry("infinite_loop", stub_with("while True:\n    pass\n", REFERENCE_FORWARD), score=0),
        Entry("sigterm_ignored", stub_with(
            "import signal, time\nfor sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n"
            "    signal.signal(sig, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.01)\n",
            REFERENCE_FORWARD), score=0),
        Entry("memory_hog", stub_with(
            "blocks = []\nwhile True:\n    blocks.append(np.zeros(2**26))\n", REFERENCE_FORWARD),
            score=0),
        Entry("exit_at_import", REFERENCE + "\nimport sys\nsys.exit(0)\n", score=0),
        Entry("os_exit_at_import", REFERENCE + "\nimport os\nos._exit(0)\n", score=0),
        Entry("segfault", stub_with("import ctypes\nctypes.string_at(0)\n", REFERENCE_FORWARD),
              score=0),
        Entry("steal_solutions", STUB + f'''
import glob, os
_found = None
for _path in ["{repo}/solutions/positional/sinusoidal.py",
              "../../../../../solutions/positional/sinusoidal.py",
              *glob.glob("/work/*/solutions/positional/sinusoidal.py")]:
    try:
        _found = open(_path).read()
        print("STOLEN", _path)
        break
    except OSError as _error:
        print("REFUSED", _path, _error)
if _found:
    exec(_found)
try:
    _refs = np.load("{repo}/solutions/labs/17_01_sinusoidal/references.npz")
    print("STOLEN references", len(_refs.files))
except OSError as _error:
    print("REFUSED references", _error)
''', score=0),
        Entry("steal_other_student", STUB + '''
import glob, os
_own = os.path.realpath(__file__).split("/course/")[0]  # its own scratch folder
for _path in glob.glob("/tmp/mmg-run-*/*/course/src/minimodel/positional/sinusoidal.py"):
    if os.path.realpath(_path).startswith(_own + "/"):
        continue  # its own copy
    try:
        _text = open(_path).read()
        if "np.sin(angles)" in _text:
            print("STOLEN", _path)
            exec(_text)
            break
    except OSError as _error:
        print("REFUSED", _path, _error)
print("LISTED", glob.glob("/tmp/*"))
''', score=0),
        Entry("write_gradebook", STUB + f'''
import glob, os
_own = os.path.realpath(__file__).split("/course/")[0]  # its own scratch folder
for _path in ["{out_dir}/grades.csv", "{out_dir}/records/reference.json",
              "{out_dir}/records/zzz-forged.json", "{out_dir}/feedback/reference/feedback.en.md",
              *[p for p in glob.glob("/tmp/mmg-run-*/*/items/*/case_000.json")
                if not os.path.realpath(p).startswith(_own + "/")]]:
    try:
        with open(_path, "a") as _handle:
            _handle.write("HACKED")
        print("WROTE", _path)
    except OSError as _error:
        print("REFUSED", _path, _error)
''', score=0),
        Entry("background", REFERENCE + f'''
import os, subprocess
subprocess.Popen(["sleep", "{MARKER}"], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    os.setsid()
    os.execvp("sleep", ["sleep", "{MARKER}"])
''', same_as="reference"),
        Entry("output_flood", REFERENCE + "\nimport sys\nfor _ in range(1000):\n"
              "    sys.stdout.write('flood ' * 10000)\n    sys.stderr.write('err ' * 2500)\n",
              same_as="reference"),
        Entry("network", REFERENCE + '''
import socket
for _host in ("1.1.1.1", "8.8.8.8", "93.184.216.34"):
    try:
        socket.create_connection((_host, 53), timeout=2)
        print("CONNECTED", _host)
    except OSError as _error:
        print("NO NETWORK", _host, _error)
''', same_as="reference"),
        Entry("probe", REFERENCE + f'''
import os
print("UID", os.getuid(), "GID", os.getgid())
print("REPO", sorted(os.listdir("{repo}")) if os.path.isdir("{repo}") else "absent")
print("PIDS", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
print("TMP", os.listdir("/tmp"))
_run = [name for name in os.listdir("/tmp") if name.startswith("mmg-run-")]
print("SCRATCH", os.listdir("/tmp/" + _run[0]) if _run else [])
''', same_as="reference"),
        Entry("syntax_error", REFERENCE.replace("    require_int(\"T\", T, 0)",
                                                "    require_int(\"T\", T, 0) +* 2", 1),
              score=0),
        Entry("not_utf8", REFERENCE.encode("latin-1", "replace"), score=0),
        Entry("huge_file", REFERENCE + "\n# " + "x" * (3 << 20) + "\n", score=0),
        Entry("zip_slip", REFERENCE, zip=True, extra={
            "../../escaped_by_zip_slip.txt": b"escaped", "/tmp/absolute_by_zip_slip.txt": b"x"},
            same_as="reference"),
        Entry("zip_symlink", None, zip=True,
              link_module_to=REFERENCE_DIR / "sinusoidal.py", score=0),
        Entry("symlink_out", None, link_module_to=REFERENCE_DIR / "sinusoidal.py", score=0),
        # Notebooks
        Entry("nb_reference", REFERENCE, cells=solved, same_as="reference"),
        Entry("nb_noisy", REFERENCE, cells=noisy_cells, same_as="reference"),
        Entry("nb_stub", REFERENCE, stub_notebook=True, same_as="reference"),
        Entry("nb_transposed", REFERENCE, cells={**solved, "shift-matrix": TRANSPOSED_SHIFT},
              same_as="reference"),
        Entry("nb_locked_edit", REFERENCE, cells={
            **solved, "shift-matrix": TRANSPOSED_SHIFT,
            "test-shift": "pass  # asserts removed",
            "test-table": "assert True",
            "shift-check": "M = shift_matrix(-5, 32)  # edited locked cell",
        }, same_as="reference"),
        Entry("nb_kernel_exit", REFERENCE, cells={
            **solved, "dots": "import os\nos._exit(0)\n"}, same_as="reference"),
    ]
    return entries


def shared_dir(tmp_path_factory) -> Path:
    """A folder all xdist workers of this run share (a private one without xdist)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    base = tmp_path_factory.getbasetemp()
    return (base.parent / f"grader-{run}") if run else (base / "grader-shared")


# --- reading results ---------------------------------------------------------------------------

def module_score(record: dict) -> float:
    items = record["labs"]["17.01"]["items"]
    return round(sum(v["score"] or 0 for v in items if not v["key"].startswith("nb/")), 2)


def notebook_score(record: dict) -> float:
    items = record["labs"]["17.01"]["items"]
    return round(sum(v["score"] or 0 for v in items if v["key"].startswith("nb/")), 2)


def findings(record: dict) -> set[str]:
    codes = {m["code"] for m in record.get("messages", [])}
    for lab in record["labs"].values():
        codes |= {f["code"] for v in lab["items"] for f in v.get("findings", [])}
        codes |= {f["code"] for f in lab.get("notebook", {}).get("findings", [])}
    return codes


def output_heads(record: dict) -> str:
    return "\n".join(v["instructor"].get("output_head") or "" for lab in record["labs"].values()
                     for v in lab["items"])


@contextmanager
def temporary_files_in(folder: Path):
    """Every temporary file and scratch folder of the run (this process and its workers) in
    ``folder``."""
    saved = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(folder)
    tempfile.tempdir = None
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TMPDIR")
        else:
            os.environ["TMPDIR"] = saved
        tempfile.tempdir = None


# Unpacks the archive named on the command line in a fresh interpreter and prints its peak memory
# (VmHWM: this process's own; ru_maxrss keeps the parent's across exec), flags and files as JSON
UNPACK_PEAK = """
import json, sys
from pathlib import Path
from grader.trusted.unpack import unpack
submission = unpack("s", Path(sys.argv[1]))
status = Path("/proc/self/status").read_text().splitlines()
kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"mib": kib / 1024, "flags": [f.code for f in submission.flags],
                  "files": sorted(submission.files)}))
"""


def unpack_peak(path: Path) -> dict:
    """``UNPACK_PEAK`` run on ``path``: {"mib", "flags", "files"}."""
    done = subprocess.run([sys.executable, "-c", UNPACK_PEAK, str(path)], capture_output=True,
                          text=True, timeout=600, check=True, cwd=REPO_ROOT)
    return json.loads(done.stdout)


def graded_class(root: Path, entries: list[Entry], limits) -> dict:
    """``entries`` built in ``root/subs`` and graded on lab 17.01 at one worker under
    ``limits``: the run's summary, its output folder, grades.csv's rows and the records by
    student."""
    from grader.trusted.grading import Options, grade

    subs = root / "subs"
    subs.mkdir(parents=True)
    for entry in entries:
        entry.build(subs)
    summary = grade(subs, root / "out", Options(workers=1, limits=limits, progress=False,
                                                labs=["17.01"]), stream=io.StringIO())
    rows = (root / "out" / "grades.csv").read_text(encoding="utf-8").splitlines()
    return {**summary, "out": root / "out", "rows": {row.split(",")[0]: row for row in rows[2:]},
            "records": {r["student_id"]: r for r in summary["records"]}}

