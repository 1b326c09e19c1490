# ---------------------------------------------------------------------------------------------
# [es] Completa los bloques marcados "TU CÓDIGO" (lección 17.03). Este archivo es tuyo: una
#      vez que lo editas, ninguna orden del curso lo sobrescribe.
# [en] Fill in the blocks marked "YOUR CODE" (lesson 17.03). This file is yours: once you
#      edit it, no course command overwrites it.
# minimodel-generated:e736eb90b8b3
# ---------------------------------------------------------------------------------------------
"""Rotary position embedding, RoPE (Su et al., 2021). Lesson 17.03.

RoPE rotates each pair of dimensions of a query or key by the angle ``p * theta_i``, where ``p`` is
the token's position and ``theta_i = base ** (-2i / r)`` the pair's frequency (``r`` = number of
rotated dimensions). Then ``<R_m q, R_n k>`` depends on ``n - m`` only. Libraries pair the
dimensions in one of two ways; both are the same function up to a fixed permutation
(``rope_permutation``):

- ``"interleaved"`` (RoFormer, GPT-J, Meta's LLaMA, torchtune): pair ``i`` is ``(2i, 2i + 1)``;
- ``"half"`` (GPT-NeoX, Hugging Face Llama): pair ``i`` is ``(i, i + r/2)``.

Angles are computed in float32 whatever the dtype of ``x``: a bfloat16 angle at position 4096 can
be off by 16 radians. Only the first ``r`` dimensions rotate; the rest of the head passes through.
"""

from __future__ import annotations

import torch
from torch import nn

from minimodel.messages import bilingual
from minimodel.validation import (
    require_above,
    require_choice,
    require_even,
    require_int,
    require_int_tensor,
    require_tensor,
)

CONVENTIONS = ("interleaved", "half")


def rope_frequencies(
    rotary_dim: int, base: float = 10000.0, *, device: torch.device | str | None = None
) -> torch.Tensor:
    """The inverse frequencies ``theta_i = base ** (-2i / rotary_dim)``, one per rotated pair.

    Args:
        rotary_dim: number of rotated dimensions ``r`` (even, ``>= 2``); the head dimension for a
            full rotation, less for a partial one.
        base: the base of the geometric frequencies (``> 1``); 10000 in most models.
        device: where to create the tensor (default: the CPU).

    Returns:
        Tensor of shape ``(rotary_dim // 2,)`` and dtype ``float32``, from ``1`` down to
        ``base ** (-(r - 2) / r)``.

    Raises:
        TypeError: ``rotary_dim`` is not an integer.
        ValueError: ``rotary_dim`` is odd or smaller than 2, or ``base <= 1``.
    """
    require_even("rotary_dim", rotary_dim)
    require_above("base", base, 1.0)
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar rope_frequencies (lección 17.03). Pista: los exponentes son "
        "0, 2, 4, ..., r-2 divididos entre r (torch.arange con paso 2). Devuelve 1 / "
        "base**exponente en float32.\n[en] rope_frequencies is not implemented yet (lesson "
        "17.03). Hint: the exponents are 0, 2, 4, ..., r-2 divided by r (torch.arange with "
        "step 2). Return 1 / base**exponent in float32."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def rope_cos_sin(
    positions: torch.Tensor, inv_freq: torch.Tensor, *, attention_factor: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Cosines and sines of the rotation angles ``p * theta_i``, computed in float32.

    Args:
        positions: integer tensor of shape ``(T,)`` (the same positions for the whole batch) or
            ``(B, T)`` (one row per sequence, e.g. with left padding).
        inv_freq: float tensor of shape ``(F,)``, from ``rope_frequencies``.
        attention_factor: multiplies both tables, so attention logits scale by its square (the
            temperature of YaRN and LongRoPE, lesson 18.02); ``1.0`` for plain RoPE.

    Returns:
        ``(cos, sin)``, each of shape ``positions.shape + (F,)`` and dtype ``float32``, on the
        device of ``positions``.

    Raises:
        ValueError: ``positions`` is not an integer tensor of 1 or 2 dimensions, ``inv_freq`` is
            not a 1-D float tensor, or ``attention_factor <= 0``.
    """
    require_int_tensor("positions", positions, "(T,) | (B, T)", (1, 2))
    require_tensor("inv_freq", inv_freq, "(F,)", 1)
    require_above("attention_factor", attention_factor, 0.0)
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar rope_cos_sin (lección 17.03). Pista: pasa positions e "
        "inv_freq a float32 (en el dispositivo de positions), forma los ángulos con forma "
        "(..., T, F) por difusión y toma coseno y seno; multiplica ambos por "
        "attention_factor.\n[en] rope_cos_sin is not implemented yet (lesson 17.03). Hint: "
        "cast positions and inv_freq to float32 (on the device of positions), form the "
        "angles of shape (..., T, F) by broadcasting, take cosine and sine, and multiply "
        "both by attention_factor."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def apply_rotary(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *, convention: str = "interleaved"
) -> torch.Tensor:
    """Rotate the first ``2F`` dimensions of ``x`` by precomputed angles.

    Pair ``i`` (``(2i, 2i+1)`` interleaved, ``(i, i+F)`` half) of the token at row ``t`` becomes
    ``(a cos - b sin, a sin + b cos)`` with ``cos = cos[t, i]`` and ``sin = sin[t, i]``.

    Args:
        x: queries or keys of shape ``(B, H, T, D)``, any float dtype, ``D`` even.
        cos, sin: float tables of shape ``(T, F)`` or ``(B, T, F)`` with ``2F <= D``, as returned
            by ``rope_cos_sin``.
        convention: ``"interleaved"`` or ``"half"``.

    Returns:
        Tensor with the shape, dtype and device of ``x``; dimensions ``2F .. D-1`` are copied
        unchanged. float16 and bfloat16 inputs are rotated in float32 and rounded once.

    Raises:
        ValueError: wrong shapes, an odd ``D``, ``2F > D`` or an unknown ``convention``.
    """
    _check_heads(x)
    require_choice("convention", convention, CONVENTIONS)
    require_tensor("cos", cos, "(T, F) | (B, T, F)", (2, 3))
    require_tensor("sin", sin, "(T, F) | (B, T, F)", (2, 3))
    B, _, T, D = x.shape
    if (
        cos.shape != sin.shape
        or cos.shape[-2] != T
        or 2 * cos.shape[-1] > D
        or (cos.dim() == 3 and cos.shape[0] != B)
    ):
        raise ValueError(
            bilingual(
                f"cos y sin deben tener la misma forma, (T, F) o (B, T, F) con T={T}, B={B} y "
                f"2F <= D={D}; recibí {tuple(cos.shape)} y {tuple(sin.shape)}.",
                f"cos and sin must have the same shape, (T, F) or (B, T, F) with T={T}, B={B} "
                f"and 2F <= D={D}; got {tuple(cos.shape)} and {tuple(sin.shape)}.",
            )
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar apply_rotary (lección 17.03). Pista: con F = cos.shape[-1], "
        "rota solo x[..., :2F] y deja el resto igual. En \"interleaved\", la pareja (2i, "
        "2i+1) es el número complejo a + ib (torch.view_as_complex): rotarla es "
        "multiplicarla por cos + i·sin. En \"half\", las mitades x[..., :F] y x[..., F:2F] "
        "son las partes real e imaginaria. Calcula en float32 si x es float16/bfloat16 y "
        "devuelve el dtype de x. Sin operaciones con out=: autograd debe poder derivar a "
        "través de la rotación.\n[en] apply_rotary is not implemented yet (lesson 17.03). "
        "Hint: with F = cos.shape[-1], rotate only x[..., :2F] and keep the rest as is. In "
        "\"interleaved\", pair (2i, 2i+1) is the complex number a + ib "
        "(torch.view_as_complex): rotating it is multiplying by cos + i·sin. In \"half\", "
        "the halves x[..., :F] and x[..., F:2F] are the real and imaginary parts. Compute in "
        "float32 if x is float16/bfloat16 and return x's dtype. No out= operations: autograd "
        "must be able to differentiate through the rotation."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def apply_rope(
    x: torch.Tensor,
    positions: torch.Tensor,
    inv_freq: torch.Tensor,
    *,
    convention: str = "interleaved",
    attention_factor: float = 1.0,
) -> torch.Tensor:
    """Rotate queries or keys by their positions: RoPE.

    Args:
        x: queries or keys of shape ``(B, H, T, D)``, any float dtype, ``D`` even.
        positions: integer tensor of shape ``(T,)`` or ``(B, T)``: the position of each row of
            ``x`` (with a KV cache, ``offset + arange(T)``).
        inv_freq: float tensor of shape ``(F,)`` with ``2F <= D``, from ``rope_frequencies``;
            ``2F < D`` rotates only the first ``2F`` dimensions (partial rotation, as GPT-NeoX).
        convention: ``"interleaved"`` (pairs ``(2i, 2i+1)``) or ``"half"`` (pairs ``(i, i+F)``).
        attention_factor: multiplies cos and sin (see ``rope_cos_sin``).

    Returns:
        Tensor with the shape, dtype and device of ``x``. The angles are float32 for every dtype
        of ``x``; ``positions`` and ``inv_freq`` are moved to ``x``'s device.

    Raises:
        ValueError: wrong shapes or dtypes (float positions), an odd ``D``, ``2F > D``, an
            unknown ``convention`` or ``attention_factor <= 0``.
    """
    _check_heads(x)
    require_int_tensor("positions", positions, "(T,) | (B, T)", (1, 2))
    require_tensor("inv_freq", inv_freq, "(F,)", 1)
    B, _, T, D = x.shape
    if positions.shape[-1] != T or (positions.dim() == 2 and positions.shape[0] != B):
        raise ValueError(
            bilingual(
                f"positions debe tener forma ({T},) o ({B}, {T}) para x de forma "
                f"{tuple(x.shape)}; recibí {tuple(positions.shape)}.",
                f"positions must have shape ({T},) or ({B}, {T}) for x of shape "
                f"{tuple(x.shape)}; got {tuple(positions.shape)}.",
            )
        )
    if 2 * inv_freq.shape[0] > D:
        raise ValueError(
            bilingual(
                f"inv_freq tiene {inv_freq.shape[0]} frecuencias, que rotan "
                f"{2 * inv_freq.shape[0]} dimensiones, pero la cabeza solo tiene D={D}.",
                f"inv_freq has {inv_freq.shape[0]} frequencies, which rotate "
                f"{2 * inv_freq.shape[0]} dimensions, but the head has only D={D}.",
            )
        )
    cos, sin = rope_cos_sin(
        positions.to(x.device), inv_freq.to(x.device), attention_factor=attention_factor
    )
    return apply_rotary(x, cos, sin, convention=convention)


def rope_permutation(D: int, rotary_dim: int | None = None) -> torch.Tensor:
    """The permutation of dimensions that turns the interleaved convention into the half one.

    With ``perm = rope_permutation(D)``, for every ``x`` of shape ``(B, H, T, D)``::

        apply_rope(x[..., perm], pos, f, convention="half")
            == apply_rope(x, pos, f, convention="interleaved")[..., perm]

    so a checkpoint trained with one convention runs with the other once the rows of ``W_q`` and
    ``W_k`` of every head are permuted the same way (what Hugging Face's LLaMA conversion does).
    ``torch.argsort(perm)`` goes back.

    Args:
        D: head dimension (even).
        rotary_dim: number of rotated dimensions ``r`` (even, ``<= D``); default ``D``.

    Returns:
        LongTensor of shape ``(D,)``: ``[0, 2, ..., r-2, 1, 3, ..., r-1, r, r+1, ..., D-1]``.

    Raises:
        ValueError: ``D`` or ``rotary_dim`` odd, or ``rotary_dim > D``.
    """
    require_even("D", D)
    r = D if rotary_dim is None else rotary_dim
    require_even("rotary_dim", r)
    if r > D:
        raise ValueError(
            bilingual(
                f"rotary_dim={r} no puede superar D={D}.", f"rotary_dim={r} cannot exceed D={D}."
            )
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar rope_permutation (lección 17.03). Pista: primero las "
        "dimensiones pares 0, 2, ..., r-2 (las partes reales), luego las impares 1, 3, ..., "
        "r-1, y por último r, ..., D-1 sin tocar.\n[en] rope_permutation is not implemented "
        "yet (lesson 17.03). Hint: first the even dimensions 0, 2, ..., r-2 (the real "
        "parts), then the odd ones 1, 3, ..., r-1, and finally r, ..., D-1 untouched."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


class RotaryEmbedding(nn.Module):
    """RoPE for a whole model: cos/sin tables computed once, sliced at an offset (KV cache).

    The tables are buffers (they follow ``.to(device)``) but are not saved in checkpoints, and
    they stay float32 when the model is cast to bfloat16 or float16: a cast rebuilds them.

    Args:
        rotary_dim: number of rotated dimensions per head (even); the head dimension for a full
            rotation.
        max_len: number of positions in the cached tables. Positions past it are not an error:
            RoPE has no length limit, so their angles are computed on the fly.
        base: base of the frequencies (``> 1``).
        convention: ``"interleaved"`` or ``"half"``.
        attention_factor: multiplies cos and sin (1.0 for plain RoPE).
        inv_freq: frequencies to use instead of ``rope_frequencies(rotary_dim, base)``, shape
            ``(rotary_dim // 2,)`` (e.g. from a scaling method of lesson 18.02).
    """

    def __init__(
        self,
        rotary_dim: int,
        max_len: int = 4096,
        base: float = 10000.0,
        convention: str = "interleaved",
        attention_factor: float = 1.0,
        inv_freq: torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        require_even("rotary_dim", rotary_dim)
        require_int("max_len", max_len, 1)
        require_above("base", base, 1.0)
        require_choice("convention", convention, CONVENTIONS)
        require_above("attention_factor", attention_factor, 0.0)
        if inv_freq is not None:
            require_tensor("inv_freq", inv_freq, f"({rotary_dim // 2},)", 1)
            if inv_freq.shape[0] != rotary_dim // 2:
                raise ValueError(
                    bilingual(
                        f"inv_freq debe tener {rotary_dim // 2} frecuencias (rotary_dim / 2); "
                        f"tiene {inv_freq.shape[0]}.",
                        f"inv_freq must have {rotary_dim // 2} frequencies (rotary_dim / 2); "
                        f"it has {inv_freq.shape[0]}.",
                    )
                )
            # A private float32 copy: casting the model must not round the frequencies. It stays
            # on its device (the meta device, when a model is built without memory).
            inv_freq = inv_freq.detach().to(dtype=torch.float32).clone()
        self.rotary_dim = rotary_dim
        self.max_len = max_len
        self.base = float(base)
        self.convention = convention
        self.attention_factor = float(attention_factor)
        self._given_inv_freq = inv_freq
        self._build_tables(device=None if inv_freq is None else inv_freq.device)

    def _build_tables(self, device: torch.device | None) -> None:
        """Build the float32 buffers ``inv_freq`` ``(F,)``, ``cos`` and ``sin`` ``(max_len, F)``."""
        # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
        raise NotImplementedError(
            "[es] Falta implementar RotaryEmbedding._build_tables (lección 17.03). Pista: "
            "obtén las frecuencias (self._given_inv_freq o rope_frequencies), calcula cos y "
            "sin de las posiciones 0 .. max_len-1 con rope_cos_sin y guárdalos con "
            "self.register_buffer(nombre, tensor, persistent=False).\n[en] "
            "RotaryEmbedding._build_tables is not implemented yet (lesson 17.03). Hint: get "
            "the frequencies (self._given_inv_freq or rope_frequencies), compute cos and sin "
            "of positions 0 .. max_len-1 with rope_cos_sin and store them with "
            "self.register_buffer(name, tensor, persistent=False)."
        )
        # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======

    def _apply(self, fn, recurse=True):  # noqa: ANN001 - nn.Module's own signature
        super()._apply(fn, recurse)
        # `model.to(torch.bfloat16)` casts every floating buffer; rounded frequencies would give
        # wrong angles at large positions, so a cast rebuilds the tables in float32.
        tables = [getattr(self, name, None) for name in ("inv_freq", "cos", "sin")]
        if any(t is not None and t.dtype != torch.float32 for t in tables):
            self._build_tables(device=self.cos.device)
        return self

    def forward(
        self, x: torch.Tensor, offset: int = 0, *, positions: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Rotate queries or keys whose first row sits at position ``offset``.

        Args:
            x: queries or keys of shape ``(B, H, T, D)`` with ``D >= rotary_dim``, any float
                dtype, any device.
            offset: position of the first row (the number of tokens already in the KV cache).
            positions: optional integer tensor ``(T,)`` or ``(B, T)`` of explicit positions
                (e.g. with left padding); when given, ``offset`` must be 0.

        Returns:
            Tensor with the shape, dtype and device of ``x``: rows ``offset .. offset + T - 1``
            rotated as ``apply_rope`` does.

        Raises:
            ValueError: wrong shape of ``x`` (``D`` odd or ``< rotary_dim``), ``offset < 0``, or
                both ``offset`` and ``positions`` given.
        """
        _check_heads(x)
        if x.shape[-1] < self.rotary_dim:
            raise ValueError(
                bilingual(
                    f"x tiene D={x.shape[-1]} dimensiones por cabeza, menos que "
                    f"rotary_dim={self.rotary_dim}.",
                    f"x has D={x.shape[-1]} dimensions per head, fewer than "
                    f"rotary_dim={self.rotary_dim}.",
                )
            )
        require_int("offset", offset, 0)
        if positions is not None:
            if offset:
                raise ValueError(
                    bilingual(
                        "Da offset o positions, no ambos.", "Give offset or positions, not both."
                    )
                )
            return apply_rope(
                x,
                positions,
                self.inv_freq,
                convention=self.convention,
                attention_factor=self.attention_factor,
            )
        # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
        raise NotImplementedError(
            "[es] Falta implementar RotaryEmbedding.forward (lección 17.03). Pista: si "
            "offset + T cabe en la tabla, toma las filas offset .. offset+T-1 de self.cos y "
            "self.sin; si no, calcúlalas con rope_cos_sin (crea las posiciones en el "
            "dispositivo de x). Luego usa apply_rotary.\n[en] RotaryEmbedding.forward is not "
            "implemented yet (lesson 17.03). Hint: if offset + T fits in the table, take "
            "rows offset .. offset+T-1 of self.cos and self.sin; otherwise compute them with "
            "rope_cos_sin (create the positions on x's device). Then use apply_rotary."
        )
        # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======

    def extra_repr(self) -> str:
        return (
            f"rotary_dim={self.rotary_dim}, max_len={self.max_len}, base={self.base:g}, "
            f"convention={self.convention!r}, attention_factor={self.attention_factor:g}"
        )


def as_complex_pairs(t: torch.Tensor) -> torch.Tensor:
    """View a float tensor ``(..., 2F)`` as complex ``(..., F)``: pair ``(2i, 2i+1)`` = ``a + ib``.

    A view, with no copy, whenever the memory layout allows it (always for a contiguous ``t``);
    otherwise a complex copy. Differentiable either way.
    """
    pairs = t.unflatten(-1, (-1, 2))
    odd = pairs.storage_offset() % 2 or any(s % 2 for s in pairs.stride()[:-1])
    if odd or pairs.stride(-1) != 1:
        pairs = pairs.contiguous()
    return torch.view_as_complex(pairs)


def _check_heads(x: object) -> None:
    """Queries or keys: a float tensor ``(B, H, T, D)`` with an even ``D``."""
    require_tensor("x", x, "(B, H, T, D)", 4)
    if x.shape[-1] % 2:
        raise ValueError(
            bilingual(
                f"La dimensión por cabeza D={x.shape[-1]} debe ser par para formar parejas.",
                f"The head dimension D={x.shape[-1]} must be even to form pairs.",
            )
        )

