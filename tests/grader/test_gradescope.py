"""The Gradescope bundle, run in a simulated Gradescope container where namespaces are refused.

The container is a temporary ``ROOT`` with ``source/`` (the bundle, unpacked as Gradescope does,
its ``.venv`` this checkout's), ``submission/`` and ``results/``; ``run_autograder`` runs as root
without ``CAP_SYS_ADMIN`` (``capsh --drop``), so the sandbox must take its fallback: a user of its
own, limits and file permissions. Four students hand in (right, mistaken, the stubs, hostile) and
one a damaged archive; every ``results.json`` is checked against Gradescope's documented format
(https://gradescope-autograders.readthedocs.io/en/latest/specs/).
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from pathlib import Path

import pytest

from grader.build.demo import build_sample
from grader.build.gradescope import build_bundle
from grader.hidden import registry
from grader.trusted.feedback import number
from grader.trusted.gradescope import (
    MARGIN_S,
    MEMORY_MB,
    MIN_TIMEOUT_S,
    PEAK_PSS_MB,
    ROOT_ENV,
    limits_within,
)
from grader.trusted.grading import GradingError
from grader.trusted.sandbox import Limits

pytestmark = pytest.mark.slow

VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
FORMATS = {"text", "html", "simple_format", "md", "ansi"}
TOP = {"score": (int, float), "execution_time": (int, float), "output": str,
       "output_format": str, "test_output_format": str, "test_name_format": str,
       "visibility": str, "stdout_visibility": str, "extra_data": dict, "tests": list,
       "leaderboard": list}
TEST = {"score": (int, float), "max_score": (int, float), "status": str, "name": str,
        "name_format": str, "number": str, "output": str, "output_format": str, "tags": list,
        "visibility": str, "extra_data": dict}


def schema_errors(data: dict) -> list[str]:
    """What in ``data`` breaks Gradescope's documented ``results.json`` format."""
    errors = [f"unknown or mistyped key {key}" for key, value in data.items()
              if key not in TOP or not isinstance(value, TOP[key])]
    tests = data.get("tests", [])
    if "score" not in data and not all("score" in test for test in tests):
        errors.append("no score: neither the submission's nor every test's")
    for key in ("visibility", "stdout_visibility"):
        if key in data and data[key] not in VISIBILITY:
            errors.append(f"{key} {data[key]!r}")
    if data.get("output_format", "text") not in FORMATS:
        errors.append(f"output_format {data['output_format']!r}")
    for test in tests:
        errors += [f"test {test.get('name')}: key {key}" for key, value in test.items()
                   if key not in TEST or not isinstance(value, TEST[key])]
        if test.get("visibility", "visible") not in VISIBILITY:
            errors.append(f"test {test.get('name')}: visibility {test['visibility']!r}")
        if test.get("status", "passed") not in ("passed", "failed"):
            errors.append(f"test {test.get('name')}: status {test['status']!r}")
        if test.get("output_format", "text") not in FORMATS:
            errors.append(f"test {test.get('name')}: output_format")
    return errors


def test_the_schema_check_sees_a_broken_results_file():
    assert schema_errors({"score": 1.0, "tests": [{"name": "a", "score": 1, "max_score": 1}]}) \
        == []
    assert schema_errors({"score": "10", "tests": []})
    assert schema_errors({"tests": [{"name": "a", "max_score": 1}]})
    assert schema_errors({"score": 0, "tests": [{"name": "a", "score": 0, "visibility": "all"}]})


def test_the_bundle_has_gradescopes_layout(tmp_path):
    names = build_bundle(tmp_path / "bundle.zip", ["17.01"])
    assert {"setup.sh", "run_autograder", "gradescope.json", "Makefile", "pyproject.toml"} \
        <= set(names)
    assert any(n.startswith("solutions/labs/17_01_sinusoidal/") for n in names)
    assert not any(n.startswith(("tests/", "docs_es/")) for n in names)
    with zipfile.ZipFile(tmp_path / "bundle.zip") as bundle:
        assert bundle.getinfo("run_autograder").external_attr >> 16 & 0o111
        assert json.loads(bundle.read("gradescope.json"))["labs"] == ["17.01"]


HOSTILE = '''

import ctypes as _ctypes, os as _os, sys as _sys

_libc = _ctypes.CDLL(None, use_errno=True)


def _open(path, flags):  # the C library's open(2): past the grader's Python audit hook
    fd = _libc.open(path.encode(), flags, 0o644)
    if fd < 0:
        raise OSError(_ctypes.get_errno(), path)
    return fd


def _attempt(what, path, flags, data=b""):
    try:
        fd = _open(path, flags)
        if data:
            _os.write(fd, data)
        _os.close(fd)
        return f"{{what}}: done"
    except OSError as error:
        return f"{{what}}: {{type(error).__name__}} {{error.errno}}"


_said = [
    _attempt("references", {references!r}, _os.O_RDONLY),
    _attempt("results", {results!r}, _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC,
             b'{{"score": 1000, "tests": []}}'),
    _attempt("submission", {submission!r}, _os.O_RDONLY | _os.O_DIRECTORY),
]
if _os.fork() == 0:  # a process left behind, out of the process group
    _os.setsid()
    _os.execv(_sys.executable, [_sys.executable, "-c",
                                "import time; time.sleep(300)  # {marker}"])
_fd = _open(_os.path.join({dropbox!r}, "said-%d" % _os.getpid()),
            _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL)
_os.write(_fd, "\\n".join(_said).encode())
_os.close(_fd)
'''


def _alive(marker: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(entry.name)
        except OSError:
            continue
    return found


def _environment(python: str, venv: Path) -> None:
    """What ``setup.sh`` makes: a virtual environment on a system-wide Python (one any user may
    run, as in Gradescope's image), its packages this checkout's (linked, not installed)."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    (packages,) = venv.glob("lib/python*/site-packages")
    packages.rmdir()
    packages.symlink_to(Path(site.getsitepackages()[0]))


def _tree_pss_mib(root_pid: int) -> float:
    """The proportional set size of ``root_pid`` and all its descendants together, in MiB: the
    memory a container of that process tree is charged for, shared pages split fairly."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        total += sum(int(line.split()[1]) for line in rollup.splitlines()
                     if line.startswith("Pss:"))
    return total / 1024


def _run_watched(command: list[str], env: dict) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``command``; return it done and the peak of its process tree's PSS (MiB)."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    peak = [0.0]

    def watch() -> None:
        while process.poll() is None:
            peak[0] = max(peak[0], _tree_pss_mib(process.pid))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    stdout, stderr = process.communicate(timeout=900)
    watcher.join()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr), peak[0]


def _container(labs: list[str] | None, **options):
    """``run(name, fill)``: a fresh simulated container (the bundle of ``labs``, every lab for
    ``None``) whose ``submission/`` ``fill`` writes; returns ``(results.json, stdout, the
    process tree's peak PSS in MiB)`` of ``run_autograder`` there."""
    if os.geteuid() != 0 or not shutil.which("capsh"):
        pytest.skip("the fallback isolation needs root and capsh (libcap2-bin) to drop "
                    "CAP_SYS_ADMIN, as Gradescope's containers may")
    python = shutil.which(f"python{sys.version_info.major}.{sys.version_info.minor}",
                          path="/usr/bin:/usr/local/bin")
    if not python:
        pytest.skip("no system-wide Python of this version for the sandbox's user to run")
    base = Path(tempfile.mkdtemp(prefix="mmg-gradescope-test-", dir="/tmp"))
    os.chmod(base, 0o755)  # as /autograder: a folder anyone may pass through
    build_bundle(base / "bundle.zip", labs, **options)

    def run(name: str, fill) -> tuple[dict, str]:
        root = base / name
        for folder in ("source", "submission", "results"):
            (root / folder).mkdir(parents=True)
        with zipfile.ZipFile(base / "bundle.zip") as bundle:
            bundle.extractall(root / "source")
        _environment(python, root / "source" / ".venv")
        fill(root)
        done, peak = _run_watched(
            ["capsh", "--drop=cap_sys_admin", "--", "-c",
             f"bash {root / 'source' / 'run_autograder'}"], {**os.environ, ROOT_ENV: str(root)})
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        data = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
        assert schema_errors(data) == []
        return data, done.stdout + done.stderr, peak

    yield run
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def container():
    """The container of a bundle of lab 17.01 (see :func:`_container`)."""
    yield from _container(["17.01"])


@pytest.fixture(scope="module")
def full_container():
    """The container of the whole course's bundle (see :func:`_container`)."""
    yield from _container(None)


def _sample(sample: str):
    return lambda root: build_sample(sample, root / "submission")


def test_right_mistaken_and_stub_submissions_score_in_order(container):
    scores, results = {}, {}
    for sample in ("reference", "buggy", "stubs"):
        data, said, _ = container(sample, _sample(sample))
        assert "isolation / aislamiento: unprivileged user and permissions" in said
        assert data["extra_data"]["isolation"] == "unprivileged user and permissions"
        assert data["score"] == sum(test["score"] for test in data["tests"])
        assert "[es]" in data["output"] or "Corrección" in data["output"]
        assert "Grading report" in data["output"]  # the feedback in both languages
        scores[sample] = data["score"]
        results[sample] = [(t["name"], t["score"], t["output"]) for t in data["tests"]]
        maximum = sum(test["max_score"] for test in data["tests"])
    assert scores["reference"] == maximum > scores["buggy"] > scores["stubs"] == 0
    again = container("buggy-again", _sample("buggy"))[0]["tests"]
    assert [(t["name"], t["score"], t["output"]) for t in again] == results["buggy"]
    failed = [t for t in again if t["score"] < t["max_score"]]
    assert failed and all(t["output"].startswith("[es] ") for t in failed if t["output"])


def test_a_hostile_submission_gets_nothing_it_should_not(container):
    dropbox = tempfile.mkdtemp(prefix="mmg-dropbox-", dir="/tmp")  # the sandbox can write here
    os.chmod(dropbox, 0o1777)
    marker = f"mmg-left-behind-{uuid.uuid4().hex}"
    try:
        def fill(root: Path) -> None:
            build_sample("stubs", root / "submission")
            module = root / "submission" / "src" / "minimodel" / "positional" / "sinusoidal.py"
            references = root / "source" / "solutions" / "labs" / "17_01_sinusoidal"
            module.write_text(module.read_text() + HOSTILE.format(
                references=str(references / "references.npz"),
                results=str(root / "results" / "results.json"),
                submission=str(root / "submission"), marker=marker, dropbox=dropbox))

        data, said, _ = container("hostile", fill)
        reports = [p.read_text() for p in Path(dropbox).iterdir()]
        assert reports, "the hostile module never ran"
        for report in reports:
            assert report.splitlines() == ["references: PermissionError 13",
                                           "results: PermissionError 13",
                                           "submission: PermissionError 13"]
        assert data["score"] == 0 and "1000" not in json.dumps(data)
        assert not _alive(marker), "a process the submission left is still running"
    finally:
        shutil.rmtree(dropbox, ignore_errors=True)


def test_a_flagged_submission_scores_zero_and_says_why(container):
    def fill(root: Path) -> None:
        (root / "submission" / "submission.zip").write_bytes(b"PK\x03\x04 this is not a zip")

    data, _, _ = container("flagged", fill)
    assert data["score"] == 0 and data["extra_data"]["status"].startswith("flagged")
    assert "Submission flagged: score 0" in data["output"]
    assert "Entrega marcada" in data["output"]


def test_a_correct_submission_gets_every_point_within_the_memory(full_container):
    """The whole course's bundle on a correct submission, graded twice in a row: every item has
    its full points each time (as on one machine; before the kernels were ended in order, every
    run of this bundle lost some, on the probe groups that followed a notebook), the two
    results.json agree item by item, the feedback's maximum is results.json's, and the
    container's process tree stays within Gradescope's default memory. The 17.01 bundle's
    mistaken submission and the 17.03 bundle's endless loop are graded twice too."""
    runs = [full_container(f"reference-{n}", _sample("reference")) for n in range(2)]
    for data, _, peak in runs:
        maximum = sum(test["max_score"] for test in data["tests"])
        assert {test["name"].split(" ")[0] for test in data["tests"]} == set(registry())
        lost = [(t["name"], t["score"], t["output"][-300:]) for t in data["tests"]
                if t["score"] != t["max_score"]]
        assert lost == [] and data["score"] == maximum
        assert f"Total: {number(maximum)} / {number(maximum)} (" in data["output"]
        assert "· by hand" not in data["output"]  # written answers: Gradescope's own questions
        assert peak <= MEMORY_MB, f"the process tree peaked at {peak:.0f} MiB"
        assert 0.8 * peak <= PEAK_PSS_MB, \
            f"the figure instructors read ({PEAK_PSS_MB} MiB) is far from the measured {peak:.0f}"
    first, second = ([(t["name"], t["score"], t["output"]) for t in data["tests"]]
                     for data, _, _ in runs)
    assert first == second


@pytest.fixture(scope="module")
def rope_container():
    """The container of a bundle of lab 17.03 whose time-out is the shortest the bundle takes."""
    yield from _container(["17.03"], timeout_s=MIN_TIMEOUT_S)


def _looping_rope(root: Path) -> None:
    """The reference, with an ``apply_rotary`` that never returns."""
    build_sample("reference", root / "submission")
    rope = root / "submission" / "src" / "minimodel" / "positional" / "rope.py"
    head, tail = rope.read_text(encoding="utf-8").split("def apply_rotary(", 1)
    signature, body = tail.split(":\n", 1)
    rope.write_text(f"{head}def apply_rotary({signature}:\n    while True:\n        pass\n{body}",
                    encoding="utf-8")


def test_an_endless_loop_gets_its_results_within_the_time_out_the_same_every_run(rope_container):
    runs = [rope_container(f"loop-{n}", _looping_rope) for n in range(2)]
    for data, _, _ in runs:
        assert data["execution_time"] < MIN_TIMEOUT_S
        assert 0 < data["score"] < sum(test["max_score"] for test in data["tests"])
        assert "apply_rotary" in data["output"]  # named once, at the top of the feedback
    first, second = (data for data, _, _ in runs)
    assert [(t["name"], t["score"], t["output"]) for t in first["tests"]] == \
        [(t["name"], t["score"], t["output"]) for t in second["tests"]]


def test_the_trusted_side_loads_no_pytorch():
    """What keeps the grading process small: it judges from NumPy arrays, reads the hidden
    inputs stored with the references, and never imports PyTorch (only the sandbox does)."""
    check = ("import sys\n"
             "from grader.hidden import registry\n"
             "from grader.trusted import grading, gradescope, student\n"
             "from grader.trusted.references import References\n"
             "for lab_id, checks in registry().items():\n"
             "    student._lab_data(lab_id)\n"
             "    References(lab_id).stale(checks)\n"
             "from grader.trusted.redact import known_name\n"
             "assert known_name('bfloat16') and known_name('torch.float8_e4m3fn')\n"
             "print(sorted(m for m in sys.modules\n"
             "             if m.split('.')[0] in ('torch', 'transformers')))")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_time_out_sets_the_budgets_and_a_short_one_is_refused(tmp_path):
    limits = limits_within(600)
    assert limits.student_wall_s == 600 - MARGIN_S
    assert limits.student_cpu_s <= limits.student_wall_s / 2
    assert limits_within(2400).student_cpu_s == Limits().student_cpu_s  # never above the default
    with pytest.raises(GradingError, match=r"\[en\].*too short"):
        build_bundle(tmp_path / "bundle.zip", ["17.01"], timeout_s=100)
    names = build_bundle(tmp_path / "bundle.zip", ["17.01"], timeout_s=900)
    with zipfile.ZipFile(tmp_path / "bundle.zip") as bundle:
        assert json.loads(bundle.read("gradescope.json"))["timeout_s"] == 900
        setup = bundle.read("setup.sh").decode()
    assert "setup.sh" in names and "900 s" in setup and f"{MEMORY_MB} MB" in setup
