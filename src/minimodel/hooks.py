"""The three hooks through which a positional encoding enters the Mini-GPT.

Every encoding of ``minimodel.positional`` plugs into exactly one of them (its row of
``minimodel.encodings.ENCODINGS`` says which):

1. ``add_to_input(x, offset)``: add a vector per position to the token embeddings
   (``sinusoidal``, ``learned``);
2. ``rotate(q, k, offset)``: rotate queries and keys by their positions (``rope``);
3. ``attention_bias(q_len, k_len)``: add a bias to the attention logits (``alibi``, ``t5``).

Each hook is told where the chunk starts (an offset, or queries aligned to the end of the keys),
so a chunk fed after a KV cache gets the same encoding as in a full forward pass. This file is the
only place where the model calls the encodings: their call sites are below.
"""

from __future__ import annotations

import importlib
import math

import torch
from torch import nn

from minimodel.encodings import ENCODINGS
from minimodel.messages import bilingual, split_bilingual


def encoding_module(name: str):
    """Import ``minimodel.positional.<name>`` (from the implementation the overlay chose)."""
    try:
        return importlib.import_module(f"minimodel.positional.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"minimodel.positional.{name}":
            raise
        raise ModuleNotFoundError(
            bilingual(
                f"La implementación elegida no tiene minimodel/positional/{name}.py. "
                "Revisa MINIMODEL_IMPL o completa ese archivo.",
                f"The chosen implementation has no minimodel/positional/{name}.py. "
                "Check MINIMODEL_IMPL or complete that file.",
            ),
            name=error.name,
        ) from error


def student_function(module: str, name: str, why: tuple[str, str], *args, **kwargs):
    """``minimodel.positional.<module>.<name>(*args, **kwargs)``: given code that needs what a
    student computes in a lab calls the student's function, never a copy of its own.

    ``why`` says, in Spanish and English, what needs it ("La evaluación ... resume la pérdida").
    When the function fails (still a stub, or a bug), the error says that, the file and lab to
    complete and what the function said, in both languages; a stub's ``NotImplementedError``
    stays one, anything else becomes a ``RuntimeError``.
    """
    from minimodel.course import LABS

    function = getattr(encoding_module(module), name)
    try:
        return function(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - whatever the student's code raises
        lab = next((lab.id for lab in LABS if module in lab.modules), "?")
        es, en = split_bilingual(str(error))
        if isinstance(error, NotImplementedError):
            kind, state_es, state_en = NotImplementedError, "aún no está completa", \
                "is not complete yet"
        else:
            kind, state_es, state_en = RuntimeError, f"falló ({type(error).__name__})", \
                f"failed ({type(error).__name__})"
        raise kind(
            bilingual(
                f"{why[0]} con tu función {name} de {module}.py (laboratorio {lab}), que "
                f"{state_es}: {es}\nComplétala o corrígela (make check LAB={lab}).",
                f"{why[1]} with your {name} of {module}.py (lab {lab}), which {state_en}: "
                f"{en}\nComplete or fix it (make check LAB={lab}).",
            )
        ) from error


CHUNK_MASK = ("Un trozo de varios tokens tras la caché KV se enmascara",
              "A chunk of several tokens after a KV cache is masked")


def causal_mask(q_len: int, k_len: int, device: torch.device | None = None) -> torch.Tensor:
    """Float mask ``(q_len, k_len)``: 0 where query ``i`` may see key ``j``, ``-inf`` elsewhere.

    Queries are aligned to the END of the keys (query ``i`` sits at position
    ``k_len - q_len + i``), as they are after a KV cache. SDPA's ``is_causal=True`` aligns them to
    the start instead, which is only right when ``q_len == k_len``. The square mask (training, a
    prompt) and one new token's row (nothing in its future) are built here; a chunk of several
    tokens after a cache is lab 18.03's ``causal_mask_after_cache``, the student's.
    """
    if q_len == k_len:
        return torch.full((q_len, k_len), float("-inf"), device=device).triu(1)
    if q_len == 1:
        return torch.zeros(1, k_len, device=device)
    return student_function("cache_positions", "causal_mask_after_cache", CHUNK_MASK,
                            k_len - q_len, q_len, device=device)


class PositionalHooks(nn.Module):
    """Builds the encoding named by ``config.positional`` and exposes the three hooks.

    The encoding's row in ``minimodel.encodings.ENCODINGS`` says which hook it uses; the hooks an
    encoding does not use are the identity (or ``None`` for the bias), so the model calls all
    three unconditionally. ``_build_<name>`` builds encoding ``<name>`` from the student's module.
    """

    def __init__(self, config) -> None:
        super().__init__()
        self.kind = config.positional
        self.encoding = ENCODINGS[self.kind]
        self.input = None  # hook 1: a module whose forward(x, offset) adds the encodings to x
        self.input_scale = 1.0
        self.bias = None  # hook 3: bias(q_len, k_len) (H, q_len, k_len), causal -inf folded in
        getattr(self, f"_build_{self.kind}")(config)

    def _build_none(self, config) -> None:
        pass

    def _build_sinusoidal(self, config) -> None:
        sinusoidal = encoding_module("sinusoidal")
        self.input = sinusoidal.SinusoidalPositionalEncoding(config.n_embd, config.max_len)
        # As in Vaswani et al. (and fairseq): token embeddings times sqrt(d_model), so that a fixed
        # table of +-1 values does not drown embeddings initialised at std 0.02.
        self.input_scale = math.sqrt(config.n_embd)

    def _build_learned(self, config) -> None:
        learned = encoding_module("learned")
        self.input = learned.LearnedPositionalEmbedding(config.block_size, config.n_embd)

    def _build_rope(self, config) -> None:
        self.rope = encoding_module("rope")
        self.rotary_dim = config.rope_dim or config.n_embd // config.n_head
        self.convention = config.rope_convention
        self.rope_base = config.rope_base
        self.scaling = config.rope_scaling
        self.scaling_factor = config.rope_scaling_factor
        self.original_max_len = config.rope_original_max_len or config.block_size
        inv_freq, factor = self.rope_frequencies(seq_len=config.block_size)
        # float32 cos/sin tables, computed once (and kept float32 if the model is cast).
        self.rotary = self.rope.RotaryEmbedding(
            self.rotary_dim,
            max_len=config.max_len,
            base=self.rope_base,
            convention=self.convention,
            attention_factor=factor,
            inv_freq=inv_freq,
        )

    def _build_alibi(self, config) -> None:
        alibi = encoding_module("alibi")
        self.alibi_bias = alibi.alibi_bias
        self.register_buffer("slopes", alibi.alibi_slopes(config.n_head), persistent=False)
        self.bias = self._alibi

    def _alibi(self, q_len: int, k_len: int) -> torch.Tensor:
        return self.alibi_bias(q_len, k_len, self.slopes, causal=True)

    def _build_t5(self, config) -> None:
        relative_bias = encoding_module("relative_bias")
        self.relative = relative_bias.RelativePositionBias(
            config.n_head,
            bidirectional=False,
            num_buckets=config.t5_num_buckets,
            max_distance=config.t5_max_distance,
        )
        # T5 does not divide its logits by sqrt(head_dim); SDPA does. The bias is multiplied by
        # sqrt(head_dim), as in x-transformers: SDPA then computes
        # (q.k + head_dim * b) / sqrt(head_dim), which is not T5's balance between content and
        # position (that is scale=1.0 with the bias as is) but a reparametrisation for a model
        # trained from scratch: a bias sqrt(head_dim) times larger at init, and larger steps.
        self.bias_scale = math.sqrt(config.n_embd // config.n_head)
        self.bias = self._t5

    def _t5(self, q_len: int, k_len: int) -> torch.Tensor:
        scaled = self.relative(q_len, k_len) * self.bias_scale
        return scaled + causal_mask(q_len, k_len, scaled.device)

    @property
    def max_positions(self) -> int | None:
        """Number of positions the encoding has an answer for, or ``None`` when unbounded."""
        return self.input.max_len if self.input is not None else None

    def check_length(self, total: int) -> None:
        """Raise a clear error when positions ``0 .. total-1`` exceed the encoding's table."""
        limit = self.max_positions
        if limit is not None and total > limit:
            names = ", ".join(e.name for e in ENCODINGS.values() if e.hook != "input")
            raise ValueError(
                bilingual(
                    f"La codificación '{self.kind}' solo tiene {limit} posiciones y esta secuencia "
                    f"llega a {total} (contando la caché KV). Acórtala, o usa una codificación sin "
                    f"tabla ({names}).",
                    f"Encoding '{self.kind}' has only {limit} positions and this sequence reaches "
                    f"{total} (counting the KV cache). Shorten it, or use an encoding without a "
                    f"table ({names}).",
                )
            )

    # --- hook 1: additive input ------------------------------------------------------------
    def add_to_input(self, x: torch.Tensor, offset: int) -> torch.Tensor:
        """Embeddings ``(B, T, C)`` plus the encodings of positions ``offset .. offset + T - 1``."""
        return x if self.input is None else self.input(x * self.input_scale, offset=offset)

    # --- hook 2: rotation of queries and keys ---------------------------------------------------
    def rope_frequencies(self, seq_len: int) -> tuple[torch.Tensor, float]:
        """RoPE inverse frequencies ``(rotary_dim // 2,)`` float32 and the attention factor.

        With ``rope_scaling`` set, the function registered under that name in
        ``minimodel.positional.scaling.SCALINGS`` is called as
        ``fn(rotary_dim, base, factor=..., original_max_len=..., seq_len=...)`` and returns
        ``(inv_freq, attention_factor)`` (Hugging Face's ``modeling_rope_utils`` pattern).
        """
        if self.scaling is None:
            return self.rope.rope_frequencies(self.rotary_dim, base=self.rope_base), 1.0
        scaling = encoding_module("scaling").get_scaling(self.scaling)
        return scaling(
            self.rotary_dim,
            self.rope_base,
            factor=self.scaling_factor,
            original_max_len=self.original_max_len,
            seq_len=seq_len,
        )

    def rotate(
        self, q: torch.Tensor, k: torch.Tensor, offset: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotate queries and keys ``(B, H, T, head_dim)`` at positions ``offset .. offset+T-1``."""
        if self.encoding.hook != "rotate":
            return q, k
        if self.scaling == "dynamic_ntk":  # frequencies depend on the current length
            T = q.size(-2)
            inv_freq, factor = self.rope_frequencies(seq_len=offset + T)
            positions = torch.arange(offset, offset + T, device=q.device)
            kwargs = dict(convention=self.convention, attention_factor=factor)
            return (
                self.rope.apply_rope(q, positions, inv_freq, **kwargs),
                self.rope.apply_rope(k, positions, inv_freq, **kwargs),
            )
        return self.rotary(q, offset), self.rotary(k, offset)

    # --- hook 3: bias on the attention logits -------------------------------------------------
    def attention_bias(self, q_len: int, k_len: int) -> torch.Tensor | None:
        """Float bias ``(1, H, q_len, k_len)`` with the causal ``-inf`` folded in, or None.

        Queries are the last ``q_len`` of the ``k_len`` positions (end alignment, as with a KV
        cache). ``None`` means "no bias": attention then uses SDPA's fused causal path.
        """
        if self.bias is None:
            return None
        bias = self.bias(q_len, k_len)
        return bias.unsqueeze(0)
