"""Every encoding the Mini-GPT can use, one row each: the row is the whole encoding.

Everything that lists the encodings reads this table: the model (``GPTConfig.positional``), the
command line (``train``, ``compare``), the plots and figures (``colour``), the self-check and
the tests. Where a lab names the course's own encodings it reads ``COURSE``, not this table, so
a new row changes no lab. No code outside an encoding's own module chooses what to do by its
name (the course's tests check it).

Adding an encoding:

1. write its module: a ``minimodel.hooks.Hook`` subclass built from the model's config (it
   overrides ``add_to_input``, ``rotate`` or ``attention_bias``; ``Embed``, ``Rotate`` and
   ``Bias`` are the three kinds). An encoding no lab grades is given code and its module goes in
   this folder, next to this table (``xpos.py``); one that students complete in a lab goes with
   the reference solutions, its lab lists it in ``minimodel.course.LABS`` and the course's
   generator writes its stub;
2. add its row below.
"""

from __future__ import annotations

from dataclasses import dataclass

from minimodel import hooks
from minimodel.course import COURSE_ENCODINGS, lab_of
from minimodel.encodings.xpos import XPos


@dataclass(frozen=True)
class Encoding:
    """One value of ``GPTConfig.positional``.

    Attributes:
        name: the value of ``GPTConfig.positional``.
        module: the module that implements it: the file of ``minimodel.positional`` a student
            completes, or of ``minimodel.encodings`` (given code); ``None``: nothing to implement.
        hook: its ``minimodel.hooks.Hook`` class, built as ``hook(config)``.
        colour: its colour in every plot and figure of the course.
        hint: what to look at, in Spanish and English, when decoding after a KV cache gives other
            logits than the full pass (the prefill being right).
    """

    name: str
    module: str | None
    hook: type[hooks.Hook]
    colour: str
    hint: tuple[str, str] = ("", "")

    @property
    def lesson(self) -> str | None:
        """The lab in which students complete its module, ``"17.01"`` (``None``: none)."""
        lab = lab_of(self.module) if self.module else None
        return lab.id if lab else None

    @property
    def file(self) -> str:
        """How a student knows it: ``"sinusoidal.py (17.01)"``; ``"xpos.py"`` for given code,
        ``""`` when there is no module."""
        if self.module is None:
            return ""
        return f"{self.module}.py ({self.lesson})" if self.lesson else f"{self.module}.py"


def _after_cache(what: str) -> tuple[str, str]:
    return (f"{what} debe alinear las consultas al final de las claves: la consulta i está en la "
            "posición k_len - q_len + i.",
            f"{what} must align the queries with the end of the keys: query i sits at position "
            "k_len - q_len + i.")


ENCODINGS = {
    encoding.name: encoding
    for encoding in (
        Encoding("none", None, hooks.Hook, "#7f7f7f"),
        Encoding("sinusoidal", "sinusoidal", hooks.Sinusoidal, "#4c72b0", (
            "SinusoidalPositionalEncoding.forward debe sumar las filas offset .. offset+T-1.",
            "SinusoidalPositionalEncoding.forward must add rows offset .. offset+T-1.")),
        Encoding("learned", "learned", hooks.Learned, "#dd8452", (
            "LearnedPositionalEmbedding.forward debe sumar las filas offset .. offset+T-1.",
            "LearnedPositionalEmbedding.forward must add rows offset .. offset+T-1.")),
        Encoding("rope", "rope", hooks.Rope, "#55a868", (
            "RotaryEmbedding.forward debe girar las filas en las posiciones offset .. offset+T-1.",
            "RotaryEmbedding.forward must rotate the rows at positions offset .. offset+T-1.")),
        Encoding("alibi", "alibi", hooks.Alibi, "#c44e52",
                 _after_cache("alibi_bias(q_len, k_len, ...)")),
        Encoding("t5", "relative_bias", hooks.T5, "#8172b3",
                 _after_cache("RelativePositionBias.forward(q_len, k_len)")),
        Encoding("xpos", "xpos", XPos, "#937860", (
            "XPos.rotate debe girar y escalar las filas en las posiciones offset .. offset+T-1.",
            "XPos.rotate must rotate and scale the rows at positions offset .. offset+T-1.")),
    )
}
COURSE = COURSE_ENCODINGS  # what the labs name, in order
STUDENT_WRITTEN = tuple(ENCODINGS[name] for name in COURSE if ENCODINGS[name].module)  # 19.01/02
