"""The encodings the Mini-GPT can use, in one table: name, student module, hook and lesson.

Everything that lists the encodings reads this table: the model (``GPTConfig.positional``), the
command line (``train``, ``compare``), the self-check of labs 19.01 and 19.02, the grader and the
tests. Adding an encoding means a row here, its module in ``minimodel/positional/`` and the
method ``PositionalHooks._build_<name>`` (``minimodel.hooks``) that builds it.
"""

from __future__ import annotations

from dataclasses import dataclass

HOOKS = ("input", "rotate", "bias")  # see minimodel.hooks


@dataclass(frozen=True)
class Encoding:
    """One value of ``GPTConfig.positional``.

    Attributes:
        name: the value of ``GPTConfig.positional``.
        module: the file of ``minimodel.positional`` the student completes (``None``: no file).
        hook: where it enters the model, one of ``HOOKS`` (``None``: nowhere).
        lesson: the lesson that builds it, e.g. ``"17.01"``.
    """

    name: str
    module: str | None
    hook: str | None
    lesson: str | None

    @property
    def file(self) -> str:
        """How a student knows it: ``"sinusoidal.py (17.01)"``."""
        return f"{self.module}.py ({self.lesson})"


ENCODINGS = {
    encoding.name: encoding
    for encoding in (
        Encoding("none", None, None, None),
        Encoding("sinusoidal", "sinusoidal", "input", "17.01"),
        Encoding("learned", "learned", "input", "17.02"),
        Encoding("rope", "rope", "rotate", "17.03"),
        Encoding("alibi", "alibi", "bias", "17.04"),
        Encoding("t5", "relative_bias", "bias", "17.05"),
    )
}
NAMES = tuple(ENCODINGS)  # in course order, "none" first
STUDENT_WRITTEN = tuple(e for e in ENCODINGS.values() if e.module)  # what labs 19.01/19.02 check
