"""Refuse credit for values a submission borrows instead of computing them.

The rule is the course's, shared with the student's self-check and ``make submit``
(``minimodel/own_work.py``, which ships to students): a graded module may use the standard
library, NumPy, PyTorch and the course's given code, not the self-check (its oracles) nor another
library's implementation (Hugging Face's ``apply_rotary_pos_emb``, ``torch.onnx``, ...). Before
a student's module is run, its source is read here (never executed); such a module, and a graded
module that imports it (``two_d.py`` imports ``rope.py``), makes every item that depends on it
score 0, like the stub, with a finding that names what it uses. While the module runs, the
sandbox's watch refuses each case that calls such a function however it was reached
(``probe_runner``, ``own_work.Watch``).
"""

from __future__ import annotations

from grader.trusted.findings import Finding, borrowed_finding
from minimodel.own_work import refused_modules


def borrowed_modules(files: dict[str, bytes]) -> dict[str, Finding]:
    """Graded module -> why its items score 0, for each module of ``files`` (name -> source
    the student submitted) that uses what it may not, itself or through another."""
    return {module: borrowed_finding(refusal.name, f"{module}.py", refusal.via)
            for module, refusal in refused_modules(files).items()}
