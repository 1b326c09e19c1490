"""The arguments of notebook records, evaluated with the reference implementation (leak search).

``MINIMODEL_IMPL=reference python -m grader.build.notebook_arguments OUT.npz`` reads a JSON list
of calls, ``[[argument sources], {keyword: source}]``, on standard input: the arguments of the
records of the labs' graded cells that call a function the student writes
(``rope_rotate_half(torch.linspace(-1, 1, 60).reshape(1, 2, 5, 6), ...)``). Each source is
evaluated with ``torch``, ``F``, ``nn``, ``np``, ``math`` and the public names of every module of
``minimodel.positional`` at hand. It writes the tensors to ``OUT.npz`` (half precision as float32)
and prints, per call, ``[args, kwargs]`` with ``{"$input": key, "dtype": ...}`` in place of each
tensor and ``{"$dtype": name}`` of each dtype, or ``null`` where a source needs the notebook's
variables (only the kernel has them).
"""

from __future__ import annotations

import json
import math
import pkgutil
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import minimodel.positional


def namespace() -> dict:
    """What an argument's source may use."""
    names = {"torch": torch, "F": F, "nn": nn, "np": np, "math": math}
    for info in pkgutil.iter_modules(minimodel.positional.__path__, "minimodel.positional."):
        module = __import__(info.name, fromlist=["_"])
        names.update({k: v for k, v in vars(module).items() if not k.startswith("_")})
    return names


def plain(value, key: str, arrays: dict):
    """``value`` as JSON: a tensor stored in ``arrays[key]`` and named by a marker."""
    if isinstance(value, torch.Tensor):
        low = value.dtype in (torch.bfloat16, torch.float16)
        arrays[key] = (value.detach().float() if low else value.detach()).cpu().numpy()
        return {"$input": key, "dtype": str(value.dtype).removeprefix("torch.")}
    if isinstance(value, torch.dtype):
        return {"$dtype": str(value).removeprefix("torch.")}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    raise TypeError(type(value).__name__)


def main(out: str) -> None:
    names, arrays, found = namespace(), {}, []
    for n, (args, kwargs) in enumerate(json.load(sys.stdin)):
        try:
            found.append([
                [plain(eval(a, dict(names)), f"a{n}_{i}", arrays)  # noqa: S307 - the checks'
                 for i, a in enumerate(args)],
                {k: plain(eval(v, dict(names)), f"a{n}_{k}", arrays)  # noqa: S307
                 for k, v in kwargs.items()}])
        except Exception:  # noqa: BLE001 - it needs the notebook's variables
            found.append(None)
    np.savez(out, **arrays)
    print(json.dumps(found))


if __name__ == "__main__":
    main(sys.argv[1])
