"""The trusted side of the sandbox: scratch folders, the view and limits, the platform probe.

For each submission the grader builds a scratch folder holding only what the child may see: a
pristine copy of the given course code (``course/src/minimodel``) with the student's encoding
files dropped into ``positional/``, the sandbox's own code (``runner/``, copied from
``grader/child``), the hidden inputs of each lab, and an empty ``items/`` folder. Inside the
sandbox everything else that matters is covered (see :func:`filesystem_view`): the repository
with its solutions, hidden checks and reference outputs, the submissions, the grader's output,
other scratch folders, ``/tmp``.

What the platform can enforce is found once per run by :func:`probe_capabilities`, which tries
each mechanism for real; :meth:`Capabilities.report` is what the grader prints at start-up. The
processes that run the sandboxed code are in ``grader.trusted.forkservers``; what they write is
read by ``grader.trusted.safe_io``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import site
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grader.child import cgroup, isolation
from grader.child.probe_runner import GIVEN_CODE_MAY_IMPORT, forbidden
from grader.trusted.redact import Sources
from minimodel.implementation import PACKAGE_DIR, REPO_ROOT

CHILD_DIR = Path(__file__).resolve().parent.parent / "child"
CHILD_FILES = ("isolation.py", "cgroup.py", "zygote.py", "probe_runner.py", "kernel_jail.py",
               "recorder.py", "warmup.py")
# The system folders a Python process needs; every other top-level folder (home folders, other
# checkouts of the course, /tmp, /srv, /work, ...) is covered. Python itself is bound back.
SYSTEM_FOLDERS = frozenset({"usr", "lib", "lib32", "lib64", "libx32", "bin", "sbin", "etc",
                            "proc", "dev", "sys", "var"})
ALWAYS_HIDDEN = ("/var/tmp", "/dev/shm")

UID_BASE = 200_000


def copy_child_files(runner: Path, names: tuple[str, ...] = CHILD_FILES) -> None:
    """The sandbox's own code (``names`` of ``grader/child``), copied into ``runner``."""
    runner.mkdir(exist_ok=True)
    for name in names:
        shutil.copy2(CHILD_DIR / name, runner / name)


@dataclass
class Limits:
    """Every limit of a grading run, each with its flag of ``minimodel-grader grade`` (seconds,
    MiB, KiB). A probe group is held to ``group()``, a notebook kernel to ``kernel()``; with
    control groups, ``memory_mb`` and ``nproc`` (``kernel_memory_mb`` and ``kernel()``'s
    processes) cover all the processes of a run together, and the scratch folder of a submission
    holds at most ``scratch_mb``."""

    wall_s: float = 20.0
    cpu_s: int = 20
    case_cpu_s: float = 5.0  # CPU seconds per case (at most 0.7 x cpu_s): then its function dies
    memory_mb: int = 2048
    fsize_mb: int = 32
    nproc: int = 64
    nofile: int = 256
    output_kb: int = 64
    cell_timeout_s: int = 60
    notebook_wall_s: int = 240
    kernel_memory_mb: int = 8192
    student_cpu_s: float = 300.0  # CPU seconds per student, all items together (0: no cap)
    student_wall_s: float = 1200.0  # seconds one student may hold a worker (0: no cap)
    scratch_mb: int = 512  # the size of a submission's scratch folder (a tmpfs)

    def group(self) -> dict:
        keys = ("wall_s", "cpu_s", "case_cpu_s", "memory_mb", "fsize_mb", "nproc", "nofile",
                "output_kb")
        return {key: getattr(self, key) for key in keys}

    def kernel(self) -> dict:
        return {"memory_mb": self.kernel_memory_mb, "fsize_mb": self.fsize_mb,
                "nproc": max(self.nproc, 128), "nofile": 1024,
                "cpu_s": int(self.notebook_wall_s * 2)}


@dataclass
class Capabilities:
    """What this platform lets the grader enforce (each found by trying it)."""

    namespaces: bool = False  # mount + network namespace, covered folders
    pid_namespace: bool = False
    ipc_namespace: bool = False
    drop_privileges: bool = False
    rlimits: bool = False
    cgroup: int | None = None  # 1 or 2: one limit for all of a run's processes (cgroups vN)
    scratch_quota: bool = False  # the scratch folder is a tmpfs of ``Limits.scratch_mb``
    cuda: bool | None = None  # None: not asked
    notes: list[str] = field(default_factory=list)

    def enforced(self) -> dict[str, bool | int | None]:
        """What is enforced, kept in the run's settings (``OUT/run.json``, ``isolation``)."""
        return {"namespaces": self.namespaces, "pid_namespace": self.pid_namespace,
                "ipc_namespace": self.ipc_namespace, "drop_privileges": self.drop_privileges,
                "rlimits": self.rlimits, "cgroup": self.cgroup,
                "scratch_quota": self.scratch_quota}

    def mode(self) -> tuple[str, str]:
        """The isolation used, ``(es, en)``: namespaces; the fallback where the platform refuses
        them (a user of its own, limits, and only file permissions between it and the rest);
        or none."""
        if self.namespaces and self.drop_privileges:
            return "namespaces", "namespaces"
        if self.drop_privileges:
            return "usuario sin privilegios y permisos", "unprivileged user and permissions"
        return "ninguno", "none"

    def report(self) -> list[str]:
        """Start-up lines: the isolation mode, what is enforced, and, loudly, what is not."""
        def line(ok: bool, es: str, en: str, es_no: str, en_no: str) -> str:
            return f"  [ok] {en} / {es}" if ok else f"  [NOT ENFORCED] {en_no} / {es_no}"

        es, en = self.mode()
        lines = [f"sandbox / aislamiento: {en} / {es}"]
        lines.append(line(self.namespaces, "red desactivada (namespace de red)",
                          "network off (network namespace)",
                          "la red no está aislada (solo un filtro de Python)",
                          "network not isolated (Python audit hook only)"))
        lines.append(line(self.namespaces, "soluciones, referencias y otras entregas ocultas",
                          "solutions, references and other students hidden (mount namespace)",
                          "archivos ocultos solo con un filtro de Python, evitable con ctypes",
                          "files hidden by a Python audit hook only, bypassable with ctypes"))
        lines.append(line(self.drop_privileges, "código del estudiante sin privilegios",
                          "student code runs as an unprivileged user",
                          "el código del estudiante corre con el usuario del corrector",
                          "student code runs as the grader's user"))
        if self.pid_namespace or not self.drop_privileges:
            lines.append(line(self.pid_namespace, "ningún proceso sobrevive a su prueba",
                              "nothing outlives its item (PID namespace)",
                              "procesos en segundo plano: solo se mata el grupo de procesos",
                              "background processes: only the process group is killed"))
        else:
            lines.append(line(True, "ningún proceso sobrevive a su prueba (se matan todos los "
                              "de su usuario)", "nothing outlives its item (every process of "
                              "its user is killed)", "", ""))
        lines.append(line(self.ipc_namespace, "ningún objeto IPC sobrevive a su prueba",
                          "no IPC object outlives its item (IPC namespace)",
                          "memoria compartida y colas SysV pueden quedar para el siguiente",
                          "SysV shared memory and queues may be left for the next student"))
        lines.append(line(self.rlimits, "límites de CPU, memoria, archivos y procesos",
                          "CPU, memory, file-size and process limits",
                          "sin límites de recursos", "no resource limits"))
        lines.append(line(bool(self.cgroup),
                          f"un límite de memoria y procesos para toda la prueba (cgroups "
                          f"v{self.cgroup})",
                          f"one memory and process limit for all of an item's processes "
                          f"(cgroups v{self.cgroup})",
                          "límites por proceso: cada proceso hijo tiene otro tanto de memoria",
                          "per-process limits only: each child process gets the memory limit "
                          "again"))
        lines.append(line(self.scratch_quota, "carpeta de trabajo de tamaño limitado (tmpfs)",
                          "scratch folder of limited size (tmpfs)",
                          "la carpeta de trabajo puede llenar el disco",
                          "the scratch folder can fill the disk"))
        if self.cuda is not None:
            lines.append("  [ok] CUDA: probes repeated on the GPU / pruebas repetidas en la GPU"
                         if self.cuda else
                         "  [--] CUDA: no GPU, GPU checks reported as not run / sin GPU, "
                         "las comprobaciones de GPU constan como no ejecutadas")
        lines += [f"  note: {note}" for note in self.notes]
        return lines


def python_roots() -> list[str]:
    """Folders the sandbox's Python needs to read: the environment and its base installation."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             *site.getsitepackages()}  # a site-packages may be a link to elsewhere
    real = os.path.realpath(sys.executable)
    roots.add(str(Path(real).parent.parent))
    return sorted(os.path.realpath(r) for r in roots if r and os.path.isdir(r))


def installed_grader_dirs() -> list[str]:
    """A non-editable install of ``grader`` in site-packages would expose the hidden checks."""
    return [str(Path(folder) / "grader") for folder in
            [*site.getsitepackages(), site.getusersitepackages()]
            if (Path(folder) / "grader").is_dir()]


def filesystem_view(scratch: Path, extra_hide: list[Path] = ()) -> dict:
    """The ``hide``/``expose`` lists of one sandbox (see ``grader/child/isolation.py``)."""
    top_level = [str(entry) for entry in Path("/").iterdir()  # checked at run time, not listed
                 if entry.is_dir() and not entry.is_symlink() and entry.name not in SYSTEM_FOLDERS]
    hide = [str(REPO_ROOT), *top_level, *ALWAYS_HIDDEN, *(str(p) for p in extra_hide),
            *installed_grader_dirs()]
    hidden_by_env = os.environ.get("MINIMODEL_GRADER_HIDE", "")
    hide += [p for p in hidden_by_env.split(os.pathsep) if p]
    return {"hide": sorted({os.path.realpath(p) for p in hide if os.path.isdir(p)}),
            "expose_ro": python_roots(), "expose_rw": [os.path.realpath(scratch)]}


def sandbox_env(workdir: Path, *, cuda: bool) -> dict:
    """The scrubbed environment of every sandboxed process."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "HOME": str(workdir), "TMPDIR": str(workdir),
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTHONIOENCODING": "utf-8",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MINIMODEL_IMPL": "src", "MINIMODEL_LAB_SIZE": "test", "MINIMODEL_AUTORELOAD": "0",
           "MPLBACKEND": "agg", "MPLCONFIGDIR": str(workdir)}
    if not cuda:
        env["CUDA_VISIBLE_DEVICES"] = ""
    elif "CUDA_VISIBLE_DEVICES" in os.environ:
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return env



def probe_capabilities(check_cuda: bool = False) -> Capabilities:
    """Try each isolation mechanism in a throw-away child and report what worked (cached)."""
    caps = _probe()
    if check_cuda and caps.cuda is None:
        caps.cuda = cuda_available()
    return caps


@functools.cache
def _probe() -> Capabilities:
    caps = Capabilities()
    root = os.geteuid() == 0
    if not sys.platform.startswith("linux"):
        caps.notes.append("not Linux: no namespaces or limits; student code runs unconfined")
        return caps
    with tempfile.TemporaryDirectory(prefix="mmg-probe-") as tmp:
        secret = Path(tmp) / "hidden" / "secret"
        secret.parent.mkdir()
        secret.write_text("x")
        own = Path(tmp) / "own"
        own.mkdir()
        view = filesystem_view(own, [secret.parent])
        config = {**view, "namespaces": root, "secret": str(secret), "uid": sandbox_uid()}
        try:
            done = subprocess.run([sys.executable, "-I", str(CHILD_DIR / "platform_probe.py"),
                                   str(CHILD_DIR), json.dumps(config)],
                                  capture_output=True, text=True, timeout=60)
            result = json.loads(done.stdout.strip().splitlines()[-1])
        except (subprocess.SubprocessError, ValueError, IndexError) as error:
            caps.notes.append(f"isolation probe failed: {error!r}")
            return caps
    result["pid_namespace"] = result["pid_namespace"] and result["namespaces"]
    result["cgroup"], why_not = cgroup.available() if root else (None, "")
    result["notes"] += [why_not] if why_not else []
    caps = Capabilities(**result)  # the probe's fields are the capabilities' own
    if not root:
        caps.notes.append("not running as root: no namespaces and no user switch "
                          "(run the grader as root in a container for full isolation)")
    return caps


def cuda_available() -> bool:
    """Ask a throw-away process (never this one: a forked CUDA context is unusable)."""
    if sys.platform.startswith("linux") and not Path("/dev/nvidiactl").exists() and \
            not os.environ.get("MINIMODEL_GRADER_PROBE_CUDA"):
        return False  # no NVIDIA driver: no need to import torch to know
    try:
        check = "import torch; print(torch.cuda.is_available())"
        done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                              timeout=120)
        return done.stdout.strip().endswith("True")
    except subprocess.SubprocessError:
        return False


def sandbox_uid() -> int:
    """An unprivileged uid no other live grader process uses (derived from this pid)."""
    return UID_BASE + os.getpid()


def matplotlib_cache(folder: Path) -> Path:
    """Build matplotlib's font cache once (seconds) so each kernel can copy it.

    Two workers may race to build it: each builds into its own folder and moves it in place.
    """
    if not any(folder.glob("fontlist-*.json")):
        folder.parent.mkdir(parents=True, exist_ok=True)
        build = Path(tempfile.mkdtemp(prefix=".mpl-", dir=folder.parent))
        subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"],
                       env={**os.environ, "MPLCONFIGDIR": str(build), "MPLBACKEND": "agg"},
                       capture_output=True, timeout=300, check=False)
        try:
            os.rename(build, folder)
        except OSError:  # another worker got there first
            shutil.rmtree(build, ignore_errors=True)
    return folder


class ItemFolders:
    """Where runs write: one folder per run under ``items``, named ``<number>-<prefix>`` in the
    order they were asked for (a retry gets a fresh one). ``sources``: the submission's own text,
    which bounds what its runs may say in the feedback (``None``: the course's own code)."""

    sources: Sources | None = None

    def __init__(self, items: Path):
        self.items = items
        self._counter = 0

    def new_item_dir(self, prefix: str) -> str:
        self._counter += 1
        return f"{self._counter:03d}-{prefix}"


_PRIVATE_MOUNTS: list[bool] = []  # whether this process moved into a mount namespace of its own


def enter_private_mounts() -> None:
    """Move this grading worker into a mount namespace of its own, before it starts its zygote
    and kernel server (they share it): its scratch folders' tmpfs mounts are then seen by them
    and by nobody else, and vanish with the worker, however it ends."""
    try:
        isolation.private_mounts()
        _PRIVATE_MOUNTS.append(True)
    except OSError:
        pass  # the scratch folders stay plain folders


def scratch_size_mb(limits: Limits, caps: Capabilities) -> int:
    """The size of a submission's scratch tmpfs in this worker (0: a plain folder)."""
    return limits.scratch_mb if caps.scratch_quota and _PRIVATE_MOUNTS else 0


# A notebook kernel's sockets are files in its working folder, and a Unix socket's path has at
# most 107 bytes: under the run's scratch root, the longest is a student's folder (12
# characters), then items/nb-<lab>[-again]/k-<port>.
UNIX_SOCKET_MAX = 107
SOCKET_TAIL = "/" + "0" * 12 + "/items/nb-lab_00_00-again/k-65535"
RUN_PREFIX = "mmg-run-"  # a run's scratch root, then 8 characters of tempfile.mkdtemp's


def scratch_parent() -> Path:
    """Where a run's scratch root goes: the temporary folder, or ``/tmp`` when the temporary
    folder's path is too long for a kernel's sockets under it."""
    here = Path(tempfile.gettempdir())
    room = len(os.fsencode(here)) + len(f"/{RUN_PREFIX}xxxxxxxx") + len(SOCKET_TAIL)
    return here if room <= UNIX_SOCKET_MAX else Path("/tmp")


def scratch_name(student_id: str) -> str:
    """A student's folder under the run's scratch root: 12 characters, whatever the id."""
    return hashlib.sha256(student_id.encode()).hexdigest()[:12]


class Scratch(ItemFolders):
    """The scratch folder of one submission: all the sandbox can see besides Python itself; with
    ``size_mb``, a tmpfs of that size (see :func:`enter_private_mounts`), so that nothing a
    submission writes can fill the disk."""

    def __init__(self, root: Path, student_files: dict[str, bytes], size_mb: int = 0):
        super().__init__(root / "items")
        self.sources = Sources.of({f"{name}.py": data for name, data in student_files.items()})
        self.root = root
        self.course_src = root / "course" / "src"
        self.runner = root / "runner"
        self.inputs = root / "inputs"
        self.mounted = bool(size_mb)
        root.mkdir(parents=True, mode=0o755)
        if self.mounted:
            isolation.mount_scratch(str(root), size_mb)
        os.chmod(root, 0o755)
        shutil.copytree(PACKAGE_DIR, self.course_src / "minimodel",
                        ignore=self._given_code_only)
        positional = self.course_src / "minimodel" / "positional"
        for name, data in student_files.items():
            (positional / f"{name}.py").write_bytes(data)
        copy_child_files(self.runner)
        self.items.mkdir(mode=0o755)
        self.inputs.mkdir(mode=0o755)

    @staticmethod
    def _given_code_only(folder: str, names: list[str]) -> list[str]:
        ignored = [n for n in names if n == "__pycache__" or n.endswith(".pyc")]
        # the modules that hold answers (the self-check's oracles) are not there to be read
        package = ".".join(Path(folder).resolve().relative_to(PACKAGE_DIR.parent.resolve()).parts)
        for n in names:
            name = package if n == "__init__.py" else f"{package}.{n.removesuffix('.py')}"
            if forbidden(name) and name not in GIVEN_CODE_MAY_IMPORT:
                ignored.append(n)
        if Path(folder).resolve() == (PACKAGE_DIR / "positional").resolve():
            ignored += [n for n in names if n != "__init__.py" and n.endswith(".py")]
        return ignored

    def add_inputs(self, name: str, arrays: dict[str, np.ndarray]) -> Path:
        path = self.inputs / f"{name}.npz"
        np.savez(path, **arrays)
        os.chmod(path, 0o644)
        return path

    def remove(self) -> None:
        if self.mounted:
            isolation.unmount(str(self.root))  # everything on it goes at once
        shutil.rmtree(self.root, ignore_errors=True)
