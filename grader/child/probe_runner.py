"""Call the student's code on hidden inputs and save what comes out as plain data.

Runs in the sandboxed, unprivileged process of one probe group, after the student's module is
imported. It decides nothing: each case's outputs go to ``case_<k>_<j>.npy`` (plain numeric
arrays) and a ``case_<k>.json`` describing them (kind, dtype, shape, device) or the exception the
case raised. The files are written one case at a time, so a crash in case 3 keeps cases 0-2.

A request (JSON, written by the trusted parent) looks like::

    {"module": "sinusoidal", "variant": "cpu" | "meta" | "cuda", "inputs": "<path>.npz",
     "cases": [{"call": "function", "name": "sinusoidal_pe", "args": [37, 24], "kwargs": {}},
               {"call": "module", "name": "SinusoidalPositionalEncoding",
                "init_args": [24], "init_kwargs": {"max_len": 64}, "method": "forward",
                "args": [{"$input": "x0", "dtype": "float16"}], "kwargs": {"offset": 5}}]}

A module case may also carry ``"state": {"bias.weight": {"$input": "w0"}}``: values copied into
the new module's parameters or buffers before it is called (a random table made known).
``{"$input": key}`` is an array from the inputs file, turned into a tensor of the given dtype on
the variant's device (or on ``"device"`` when given). ``{"$device": true}`` is the variant's
device as a string, and ``{"$dtype": "bfloat16"}`` that PyTorch dtype (``torch.bfloat16``).
``{"$function": "lambda z: z @ w", "env": {"w": {"$input": "w0"}}}`` is a callable built here
from source the parent wrote, with ``torch`` and the resolved ``env`` as its globals (a layer for
code that takes one, e.g. ``permutation_equivariance_gap``).

A ``"given"`` case calls a function of the course's given code with the student's module first:
``{"call": "given", "name": "minimodel.hf_llama.course_rope_logits", "args": [...]}`` runs
``course_rope_logits(<student module>, *args, **kwargs)`` (the student's RoPE inside a Hugging
Face Llama, say). Only ``minimodel`` modules outside the student's package and the self-check
can be named.

A case that runs out of its time stops at once, and so does each later call of the function that
ran out of it (see :class:`CaseTimer`): with ``"case_cpu_s"`` in the request's limits, each case
gets that much CPU time (all its threads together). When it is spent, the innermost function of
the student's modules that has not returned since is the one that ran out of time: it is replaced
in its module (and wherever another of the student's modules holds it) by a function that raises
:class:`DeadFunction` at once, the case fails with :class:`OutOfTime`, and ``dead.json`` names it
(``{"dead": [[module, qualified name], ...]}``). A request's ``"dead"`` list names those that ran
out of time in earlier runs of the same student: they are replaced before the first case.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import signal
import sys
import threading
import traceback

MAX_MESSAGE = 4000
MAX_OUTPUTS = 16
# Course modules that hold answers (the self-check's oracles): a student's code may not import
# them. The trusted side (``grader.trusted.borrowed``) reads this list to refuse such a submission.
FORBIDDEN_MODULES = ("minimodel.selfcheck",)
# The parts of those that hold no answer and that given code imports while a student's code runs
# (``minimodel.compare`` reads the self-check's list of files); a student's code may not.
GIVEN_CODE_MAY_IMPORT = ("minimodel.selfcheck", "minimodel.selfcheck.compare",
                         "minimodel.selfcheck.contracts", "minimodel.selfcheck.per_encoding")
BLOCKED = "The grader does not allow importing "  # how the refusal's message starts, in English
DEAD_FILE = "dead.json"
MAX_DEAD = 16  # functions one run may name as out of time
AGAIN_S = 0.25  # CPU seconds between two raises of OutOfTime, should the student's code catch one


class OutOfTime(BaseException):
    """The case ran out of its CPU time (a ``BaseException``: ``except Exception`` in the
    student's code does not stop it)."""


class DeadFunction(BaseException):
    """A call of a function of the student that ran out of its time on an earlier case."""


OUT_OF_TIME = (OutOfTime.__name__, DeadFunction.__name__)  # the types a case fails with then


def forbidden(name: str) -> bool:
    """Whether the module ``name`` is one of :data:`FORBIDDEN_MODULES` or inside one."""
    return any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES)


def _given_code(frame) -> bool:
    """Whether ``frame`` runs in a module of the course's given code, from that module's file
    (a course module outside ``minimodel.positional``, where the student's files are)."""
    name = frame.f_globals.get("__name__")
    if not isinstance(name, str) or not name.startswith("minimodel.") or \
            name.startswith("minimodel.positional"):
        return False
    module_file = getattr(sys.modules.get(name), "__file__", None)
    return bool(module_file) and \
        os.path.realpath(module_file) == os.path.realpath(frame.f_code.co_filename)


class BorrowedImportBlocker:
    """Meta-path finder: importing a forbidden module fails with ``ImportError``, unless it is
    one of :data:`GIVEN_CODE_MAY_IMPORT` and given code asks for it."""

    def find_spec(self, name, path=None, target=None):
        if not forbidden(name):
            return None
        if name in GIVEN_CODE_MAY_IMPORT:
            frame = sys._getframe(1)
            while frame is not None and (frame.f_code.co_filename.startswith("<frozen") or
                                         "importlib" in frame.f_code.co_filename):
                frame = frame.f_back
            if frame is not None and _given_code(frame):
                return None
        raise ImportError(refusal(name), name=name)


def refusal(name: str) -> str:
    """The message of the refused import of the forbidden module ``name``."""
    return (f"[es] El corrector no deja importar {name}: el trabajo tiene que ser tuyo.\n"
            f"[en] {BLOCKED}{name}: the work must be your own.")


def block_borrowed_imports() -> None:
    """Install :class:`BorrowedImportBlocker` first in ``sys.meta_path`` (once); called before
    any student code runs."""
    if not any(isinstance(f, BorrowedImportBlocker) for f in sys.meta_path):
        sys.meta_path.insert(0, BorrowedImportBlocker())


def _write_json(path: str, data: dict) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)


def describe_error(error: BaseException, student_dir: str | None = None) -> dict:
    """Plain description of an exception: type, message, and which of the student's files it
    came from (the grader parses that file itself for a syntax error's line)."""
    try:
        message = str(error)
    except BaseException:  # a __str__ that raises
        message = "<unprintable>"
    info = {"type": type(error).__name__, "message": message[:MAX_MESSAGE]}
    if isinstance(error, SyntaxError):
        info["file"] = os.path.basename(error.filename or "")
    try:
        frames = traceback.extract_tb(error.__traceback__)
    except BaseException:
        frames = []
    for frame in reversed(frames):
        if student_dir and frame.filename.startswith(student_dir):
            info.setdefault("file", os.path.basename(frame.filename))
            break
    return info


def _resolve(value, inputs, device: str):
    """Turn the markers (``$input``, ``$device``, ``$dtype``, ``$function``) into the values
    they stand for; leave plain JSON values alone."""
    import torch

    if isinstance(value, list):
        return [_resolve(v, inputs, device) for v in value]
    if isinstance(value, dict) and "$device" in value:
        return device  # the variant's device, as a string argument (``device=...``)
    if isinstance(value, dict) and "$dtype" in value:
        dtype = getattr(torch, str(value["$dtype"]))
        if not isinstance(dtype, torch.dtype):
            raise TypeError(f"not a dtype: {value['$dtype']!r}")
        return dtype
    if isinstance(value, dict) and "$function" in value:
        namespace = {"torch": torch, **_resolve(value.get("env", {}), inputs, device)}
        return eval(str(value["$function"]), namespace)  # noqa: S307 - the parent's source
    if isinstance(value, dict) and "$input" in value:
        array = inputs[value["$input"]]
        dtype = getattr(torch, value.get("dtype", "float32"))
        tensor = torch.from_numpy(array.copy())
        where = value.get("device") or device
        if where == "meta":
            return torch.empty(tensor.shape, dtype=dtype, device="meta")
        return tensor.to(dtype=dtype).to(where)
    if isinstance(value, dict):
        return {k: _resolve(v, inputs, device) for k, v in value.items()}
    return value


def _flatten(value, out: list) -> None:
    if isinstance(value, (tuple, list)) and len(out) < MAX_OUTPUTS:
        for element in value:
            _flatten(element, out)
    else:
        out.append(value)


def to_plain(value):
    """``(meta, array or None)`` for one output: arrays, tensors and numbers become NumPy arrays."""
    import numpy as np
    import torch

    if isinstance(value, torch.Tensor):
        meta = {"kind": "tensor", "dtype": str(value.dtype).removeprefix("torch."),
                "device": value.device.type, "shape": list(value.shape),
                "exact_type": type(value) is torch.Tensor}
        if value.device.type == "meta":
            return meta, None
        tensor = torch.Tensor.detach(value).to("cpu").as_subclass(torch.Tensor)
        if tensor.is_complex():
            tensor = torch.view_as_real(tensor)
            meta["complex"] = True
        native = (torch.float16, torch.float32, torch.float64, torch.bool, torch.uint8,
                  torch.int8, torch.int16, torch.int32, torch.int64)
        if tensor.dtype not in native:  # bfloat16, float8, ...: exactly representable in float32
            tensor = tensor.float() if tensor.is_floating_point() else tensor.to(torch.int64)
        return meta, np.array(tensor.numpy(), copy=True)
    if isinstance(value, np.ndarray):
        meta = {"kind": "ndarray", "dtype": str(value.dtype), "shape": list(value.shape),
                "exact_type": type(value) is np.ndarray}
        array = np.array(value, copy=True, subok=False)
        if array.dtype.kind not in "biufc":
            return {**meta, "kind": "unsupported"}, None
        return meta, array
    if isinstance(value, (bool, int, float, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            return {"kind": "unsupported", "type": type(value).__name__}, None
        return {"kind": "scalar", "dtype": str(array.dtype), "shape": [],
                "type": type(value).__name__}, array
    if isinstance(value, str):
        return {"kind": "string", "value": value[:MAX_MESSAGE]}, None
    if isinstance(value, torch.dtype):
        return {"kind": "string", "value": str(value)}, None
    if value is None:
        return {"kind": "none"}, None
    return {"kind": "unsupported", "type": type(value).__name__}, None


def plain_outputs(value) -> list[tuple[dict, object]]:
    """``(meta, array or None)`` for each output of one result (:func:`to_plain`)."""
    flat: list = []
    _flatten(value, flat)
    return [to_plain(element) for element in flat[:MAX_OUTPUTS]]


def save_outputs(value, prefix: str) -> list[dict]:
    """Save each output of one case as ``<prefix>_<j>.npy``; return their descriptions."""
    import numpy as np

    metas = []
    for index, (meta, array) in enumerate(plain_outputs(value)):
        if array is not None:
            np.save(f"{prefix}_{index}.npy", array, allow_pickle=False)
            meta["file"] = f"{os.path.basename(prefix)}_{index}.npy"
        metas.append(meta)
    return metas


def load_arrays(path: str) -> dict:
    """The arrays of an ``.npz`` file by name (never a pickle)."""
    import numpy as np

    with np.load(path, allow_pickle=False) as stored:
        return {key: stored[key] for key in stored.files}


def given_function(name: str, package: str = "minimodel.positional"):
    """The function ``name`` (``"minimodel.<module>.<function>"``) of the course's given code;
    ``ValueError`` for anything else (the student's package, the self-check, another library)."""
    where, _, function = name.rpartition(".")
    if not where.startswith("minimodel.") or where == package or \
            where.startswith(package + ".") or forbidden(where):
        raise ValueError(f"not a function of the course's given code: {name!r}")
    return getattr(importlib.import_module(where), function)


def call_case(module, case: dict, inputs, device: str):
    """Run one case against the imported student module and return its raw result."""
    import torch

    args = _resolve(case.get("args", []), inputs, device)
    kwargs = _resolve(case.get("kwargs", {}), inputs, device)
    if case["call"] == "given":
        return given_function(case["name"], module.__package__)(module, *args, **kwargs)
    target = getattr(module, case["name"])
    if case["call"] == "function":
        return target(*args, **kwargs)
    instance = target(*_resolve(case.get("init_args", []), inputs, device),
                      **_resolve(case.get("init_kwargs", {}), inputs, device))
    for name, value in _resolve(case.get("state", {}), inputs, device).items():
        # copied in place into the parameter or buffer ``name`` (``"bias.weight"``): it keeps
        # the dtype and device the module gave it
        *owners, attribute = name.split(".")
        with torch.no_grad():
            getattr(functools.reduce(getattr, owners, instance), attribute).copy_(value)
    method = case.get("method", "forward")
    return (instance if method == "forward" else getattr(instance, method))(*args, **kwargs)


def _student_frames(frame, package: str) -> list:
    """The frames of ``frame``'s stack that run code of the student's modules (a module of
    ``package``, from its own file), innermost first."""
    found = []
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if isinstance(name, str) and name.startswith(package + "."):
            module_file = getattr(sys.modules.get(name), "__file__", None)
            if module_file and os.path.realpath(module_file) == \
                    os.path.realpath(frame.f_code.co_filename):
                found.append(frame)
        frame = frame.f_back
    return found


def _defined(module, qualname: str):
    """``(owner, attribute, function)`` for a function ``qualname`` defines in ``module`` (a
    function of the module, or a method of one of its classes), read from the dictionaries
    without running any of the student's code (no ``__getattr__``); ``None`` otherwise."""
    parts = qualname.split(".")
    if not 1 <= len(parts) <= 2 or not all(part.isidentifier() for part in parts):
        return None
    owner = module
    if len(parts) == 2:
        owner = vars(module).get(parts[0])
        if not isinstance(owner, type):
            return None
    value = vars(owner).get(parts[-1])
    function = getattr(value, "__func__", value) if isinstance(
        value, (staticmethod, classmethod)) else value
    return (owner, parts[-1], value) if callable(function) else None


def kill(package: str, module_name: str, qualname: str) -> bool:
    """Replace the function ``qualname`` of the student's module ``module_name`` by one that
    raises :class:`DeadFunction` at once, there and wherever the student's modules or their
    classes hold it (``from .rope import apply_rotary``, ``Module.forward = _fast_forward``);
    whether it was found."""
    module = sys.modules.get(f"{package}.{module_name}")
    found = _defined(module, qualname) if module is not None else None
    if found is None:
        return False
    owner, attribute, original = found

    def dead(*args, **kwargs):
        raise DeadFunction(f"{module_name}.{qualname}")

    dead.__name__, dead.__qualname__ = attribute, qualname
    setattr(owner, attribute, dead)
    for name, other in list(sys.modules.items()):
        if not name.startswith(package + ".") or other is None:
            continue
        holders = [other] + [value for value in vars(other).values()  # and its classes
                             if isinstance(value, type) and value.__module__ == name]
        for holder in holders:
            for key, value in list(vars(holder).items()):
                if value is original:
                    setattr(holder, key, dead)
    return True


def kill_dead(package: str, dead: list) -> None:
    """Replace each function of ``dead`` (``[module, qualified name]`` pairs, from earlier runs),
    importing its module first (given code may import it later); one that cannot be found or
    whose module does not import is left alone."""
    for entry in dead[:4 * MAX_DEAD] if isinstance(dead, list) else []:
        try:
            module_name, qualname = (str(part) for part in entry)
            if module_name.isidentifier():
                importlib.import_module(f"{package}.{module_name}")
                kill(package, module_name, qualname)
        except BaseException:  # noqa: BLE001, S110 - a module that fails to import stays away
            pass


def _in_profile_hook(frame) -> bool:
    """Whether ``frame`` runs inside the profile function (``own_work.Watch``'s)."""
    hook = sys.getprofile()
    code = getattr(getattr(hook, "__func__", hook), "__code__", None)
    while code is not None and frame is not None:
        if frame.f_code.co_filename == code.co_filename:
            return True
        frame = frame.f_back
    return False


def _start_cuda() -> None:
    """Start PyTorch's CUDA context before the first case: its start-up (seconds of CPU on some
    machines) is no case's time."""
    with contextlib.suppress(Exception):
        import torch

        torch.zeros(1, device="cuda").sum().item()


class CaseTimer:
    """Each case's CPU time (``ITIMER_PROF``: all of the process's threads): when ``seconds``
    are spent, look again ``window`` seconds later; the innermost function of the student's
    modules still running in both looks (the same call, not a new one: a loop that calls an
    honest function over and over is the loop's fault) is killed (:func:`kill`) and named in
    ``dead.json``, and the case fails with :class:`OutOfTime`, again every :data:`AGAIN_S`
    should the student's code catch it."""

    def __init__(self, seconds: float, package: str, out_dir: str):
        self.seconds = max(0.05, float(seconds))
        self.window = max(0.05, self.seconds / 10)
        self.package, self.out_dir = package, out_dir
        self.looks: list[list] = []
        self.dead: list[list[str]] = []
        self.active = False
        signal.signal(signal.SIGPROF, self._fire)  # stays: a late signal finds it inactive

    def __enter__(self) -> CaseTimer:
        self.looks = []
        self.active = True
        signal.setitimer(signal.ITIMER_PROF, self.seconds)
        return self

    def __exit__(self, *exc) -> None:
        self.active = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        self.looks = []

    def _fire(self, signum, frame) -> None:
        if not self.active:
            return
        if self.looks and _in_profile_hook(frame):  # raised there, it would switch the hook off
            signal.setitimer(signal.ITIMER_PROF, 0.005)
            return
        self.looks.append(_student_frames(frame, self.package))
        if len(self.looks) == 1:
            signal.setitimer(signal.ITIMER_PROF, self.window)
            return
        signal.setitimer(signal.ITIMER_PROF, AGAIN_S)
        if len(self.looks) == 2:
            self._kill_running(*self.looks)
        raise OutOfTime("the case ran out of its CPU time")

    def _kill_running(self, first: list, second: list) -> None:
        for frame in second:
            if not any(frame is seen for seen in first):
                continue
            module_name = frame.f_globals["__name__"][len(self.package) + 1:]
            qualname = frame.f_code.co_qualname
            if module_name.isidentifier() and kill(self.package, module_name, qualname):
                if len(self.dead) < MAX_DEAD:
                    self.dead.append([module_name, qualname])
                    _write_json(os.path.join(self.out_dir, DEAD_FILE), {"dead": self.dead})
                return


def run(request: dict, out_dir: str, package: str = "minimodel.positional", *,
        timed: bool = False) -> None:
    """Import the student's module and run every case of ``request``, saving as it goes. The
    course's watch (``minimodel.own_work.Watch``) sees what the student's code calls: a case (or
    an import) that calls a refused library's function fails with ``own_work.call_refusal``.
    ``timed``: each case on the request's ``case_cpu_s`` (:class:`CaseTimer`; only in the
    sandbox's own process, never in the grader's)."""
    inputs = load_arrays(request["inputs"])
    student_dir = None  # where the student's files are: the package's folder, then the module's
    try:
        student_dir = os.path.realpath(list(importlib.import_module(package).__path__)[0])
        from minimodel.own_work import Watch, call_refusal

        with Watch(student_dir) as watch:
            module = importlib.import_module(f"{package}.{request['module']}")
            kill_dead(package, request.get("dead", []))
        student_dir = os.path.dirname(os.path.realpath(module.__file__ or ""))
        if called := watch.take():
            raise ImportError(call_refusal(called[0]))
    except BaseException as error:  # SyntaxError, SystemExit, anything raised at import
        info = describe_error(error, student_dir)
        _write_json(os.path.join(out_dir, "import_error.json"), info)
        _write_json(os.path.join(out_dir, "done.json"), {"cases": 0, "import_error": True})
        return
    device = request.get("variant", "cpu")
    case_cpu = request.get("limits", {}).get("case_cpu_s")
    if timed and device == "cuda":
        _start_cuda()
    timer = CaseTimer(case_cpu, package, out_dir) if timed and case_cpu and \
        threading.current_thread() is threading.main_thread() else contextlib.nullcontext()
    for index, case in enumerate(request["cases"]):
        prefix = os.path.join(out_dir, f"case_{index:03d}")
        record: dict = {"index": index}
        try:
            try:
                with watch, timer:
                    value = call_case(module, case, inputs, device)
            finally:  # a refused call outweighs whatever the case did after it
                if called := watch.take():
                    raise RuntimeError(call_refusal(called[0]))
            record["outputs"] = save_outputs(value, prefix)
            record["ok"] = True
        except BaseException as error:  # the case failed; the next one still runs
            record["ok"] = False
            record["error"] = describe_error(error, student_dir)
        _write_json(prefix + ".json", record)
    _write_json(os.path.join(out_dir, "done.json"), {"cases": len(request["cases"])})
