"""RoPE scaling: new frequencies for a model trained at a shorter context. Lesson 18.02.

Each method is one small function that returns ``(inv_freq, attention_factor)``, with the same
call ``fn(rotary_dim, base, *, factor, original_max_len, seq_len, ...)``, and is registered by name
in ``SCALINGS`` (the pattern of Hugging Face's ``modeling_rope_utils``). The Mini-GPT picks one
with ``GPTConfig.rope_scaling``. ``factor`` is ``s = target length / original length``;
``original_max_len`` is ``L0``, the context length the model was trained at.

=================  ========================================================  ================
name               frequencies                                               attention factor
=================  ========================================================  ================
``"linear"``       ``theta_i / s``: position interpolation (Chen et al.       1
                   2023), the same as using positions ``p / s``
``"ntk"``          base ``b * s**(r / (r - 2))`` (bloc97, 2023): the          1
                   lowest frequency is divided by ``s``, the highest kept
``"dynamic_ntk"``  as ``"ntk"``, with the scale taken from the current        1
                   length ``seq_len`` (plain RoPE while ``seq_len <= L0``)
``"yarn"``         per-pair ramp between ``theta_i`` and ``theta_i / s``      ``0.1 ln s + 1``
                   (Peng et al. 2023)
``"llama3"``       per wavelength band: keep, blend, or divide by ``s``       1
                   (Meta's Llama 3.1)
``"longrope"``     ``theta_i / lambda_i``, one factor per pair, found by      ``sqrt(1 + ln s
                   search (Ding et al. 2024): ``short_factor`` up to         / ln L0)``
                   ``L0``, ``long_factor`` past it (Phi-3)
=================  ========================================================  ================

Conventions, where libraries differ:

- The attention factor multiplies both cos and sin (Hugging Face and the original YaRN code), so
  every query-key logit is multiplied by its square. Pass it to ``apply_rope``.
- ``"ntk"`` is the static base change of the original post; Hugging Face ships only the dynamic
  one (its ``"dynamic"``), whose formula ``"dynamic_ntk"`` follows, including the ``factor``.
- ``"dynamic_ntk"`` returns plain RoPE whenever ``seq_len <= L0`` (newer Hugging Face versions;
  older ones kept the enlarged base after a long sequence). ``seq_len=None`` means ``L0``.
- ``"yarn"``: the ramp's reference length is ``L0``, the original training length, not the
  extended context (an older Hugging Face copy and Megatron-LM used the latter); ``factor`` is the
  one given, never recomputed from lengths; ``truncate=True`` rounds the ramp's ends outwards
  (floor, ceil) as the original code does; the upper end is clamped to ``r - 1`` as in Hugging
  Face. DeepSeek's ``mscale``/``mscale_all_dim`` variant of the factor is not included.
- ``"longrope"`` takes the per-pair factors as inputs (the paper's search finds them; the course
  does not run it). It switches to ``long_factor`` only when ``seq_len > L0``, as Hugging Face's
  ``"longrope"``; without factors it uses ones up to ``L0`` and, past it, YaRN's per-pair factors
  ``theta_i / theta'_i``, the point the search starts from. The first tokens the paper keeps
  unscaled (its ``n-hat``) are not included, as in Phi-3 and Hugging Face.
- Every table is float32, of shape ``(rotary_dim // 2,)``, on the CPU; the model moves it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from minimodel.messages import bilingual
from minimodel.positional.rope import rope_frequencies
from minimodel.validation import require_above, require_even, require_int


def linear_scaling(
    rotary_dim: int,
    base: float = 10000.0,
    *,
    factor: float,
    original_max_len: int | None = None,
    seq_len: int | None = None,
) -> tuple[torch.Tensor, float]:
    """Position interpolation: every frequency divided by ``factor``.

    Rotating position ``p`` with ``theta_i / s`` gives exactly the angles of plain RoPE at position
    ``p / s``, so a sequence ``s`` times longer than ``L0`` only produces angles the model saw in
    training; neighbouring tokens end up ``1 / s`` of a position apart.

    Args:
        rotary_dim: number of rotated dimensions ``r`` (even).
        base: RoPE base (``> 1``).
        factor: ``s >= 1``.
        original_max_len, seq_len: not used (accepted so every method has the same call).

    Returns:
        ``(inv_freq, 1.0)``; ``inv_freq`` float32 of shape ``(rotary_dim // 2,)``.

    Raises:
        TypeError, ValueError: bad ``rotary_dim``, ``base`` or ``factor``.
    """
    _check_common(rotary_dim, base, factor)
    ### BEGIN SOLUTION
    ### HINT es: toma las frecuencias de rope_frequencies(rotary_dim, base) y divídelas entre
    ### HINT es: factor. El factor de atención es 1.0.
    ### HINT en: take the frequencies from rope_frequencies(rotary_dim, base) and divide them by
    ### HINT en: factor. The attention factor is 1.0.
    return rope_frequencies(rotary_dim, base) / factor, 1.0
    ### END SOLUTION


def ntk_scaling(
    rotary_dim: int,
    base: float = 10000.0,
    *,
    factor: float,
    original_max_len: int | None = None,
    seq_len: int | None = None,
) -> tuple[torch.Tensor, float]:
    """NTK-aware scaling: plain RoPE with the larger base ``base * factor ** (r / (r - 2))``.

    The exponent is chosen so that the slowest pair, ``theta_{r/2-1} = base ** (-(r-2)/r)``, is
    divided by exactly ``factor``, while pair 0 (frequency 1) is untouched; the pairs in between
    are divided by ``factor ** (2i / (r - 2))``.

    Args:
        rotary_dim: number of rotated dimensions ``r`` (even, ``>= 4``: with one pair the base
            would not change anything).
        base: RoPE base (``> 1``).
        factor: ``s >= 1``.
        original_max_len, seq_len: not used.

    Returns:
        ``(inv_freq, 1.0)``; ``inv_freq`` float32 of shape ``(rotary_dim // 2,)``.

    Raises:
        TypeError, ValueError: bad ``rotary_dim`` (or ``< 4``), ``base`` or ``factor``.
    """
    _check_common(rotary_dim, base, factor)
    require_int("rotary_dim", rotary_dim, 4)
    ### BEGIN SOLUTION
    ### HINT es: calcula la nueva base, base * factor ** (r / (r - 2)), y llama a
    ### HINT es: rope_frequencies con ella. El factor de atención es 1.0.
    ### HINT en: compute the new base, base * factor ** (r / (r - 2)), and call rope_frequencies
    ### HINT en: with it. The attention factor is 1.0.
    new_base = base * factor ** (rotary_dim / (rotary_dim - 2))
    return rope_frequencies(rotary_dim, new_base), 1.0
    ### END SOLUTION


def dynamic_ntk_scaling(
    rotary_dim: int,
    base: float = 10000.0,
    *,
    factor: float,
    original_max_len: int | None = None,
    seq_len: int | None = None,
) -> tuple[torch.Tensor, float]:
    """Dynamic NTK: the base grows with the current sequence length; plain RoPE up to ``L0``.

    With ``L = max(seq_len, L0)`` (Hugging Face's ``"dynamic"``)::

        base' = base * (factor * L / L0 - (factor - 1)) ** (r / (r - 2))

    so ``base' = base`` at ``L = L0`` and, for ``factor = 1``, ``base * (L / L0) ** (r/(r-2))``.

    Args:
        rotary_dim: number of rotated dimensions ``r`` (even, ``>= 4``).
        base: RoPE base (``> 1``).
        factor: ``s >= 1``: how fast the base grows past ``L0``.
        original_max_len: ``L0``, the training context length (required).
        seq_len: the length being processed now (positions ``0 .. seq_len - 1``); ``None`` means
            ``L0``.

    Returns:
        ``(inv_freq, 1.0)``; ``inv_freq`` float32 of shape ``(rotary_dim // 2,)``.

    Raises:
        TypeError, ValueError: bad arguments, or no ``original_max_len``.
    """
    _check_common(rotary_dim, base, factor)
    require_int("rotary_dim", rotary_dim, 4)
    _check_original_max_len("dynamic_ntk", original_max_len)
    if seq_len is not None:
        require_int("seq_len", seq_len, 1)
    ### BEGIN SOLUTION
    ### HINT es: si seq_len es None o no pasa de original_max_len, devuelve RoPE sin cambios.
    ### HINT es: Si no, calcula base' con la fórmula del docstring y llama a rope_frequencies.
    ### HINT en: if seq_len is None or not above original_max_len, return plain RoPE.
    ### HINT en: Otherwise compute base' with the docstring's formula and call rope_frequencies.
    if seq_len is None or seq_len <= original_max_len:
        return rope_frequencies(rotary_dim, base), 1.0
    scale = factor * seq_len / original_max_len - (factor - 1)
    new_base = base * scale ** (rotary_dim / (rotary_dim - 2))
    return rope_frequencies(rotary_dim, new_base), 1.0
    ### END SOLUTION


def yarn_correction_range(
    rotary_dim: int,
    base: float,
    original_max_len: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    *,
    truncate: bool = True,
) -> tuple[float, float]:
    """The pairs where YaRN's ramp starts and ends, ``(lo, hi)``.

    Pair ``i`` turns ``L0 * theta_i / (2 pi)`` times over the training length ``L0``. The pair
    that turns exactly ``n`` times is at the (fractional) index::

        i(n) = r * ln(L0 / (2 pi n)) / (2 ln base)

    ``lo = i(beta_fast)``: pairs up to it turn at least ``beta_fast`` times and are kept.
    ``hi = i(beta_slow)``: pairs from it on turn at most ``beta_slow`` times and are interpolated.
    With ``truncate`` they are rounded outwards (``floor(lo)``, ``ceil(hi)``). Then
    ``lo = max(lo, 0)``, ``hi = min(hi, r - 1)``, and ``hi`` is nudged by ``0.001`` if the two meet.

    Args:
        rotary_dim: number of rotated dimensions ``r`` (even).
        base: RoPE base (``> 1``).
        original_max_len: ``L0``, the training context length.
        beta_fast, beta_slow: turns over ``L0`` that bound the ramp (``beta_fast > beta_slow > 0``;
            the paper's ``beta = 32`` and ``alpha = 1``).
        truncate: round the ends to integers, as the original code does.

    Returns:
        ``(lo, hi)`` as Python floats, ``0 <= lo < hi <= r - 1``.

    Raises:
        TypeError, ValueError: bad arguments.
    """
    require_even("rotary_dim", rotary_dim)
    require_above("base", base, 1.0)
    _check_original_max_len("yarn", original_max_len)
    require_above("beta_slow", beta_slow, 0.0)
    require_above("beta_fast", beta_fast, float(beta_slow))

    ### BEGIN SOLUTION
    ### HINT es: escribe i(n) con math.log; lo = i(beta_fast), hi = i(beta_slow). Con truncate,
    ### HINT es: math.floor(lo) y math.ceil(hi). Recorta a [0, r - 1] y, si lo == hi, suma
    ### HINT es: 0.001 a hi. Devuelve dos float.
    ### HINT en: write i(n) with math.log; lo = i(beta_fast), hi = i(beta_slow). With truncate,
    ### HINT en: math.floor(lo) and math.ceil(hi). Clamp to [0, r - 1] and, if lo == hi, add
    ### HINT en: 0.001 to hi. Return two floats.
    def pair_turning(turns: float) -> float:
        wavelength = original_max_len / turns  # a pair of this wavelength turns `turns` times
        return rotary_dim * math.log(wavelength / (2 * math.pi)) / (2 * math.log(base))

    lo, hi = pair_turning(beta_fast), pair_turning(beta_slow)
    if truncate:
        lo, hi = math.floor(lo), math.ceil(hi)
    lo, hi = max(float(lo), 0.0), min(float(hi), float(rotary_dim - 1))
    if lo == hi:
        hi += 0.001  # avoid dividing by zero in the ramp
    return lo, hi
    ### END SOLUTION


def yarn_scaling(
    rotary_dim: int,
    base: float = 10000.0,
    *,
    factor: float,
    original_max_len: int | None = None,
    seq_len: int | None = None,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
    attention_factor: float | None = None,
) -> tuple[torch.Tensor, float]:
    """YaRN: a per-pair ramp between plain RoPE and interpolation, plus an attention factor.

    With ``(lo, hi) = yarn_correction_range(...)`` and, for pair ``i``,
    ``ramp_i = clamp((i - lo) / (hi - lo), 0, 1)``::

        inv_freq_i = theta_i * (1 - ramp_i) + (theta_i / s) * ramp_i

    Fast pairs (``i <= lo``) keep their frequency, slow pairs (``i >= hi``) are divided by ``s``,
    and the pairs between are blended linearly in ``i``. The attention factor
    ``0.1 ln s + 1`` (``1`` when ``s <= 1``) multiplies cos and sin, so logits scale by its square.

    Args:
        rotary_dim: number of rotated dimensions ``r`` (even).
        base: RoPE base (``> 1``).
        factor: ``s >= 1``.
        original_max_len: ``L0``, the training context length (required).
        seq_len: not used.
        beta_fast, beta_slow, truncate: see ``yarn_correction_range``.
        attention_factor: use this factor instead of ``0.1 ln s + 1`` (``> 0``).

    Returns:
        ``(inv_freq, attention_factor)``; ``inv_freq`` float32 of shape ``(rotary_dim // 2,)``.

    Raises:
        TypeError, ValueError: bad arguments, or no ``original_max_len``.
    """
    _check_common(rotary_dim, base, factor)
    _check_original_max_len("yarn", original_max_len)
    if attention_factor is not None:
        require_above("attention_factor", attention_factor, 0.0)
    ### BEGIN SOLUTION
    ### HINT es: obtén (lo, hi) con yarn_correction_range, calcula la rampa para
    ### HINT es: i = 0 .. r/2 - 1 con torch.arange y .clamp(0, 1), y mezcla theta_i y
    ### HINT es: theta_i / factor. Si attention_factor es None, usa 0.1 * math.log(factor) + 1
    ### HINT es: (1.0 si factor <= 1).
    ### HINT en: get (lo, hi) from yarn_correction_range, compute the ramp for
    ### HINT en: i = 0 .. r/2 - 1 with torch.arange and .clamp(0, 1), and blend theta_i and
    ### HINT en: theta_i / factor. If attention_factor is None, use 0.1 * math.log(factor) + 1
    ### HINT en: (1.0 if factor <= 1).
    lo, hi = yarn_correction_range(
        rotary_dim, base, original_max_len, beta_fast, beta_slow, truncate=truncate
    )
    inv_freq = rope_frequencies(rotary_dim, base)  # (r/2,)
    pair = torch.arange(rotary_dim // 2, dtype=torch.float32)
    ramp = ((pair - lo) / (hi - lo)).clamp(0.0, 1.0)  # 0: keep, 1: interpolate
    inv_freq = inv_freq * (1 - ramp) + (inv_freq / factor) * ramp
    if attention_factor is None:
        attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    return inv_freq, float(attention_factor)
    ### END SOLUTION


def llama3_scaling(
    rotary_dim: int,
    base: float = 10000.0,
    *,
    factor: float,
    original_max_len: int | None = None,
    seq_len: int | None = None,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
) -> tuple[torch.Tensor, float]:
    """Llama 3.1's per-band scaling, decided by each pair's wavelength ``2 pi / theta_i``.

    With ``short = L0 / high_freq_factor`` and ``long = L0 / low_freq_factor``:

    - wavelength ``< short``: kept (``theta_i``);
    - wavelength ``> long``: divided (``theta_i / s``);
    - otherwise blended: ``(1 - w) theta_i / s + w theta_i`` with
      ``w = (L0 / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)``,
      which is 1 at ``short`` and 0 at ``long``, so the result is continuous.

    Meta's Llama 3.1 uses ``factor=8``, ``low_freq_factor=1``, ``high_freq_factor=4``,
    ``L0=8192`` and ``base=500000``.

    Args:
        rotary_dim: number of rotated dimensions ``r`` (even).
        base: RoPE base (``> 1``).
        factor: ``s >= 1``.
        original_max_len: ``L0``, the training context length (required).
        seq_len: not used.
        low_freq_factor, high_freq_factor: ``0 < low < high``.

    Returns:
        ``(inv_freq, 1.0)``; ``inv_freq`` float32 of shape ``(rotary_dim // 2,)``.

    Raises:
        TypeError, ValueError: bad arguments, or no ``original_max_len``.
    """
    _check_common(rotary_dim, base, factor)
    _check_original_max_len("llama3", original_max_len)
    require_above("low_freq_factor", low_freq_factor, 0.0)
    require_above("high_freq_factor", high_freq_factor, float(low_freq_factor))
    ### BEGIN SOLUTION
    ### HINT es: calcula las longitudes de onda 2π/theta y, con torch.where, elige para cada
    ### HINT es: pareja entre theta, theta / factor y la mezcla con el peso w del docstring.
    ### HINT en: compute the wavelengths 2π/theta and, with torch.where, choose for each pair
    ### HINT en: between theta, theta / factor and the blend with the docstring's weight w.
    inv_freq = rope_frequencies(rotary_dim, base)  # (r/2,)
    wavelength = 2 * math.pi / inv_freq
    short = original_max_len / high_freq_factor
    long = original_max_len / low_freq_factor
    w = (original_max_len / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1 - w) * inv_freq / factor + w * inv_freq
    scaled = torch.where(wavelength > long, inv_freq / factor, blended)
    return torch.where(wavelength < short, inv_freq, scaled), 1.0
    ### END SOLUTION


def longrope_scaling(
    rotary_dim: int,
    base: float = 10000.0,
    *,
    factor: float,
    original_max_len: int | None = None,
    seq_len: int | None = None,
    short_factor: Sequence[float] | torch.Tensor | None = None,
    long_factor: Sequence[float] | torch.Tensor | None = None,
    attention_factor: float | None = None,
) -> tuple[torch.Tensor, float]:
    """LongRoPE: every pair divided by its own factor, one set for short inputs and one for long.

    With ``lambda = long_factor`` when ``seq_len > L0`` and ``lambda = short_factor`` otherwise
    (``seq_len=None`` included)::

        inv_freq_i = theta_i / lambda_i = 1 / (lambda_i * base ** (2i / r))

    ``lambda_i = 1`` keeps pair ``i``; ``lambda_i = s`` interpolates it like position
    interpolation. The attention factor ``sqrt(1 + ln s / ln L0)`` (``1`` when ``s <= 1``)
    multiplies cos and sin, as YaRN's does; it depends on ``s`` only, not on which set is used.

    Args:
        rotary_dim: number of rotated dimensions ``r`` (even).
        base: RoPE base (``> 1``).
        factor: ``s >= 1``, the extended length over ``L0`` (for the attention factor and the
            default ``long_factor``).
        original_max_len: ``L0``, the training context length (required, ``>= 2``): the switch.
        seq_len: the length being processed now; ``None`` means ``L0`` (short factors).
        short_factor, long_factor: ``r // 2`` positive numbers each, one per pair (lists,
            tuples or tensors), as a searched configuration gives them. ``None``: all ones for
            ``short_factor``; for ``long_factor``, YaRN's per-pair factors at this ``factor``
            and ``L0``, so that the long frequencies are ``yarn_scaling``'s.
        attention_factor: use this factor instead of ``sqrt(1 + ln s / ln L0)`` (``> 0``).

    Returns:
        ``(inv_freq, attention_factor)``; ``inv_freq`` float32 of shape ``(rotary_dim // 2,)``.

    Raises:
        TypeError, ValueError: bad arguments, no ``original_max_len``, or factors that are not
        ``r // 2`` positive numbers.
    """
    _check_common(rotary_dim, base, factor)
    _check_original_max_len("longrope", original_max_len)
    require_int("original_max_len", original_max_len, 2)
    if seq_len is not None:
        require_int("seq_len", seq_len, 1)
    for name, values in (("short_factor", short_factor), ("long_factor", long_factor)):
        _check_pair_factors(name, values, rotary_dim)
    if attention_factor is not None:
        require_above("attention_factor", attention_factor, 0.0)
    ### BEGIN SOLUTION
    ### HINT es: elige los factores: long_factor si seq_len no es None y pasa de original_max_len,
    ### HINT es: si no short_factor. Conviértelos con torch.as_tensor(..., dtype=torch.float32) y
    ### HINT es: divide rope_frequencies(rotary_dim, base) entre ellos. Si short_factor es None,
    ### HINT es: no cambies nada; si long_factor es None, usa las frecuencias de yarn_scaling
    ### HINT es: (mismos factor y original_max_len). Si attention_factor es None, usa
    ### HINT es: math.sqrt(1 + math.log(factor) / math.log(original_max_len)) (1.0 si factor <= 1).
    ### HINT en: choose the factors: long_factor if seq_len is not None and above
    ### HINT en: original_max_len, else short_factor. Convert them with
    ### HINT en: torch.as_tensor(..., dtype=torch.float32) and divide
    ### HINT en: rope_frequencies(rotary_dim, base) by them. If short_factor is None, change
    ### HINT en: nothing; if long_factor is None, use yarn_scaling's frequencies (same factor and
    ### HINT en: original_max_len). If attention_factor is None, use
    ### HINT en: math.sqrt(1 + math.log(factor) / math.log(original_max_len)) (1.0 if factor <= 1).
    theta = rope_frequencies(rotary_dim, base)  # (r/2,)
    if seq_len is not None and seq_len > original_max_len:  # past L0: the long set
        if long_factor is None:
            inv_freq, _ = yarn_scaling(
                rotary_dim, base, factor=factor, original_max_len=original_max_len
            )
        else:
            inv_freq = theta / torch.as_tensor(long_factor, dtype=torch.float32)
    elif short_factor is None:
        inv_freq = theta
    else:
        inv_freq = theta / torch.as_tensor(short_factor, dtype=torch.float32)
    if attention_factor is None:
        attention_factor = (
            math.sqrt(1 + math.log(factor) / math.log(original_max_len)) if factor > 1 else 1.0
        )
    return inv_freq, float(attention_factor)
    ### END SOLUTION


SCALINGS: dict[str, Callable[..., tuple[torch.Tensor, float]]] = {
    "linear": linear_scaling,
    "ntk": ntk_scaling,
    "dynamic_ntk": dynamic_ntk_scaling,
    "yarn": yarn_scaling,
    "llama3": llama3_scaling,
    "longrope": longrope_scaling,
}


def get_scaling(name: str) -> Callable[..., tuple[torch.Tensor, float]]:
    """The scaling registered as ``name`` in ``SCALINGS``, with a clear error for unknown names."""
    if name not in SCALINGS:
        known = ", ".join(repr(key) for key in SCALINGS)
        raise ValueError(
            bilingual(
                f"No hay un escalado de RoPE llamado {name!r}. Escalados: {known}.",
                f"There is no RoPE scaling named {name!r}. Scalings: {known}.",
            )
        )
    return SCALINGS[name]


def _check_common(rotary_dim: object, base: object, factor: object) -> None:
    require_even("rotary_dim", rotary_dim)
    require_above("base", base, 1.0)
    number = isinstance(factor, (int, float)) and not isinstance(factor, bool)
    if not number or not factor >= 1:
        raise ValueError(
            bilingual(
                f"factor es s = longitud nueva / longitud de entrenamiento y debe ser un número "
                f">= 1; recibí {factor!r}.",
                f"factor is s = new length / training length and must be a number >= 1; "
                f"got {factor!r}.",
            )
        )


def _check_original_max_len(method: str, original_max_len: object) -> None:
    if original_max_len is None:
        raise ValueError(
            bilingual(
                f"El escalado {method!r} necesita original_max_len: la longitud de contexto con "
                "la que se entrenó el modelo.",
                f"The {method!r} scaling needs original_max_len: the context length the model "
                "was trained at.",
            )
        )
    require_int("original_max_len", original_max_len, 1)


def _check_pair_factors(name: str, values: object, rotary_dim: int) -> None:
    """``None``, or ``rotary_dim // 2`` finite numbers above 0 (a list, tuple or tensor)."""
    if values is None:
        return
    pairs = rotary_dim // 2
    try:
        numbers = torch.as_tensor(values, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        numbers = None
    if numbers is None or numbers.shape != (pairs,) or not bool(
        torch.isfinite(numbers).all() and (numbers > 0).all()
    ):
        raise ValueError(
            bilingual(
                f"{name} debe tener un número positivo por pareja rotada: {pairs} "
                f"(rotary_dim // 2); recibí {values!r}.",
                f"{name} must hold one positive number per rotated pair: {pairs} "
                f"(rotary_dim // 2); got {values!r}.",
            )
        )
