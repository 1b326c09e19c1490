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
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import sys
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
    """Plain description of an exception: type, message, and where in the student's file."""
    try:
        message = str(error)
    except BaseException:  # a __str__ that raises
        message = "<unprintable>"
    info = {"type": type(error).__name__, "message": message[:MAX_MESSAGE]}
    if isinstance(error, SyntaxError):
        info["lineno"] = error.lineno
        info["file"] = os.path.basename(error.filename or "")
    try:
        frames = traceback.extract_tb(error.__traceback__)
    except BaseException:
        frames = []
    for frame in reversed(frames):
        if student_dir and frame.filename.startswith(student_dir):
            info.setdefault("file", os.path.basename(frame.filename))
            info.setdefault("lineno", frame.lineno)
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


def run(request: dict, out_dir: str, package: str = "minimodel.positional") -> None:
    """Import the student's module and run every case of ``request``, saving as it goes. The
    course's watch (``minimodel.own_work.Watch``) sees what the student's code calls: a case (or
    an import) that calls a refused library's function fails with ``own_work.call_refusal``."""
    inputs = load_arrays(request["inputs"])
    student_dir = None  # where the student's files are: the package's folder, then the module's
    try:
        student_dir = os.path.realpath(list(importlib.import_module(package).__path__)[0])
        from minimodel.own_work import Watch, call_refusal

        with Watch(student_dir) as watch:
            module = importlib.import_module(f"{package}.{request['module']}")
        student_dir = os.path.dirname(os.path.realpath(module.__file__ or ""))
        if called := watch.take():
            raise ImportError(call_refusal(called[0]))
    except BaseException as error:  # SyntaxError, SystemExit, anything raised at import
        info = describe_error(error, student_dir)
        _write_json(os.path.join(out_dir, "import_error.json"), info)
        _write_json(os.path.join(out_dir, "done.json"), {"cases": 0, "import_error": True})
        return
    device = request.get("variant", "cpu")
    for index, case in enumerate(request["cases"]):
        prefix = os.path.join(out_dir, f"case_{index:03d}")
        record: dict = {"index": index}
        try:
            try:
                with watch:
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
