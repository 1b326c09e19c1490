"""The three hooks through which a positional encoding enters the Mini-GPT.

An encoding is a ``Hook``: an ``nn.Module`` with three methods, and the model calls all three
unconditionally; the encoding overrides the one it uses (the others stay the identity):

1. ``add_to_input(x, offset)``: add a vector per position to the token embeddings (``Embed``:
   sinusoidal, learned);
2. ``rotate(q, k, offset)``: turn queries and keys by their positions, not necessarily alike
   (``Rotate``: RoPE; xPos also scales them, queries and keys inversely);
3. ``attention_bias(q_len, k_len)``: add a bias to the attention logits (``Bias``: ALiBi, T5).

Each hook is told where the chunk starts (an offset, or queries aligned to the end of the keys),
so a chunk fed after a KV cache gets the same encoding as in a full forward pass. The row of
``minimodel.encodings.ENCODINGS`` names each encoding's ``Hook`` class; the classes of the
course's own encodings are at the end of this file, and they build on the student's modules.
"""

from __future__ import annotations

import copy
import importlib
import math

import torch
from torch import nn

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
    from minimodel.course import lab_of

    function = getattr(encoding_module(module), name)
    try:
        return function(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - whatever the student's code raises
        lab = getattr(lab_of(module), "id", "?")
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


class Hook(nn.Module):
    """An encoding's way into the Mini-GPT, built from the model's config; as is, no encoding.

    A subclass overrides the hook it uses. ``kind`` is the encoding's name
    (``config.positional``), for reading, never for choosing what to do. ``note``: what
    ``minimodel compare`` says about its results past the training length, in Spanish and
    English (``None``: nothing).
    """

    note: tuple[str, str] | None = None

    def __init__(self, config) -> None:
        super().__init__()
        self.config = config
        self.kind = config.positional

    @classmethod
    def covering(cls, length: int) -> dict:
        """Config fields with which the encoding's precomputed tables (or learnt buckets) cover
        only ``length`` positions, so that a longer sequence reaches what lies past them."""
        return {}

    @property
    def max_positions(self) -> int | None:
        """Number of positions the encoding has an answer for, or ``None`` when unbounded."""
        return None

    def check_length(self, total: int) -> None:
        """Raise a clear error when positions ``0 .. total-1`` exceed the encoding's table."""
        from minimodel.encodings import ENCODINGS

        limit = self.max_positions
        if limit is not None and total > limit:
            names = ", ".join(e.name for e in ENCODINGS.values() if not issubclass(e.hook, Embed))
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

    def allowing(self, length: int, seed: int = 0) -> Hook:
        """This hook, or a copy that accepts sequences of ``length`` tokens (see
        ``minimodel.evaluate.allow_length``)."""
        return self

    def add_to_input(self, x: torch.Tensor, offset: int) -> torch.Tensor:
        """Hook 1: embeddings ``(B, T, C)`` plus the encodings of positions
        ``offset .. offset + T - 1``."""
        return x

    def rotate(
        self, q: torch.Tensor, k: torch.Tensor, offset: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Hook 2: queries and keys ``(B, H, T, head_dim)`` at positions
        ``offset .. offset + T - 1``, turned (and scaled) by position."""
        return q, k

    def attention_bias(self, q_len: int, k_len: int) -> torch.Tensor | None:
        """Hook 3: float bias ``(1, H, q_len, k_len)`` with the causal ``-inf`` folded in, or None.

        Queries are the last ``q_len`` of the ``k_len`` positions (end alignment, as with a KV
        cache). ``None`` means "no bias": attention then uses SDPA's fused causal path.
        """
        return None

    def reset_tables(self, device: torch.device | str) -> None:
        """Recompute on ``device`` every tensor a checkpoint does not hold (non-persistent
        buffers, tensors kept as attributes), as the constructor computes them.

        For meta-device initialisation: after ``to_empty`` those tensors are uninitialised memory,
        and ``load_state_dict`` does not fill them.
        """
        with torch.device(device):
            fresh = type(self)(self.config).to(device)
        for mine, theirs in zip(self.modules(), fresh.modules(), strict=True):
            for name in mine._non_persistent_buffers_set:
                mine._buffers[name] = theirs._buffers[name]
            for name, value in vars(theirs).items():
                if isinstance(value, torch.Tensor):
                    setattr(mine, name, value)


class Embed(Hook):
    """Hook 1: a table module whose ``forward(x, offset)`` adds position vectors to ``x``, which is
    first multiplied by ``input_scale``."""

    def __init__(self, config, table: nn.Module, input_scale: float = 1.0) -> None:
        super().__init__(config)
        self.input = table
        self.input_scale = input_scale

    @property
    def max_positions(self) -> int:
        return self.input.max_len

    def add_to_input(self, x: torch.Tensor, offset: int) -> torch.Tensor:
        return self.input(x * self.input_scale, offset=offset)


class Rotate(Hook):
    """Hook 2: a subclass defines ``rotate(q, k, offset)``."""


class Bias(Hook):
    """Hook 3: a subclass defines ``bias(q_len, k_len)``, ``(H, q_len, k_len)`` with the causal
    ``-inf`` folded in."""

    def bias(self, q_len: int, k_len: int) -> torch.Tensor:
        raise NotImplementedError

    def attention_bias(self, q_len: int, k_len: int) -> torch.Tensor:
        return self.bias(q_len, k_len).unsqueeze(0)


# --- the course's own encodings -------------------------------------------------------------
class Sinusoidal(Embed):
    def __init__(self, config) -> None:
        sinusoidal = encoding_module("sinusoidal")
        # As in Vaswani et al. (and fairseq): token embeddings times sqrt(d_model), so that a fixed
        # table of +-1 values does not drown embeddings initialised at std 0.02.
        super().__init__(config, sinusoidal.SinusoidalPositionalEncoding(config.n_embd,
                                                                          config.max_len),
                         math.sqrt(config.n_embd))


class Learned(Embed):
    note = ("learned: más allá de su tabla, filas tal como se inicializaron (nunca entrenadas); "
            "ver allow_length.",
            "learned: past its table, rows as initialised (never trained); see allow_length.")

    def __init__(self, config) -> None:
        learned = encoding_module("learned")
        super().__init__(config, learned.LearnedPositionalEmbedding(config.block_size,
                                                                    config.n_embd))

    def allowing(self, length: int, seed: int = 0) -> Hook:
        """Learned positions have no rows past the table. To measure what the model does there
        anyway, the copy gets a longer table: the trained rows, then rows as initialised
        (``N(0, 0.02)``, never trained), which is what a longer table trained only on short
        sequences holds."""
        if length <= self.max_positions:
            return self
        longer = copy.deepcopy(self)
        old = self.input
        new = encoding_module("learned").LearnedPositionalEmbedding(length, self.config.n_embd)
        generator = torch.Generator().manual_seed(seed)
        state = {}
        for name, tensor in new.state_dict().items():
            fresh = torch.randn(tensor.shape, generator=generator) * 0.02
            trained = old.state_dict()[name]
            fresh[: trained.shape[0]] = trained.cpu()
            state[name] = fresh
        new.load_state_dict(state)
        longer.input = new.to(next(old.parameters()).device)
        return longer


# Scalings whose frequencies depend on the current length (lesson 18.02): dynamic NTK grows its
# base past the original length, LongRoPE switches from its short factors to its long ones.
LENGTH_DEPENDENT = ("dynamic_ntk", "longrope")


class Rope(Rotate):
    """RoPE, with an optional scaling of lesson 18.02 (``config.rope_scaling``)."""

    def __init__(self, config) -> None:
        super().__init__(config)
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

    @classmethod
    def covering(cls, length: int) -> dict:
        return {"max_len": length}  # past its cos/sin table, RoPE computes the angles

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
        if self.scaling in LENGTH_DEPENDENT:  # frequencies depend on the current length
            T = q.size(-2)
            inv_freq, factor = self.rope_frequencies(seq_len=offset + T)
            positions = torch.arange(offset, offset + T, device=q.device)
            kwargs = dict(convention=self.convention, attention_factor=factor)
            return (
                self.rope.apply_rope(q, positions, inv_freq, **kwargs),
                self.rope.apply_rope(k, positions, inv_freq, **kwargs),
            )
        return self.rotary(q, offset), self.rotary(k, offset)


class Alibi(Bias):
    def __init__(self, config) -> None:
        super().__init__(config)
        alibi = encoding_module("alibi")
        self.alibi_bias = alibi.alibi_bias
        self.register_buffer("slopes", alibi.alibi_slopes(config.n_head), persistent=False)

    def bias(self, q_len: int, k_len: int) -> torch.Tensor:
        return self.alibi_bias(q_len, k_len, self.slopes, causal=True)


class T5(Bias):
    def __init__(self, config) -> None:
        super().__init__(config)
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

    @classmethod
    def covering(cls, length: int) -> dict:
        return {"t5_num_buckets": 8, "t5_max_distance": length}  # farther keys share a bucket

    def bias(self, q_len: int, k_len: int) -> torch.Tensor:
        scaled = self.relative(q_len, k_len) * self.bias_scale
        return scaled + causal_mask(q_len, k_len, scaled.device)
