"""What a sandbox server loads once, before it forks: the probe groups' zygote
(``zygote.py``) and the notebook kernels' server (``kernel_jail.py``).

Each fork then finds the libraries imported and warmed up instead of paying seconds of CPU for
them again. Only libraries are loaded here, never any course or student code.
"""

from __future__ import annotations

import contextlib
import tempfile


def load_probe_libraries() -> None:
    """NumPy and PyTorch (one thread, the meta-device and bfloat16 kernels warmed up) and
    Hugging Face ``transformers`` (:func:`load_transformers`)."""
    import numpy  # noqa: F401
    import torch

    torch.set_num_threads(1)
    (torch.zeros(2, device="meta") + torch.zeros(2, device="meta")).sum()
    (torch.zeros(2, dtype=torch.bfloat16) + torch.zeros(2)).sum()
    load_transformers()


def load_kernel_libraries() -> None:
    """:func:`load_probe_libraries`, IPython, ipykernel and matplotlib (every lab draws: its
    font cache is built here, once)."""
    load_probe_libraries()
    import ipykernel.ipkernel  # noqa: F401
    import ipykernel.kernelapp  # noqa: F401
    import IPython  # noqa: F401
    import matplotlib.pyplot  # noqa: F401


def load_transformers() -> None:
    """Import what labs 17.03 and 18.02 use of Hugging Face ``transformers`` (a tiny Llama, the
    rope-scaling functions). Nothing happens where it is not installed."""
    with contextlib.suppress(ImportError):
        import transformers

        transformers.LlamaConfig, transformers.LlamaForCausalLM  # noqa: B018 - lazy modules
        import transformers.modeling_rope_utils  # noqa: F401
    # the import asked tempfile for the server's own folder: each sandboxed process that forks
    # from the server must find its own (its TMPDIR, inside the scratch folder)
    tempfile.tempdir = None
