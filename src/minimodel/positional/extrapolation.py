# ---------------------------------------------------------------------------------------------
# [es] Completa los bloques marcados "TU CÓDIGO" (lección 18.01). Este archivo es tuyo: una
#      vez que lo editas, ninguna orden del curso lo sobrescribe.
# [en] Fill in the blocks marked "YOUR CODE" (lesson 18.01). This file is yours: once you
#      edit it, no course command overwrites it.
# minimodel-generated:5c4265bfa4a5
# ---------------------------------------------------------------------------------------------
"""Measuring extrapolation: the loss by position, where it breaks, how far back a model reaches.
Lesson 18.01.

A model trained on sequences of ``T`` tokens and evaluated on longer ones meets positions (and
distances) it never saw. One mean loss over a long window mixes the positions it knows with the
new ones, so the measurements here keep the position:

- ``doubling_buckets`` and ``bucket_means``: the mean loss over ``[0, T)``, ``[T, 2T)``,
  ``[2T, 4T)``, ... (each bucket twice as long as the previous one);
- ``failure_position``: the first position past ``T`` where a trailing average of the loss rises
  clearly above what the model achieves inside ``T``;
- ``needle_distance``: in the passkey task, how many positions separate the tokens that predict
  the passkey from the needle that holds it, for a given length and needle depth.
"""

from __future__ import annotations

import torch

from minimodel.messages import bilingual
from minimodel.validation import require_int, require_tensor


def doubling_buckets(train_len: int, length: int) -> list[tuple[int, int]]:
    """Position buckets ``[0, T), [T, 2T), [2T, 4T), ...`` that cover ``0 .. length - 1``.

    Args:
        train_len: the training length ``T`` (``>= 1``).
        length: the evaluation length (``>= 1``).

    Returns:
        List of ``(start, end)`` pairs of Python ints, half-open, in order, that tile
        ``[0, length)``: the first is ``(0, min(T, length))``; each later one starts where the
        previous one ended and ends at twice its start, except the last, which is cut at
        ``length``. E.g. ``T = 128, length = 1024``:
        ``[(0, 128), (128, 256), (256, 512), (512, 1024)]``; ``T = 128, length = 300``:
        ``[(0, 128), (128, 256), (256, 300)]``.

    Raises:
        TypeError: ``train_len`` or ``length`` is not an integer.
        ValueError: ``train_len < 1`` or ``length < 1``.
    """
    require_int("train_len", train_len, 1)
    require_int("length", length, 1)
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar doubling_buckets (lección 18.01). Pista: bordes 0, T, 2T, "
        "4T, ... mientras el último sea menor que length; recorta el último borde a length y "
        "empareja bordes consecutivos.\n[en] doubling_buckets is not implemented yet (lesson "
        "18.01). Hint: edges 0, T, 2T, 4T, ... while the last one is below length; cut the "
        "last edge at length and pair consecutive edges."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def bucket_means(loss: torch.Tensor, buckets: list[tuple[int, int]]) -> torch.Tensor:
    """Mean loss in each position bucket, skipping positions without a target.

    Args:
        loss: float tensor of shape ``(N, L)`` (one row per sequence) or ``(L,)`` (one curve),
            with ``NaN`` where a position has no target (as ``minimodel.evaluate.token_losses``
            returns it).
        buckets: half-open ``(start, end)`` position ranges inside ``[0, L)``, e.g. from
            ``doubling_buckets``.

    Returns:
        Tensor of shape ``(len(buckets),)``, dtype ``float32``: entry ``b`` is the mean of every
        non-NaN value of ``loss[..., start_b:end_b]`` (all sequences and positions together),
        ``NaN`` if the bucket holds no target.

    Raises:
        ValueError: ``loss`` is not a 1-D or 2-D float tensor, or a bucket is empty, reversed or
            outside ``[0, L)``.
    """
    require_tensor("loss", loss, "(N, L) or (L,)", (1, 2))
    L = loss.shape[-1]
    for start, end in buckets:
        if not 0 <= start < end <= L:
            raise ValueError(
                bilingual(
                    f"Cada cubeta (inicio, fin) debe cumplir 0 <= inicio < fin <= {L}; "
                    f"recibí ({start}, {end}).",
                    f"Each bucket (start, end) must satisfy 0 <= start < end <= {L}; "
                    f"got ({start}, {end}).",
                )
            )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar bucket_means (lección 18.01). Pista: para cada cubeta, "
        "torch.nanmean de loss[..., inicio:fin] (ignora los NaN); apila los resultados en un "
        "tensor float32.\n[en] bucket_means is not implemented yet (lesson 18.01). Hint: for "
        "each bucket, torch.nanmean of loss[..., start:end] (it skips NaNs); stack the "
        "results into a float32 tensor."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def failure_position(
    per_position: torch.Tensor, train_len: int, *, tolerance: float, window: int
) -> int | None:
    """First position at or past ``train_len`` where the loss has clearly risen.

    The reference is the mean loss over the second half of the training range,
    ``[train_len // 2, train_len)``: trained positions that already have plenty of context. The
    curve is smoothed with a trailing mean, ``smooth[p] = mean(per_position[p - window + 1 .. p])``
    (fewer terms near 0; ``NaN`` values skipped), which only uses positions up to ``p``.

    Args:
        per_position: float tensor ``(L,)``, the loss at each position averaged over sequences,
            ``NaN`` where there is no target; ``L >= train_len``.
        train_len: the training length ``T`` (``>= 2``).
        tolerance: how far above the reference counts as failing, in nats (``>= 0``).
        window: number of positions of the trailing mean (``>= 1``).

    Returns:
        The smallest ``p`` with ``train_len <= p < L`` and ``smooth[p] > reference + tolerance``,
        as a Python ``int``; ``None`` when no position qualifies.

    Raises:
        ValueError: ``per_position`` is not a 1-D float tensor of at least ``train_len`` values,
            ``train_len < 2``, ``window < 1`` or ``tolerance < 0``.
        TypeError: ``train_len`` or ``window`` is not an integer.
    """
    require_tensor("per_position", per_position, "(L,)", 1)
    require_int("train_len", train_len, 2)
    require_int("window", window, 1)
    if not tolerance >= 0:
        raise ValueError(
            bilingual(
                f"tolerance debe ser >= 0; recibí {tolerance}.",
                f"tolerance must be >= 0; got {tolerance}.",
            )
        )
    if per_position.shape[0] < train_len:
        raise ValueError(
            bilingual(
                f"per_position tiene {per_position.shape[0]} posiciones, menos que "
                f"train_len = {train_len}.",
                f"per_position has {per_position.shape[0]} positions, fewer than "
                f"train_len = {train_len}.",
            )
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar failure_position (lección 18.01). Pista: referencia = media "
        "(sin NaN) de per_position[T//2:T]. Para p = T, T+1, ... calcula la media sin NaN de "
        "per_position[max(0, p-window+1) : p+1] y devuelve int(p) en cuanto supere "
        "referencia + tolerance; si nunca, None.\n[en] failure_position is not implemented "
        "yet (lesson 18.01). Hint: reference = NaN-skipping mean of per_position[T//2:T]. "
        "For p = T, T+1, ... compute the NaN-skipping mean of per_position[max(0, "
        "p-window+1) : p+1] and return int(p) as soon as it exceeds reference + tolerance; "
        "if never, None."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======


def needle_distance(length: int, depth: float, n_digits: int = 5) -> int:
    """How far back the passkey is, for a passkey sequence of ``length`` inputs.

    The task (``minimodel.data.tasks.PasskeyTask``) lays out ``length + 1`` tokens as
    ``BOS, filler[:w], MARK, d_1 .. d_k, filler[w:], QUERY, d_1 .. d_k`` with ``k = n_digits``,
    ``F = length - 2k - 2`` filler tokens and ``w = round(depth * F)`` of them before the needle
    (Python's ``round``, as the task does). The model predicts digit ``d_m`` at the token just
    before its copy after ``QUERY``; the needle's ``d_m`` is the token it must retrieve.

    Args:
        length: number of input tokens (``>= 2k + 4``, the task's minimum).
        depth: where the needle sits in the filler, from ``0.0`` (start, farthest from the
            query) to ``1.0`` (end, right before the query).
        n_digits: the number of digits ``k`` of the passkey (``>= 1``).

    Returns:
        The distance in positions, a Python ``int``, the same for every digit:
        ``length - k - 2 - w``. It is ``k`` at depth 1 and ``length - k - 2`` at depth 0.

    Raises:
        TypeError: ``length`` or ``n_digits`` is not an integer.
        ValueError: ``length`` below the minimum or ``depth`` outside ``[0, 1]``.
    """
    require_int("n_digits", n_digits, 1)
    require_int("length", length, 2 * n_digits + 4)
    if not 0.0 <= depth <= 1.0:
        raise ValueError(
            bilingual(
                f"depth debe estar entre 0 y 1; recibí {depth}.",
                f"depth must be between 0 and 1; got {depth}.",
            )
        )
    # ====== INICIO DE TU CÓDIGO / START OF YOUR CODE ======
    raise NotImplementedError(
        "[es] Falta implementar needle_distance (lección 18.01). Pista: cuenta índices: "
        "QUERY está en length - k y la cifra d_1 de la aguja en w + 2 (tras BOS, el relleno "
        "y MARK). Cada cifra siguiente avanza uno en ambos.\n[en] needle_distance is not "
        "implemented yet (lesson 18.01). Hint: count indices: QUERY is at length - k and the "
        "needle's digit d_1 at w + 2 (after BOS, the filler and MARK). Each later digit "
        "moves both by one."
    )
    # ====== FIN DE TU CÓDIGO / END OF YOUR CODE ======
