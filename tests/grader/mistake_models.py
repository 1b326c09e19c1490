"""Independent NumPy models of the classic mistakes that the diagnosis tests write into the
reference's source (18.01's ``extrapolation.py``, 18.03's ``cache_positions.py``): which hidden
cases each one changes, computed without the catalogue or the judges."""

from __future__ import annotations

import math
import warnings

import numpy as np

# --- 18.01: extrapolation ------------------------------------------------------------------------

def buckets(train_len: int, length: int, mistake: str | None = None) -> list[int]:
    """The flattened ``(start, end)`` pairs, or one of the usual mistakes."""
    if mistake == "linear":
        edges = list(range(0, length, train_len)) + [length]
    elif mistake == "not-cut":
        edges = [0, train_len]
        while edges[-1] < length:
            edges.append(2 * edges[-1])
    else:
        edges = [0, min(train_len, length)]
        while edges[-1] < length:
            edges.append(min(2 * edges[-1], length))
    return [v for pair in zip(edges[:-1], edges[1:], strict=True) for v in pair]


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # means of empty or all-NaN slices
        return function(*args, **kwargs)


def means(loss: np.ndarray, spans, mistake: str | None = None) -> np.ndarray:
    """The mean loss per bucket (float64), or one of the usual mistakes."""
    loss = np.asarray(loss, dtype=np.float64)
    rows = loss if loss.ndim == 2 else loss[None, :]
    out = []
    for start, end in spans:
        part = rows[:, start:end]
        if mistake == "mean-of-means":
            out.append(_quiet(np.nanmean, _quiet(np.nanmean, part, axis=1)))
        elif mistake == "nan-not-skipped":
            out.append(part.mean())
        elif mistake == "nan-as-zero":
            out.append(np.nan_to_num(part, nan=0.0).mean())
        else:
            out.append(_quiet(np.nanmean, part))
    return np.array(out)


def failure(curve, train_len: int, tolerance: float, window: int,
            mistake: str | None = None) -> int | None:
    """The first failing position (float64, as the reference), or one of the usual mistakes."""
    c = np.asarray(curve, dtype=np.float64)
    mean = np.mean if mistake == "nan-not-skipped" else np.nanmean
    ref_start = 0 if mistake == "reference-from-start" else train_len // 2
    reference = _quiet(mean, c[ref_start:train_len])
    start = 0 if mistake == "search-from-zero" else train_len
    for p in range(start, len(c)):
        lo, hi = max(0, p - window + 1), p + 1
        if mistake == "centred":
            lo, hi = max(0, p - window // 2), p + (window + 1) // 2
        elif mistake == "forward":
            lo, hi = p, p + window
        elif mistake == "no-smoothing":
            lo, hi = p, p + 1
        smooth = _quiet(mean, c[lo:hi])
        if smooth >= reference + tolerance if mistake == "greater-equal" else \
                smooth > reference + tolerance:
            return p - window + 1 if mistake == "window-start" else p
    return None


def needle(length: int, depth: float, k: int = 5, mistake: str | None = None) -> int:
    """The passkey distance, or one of the usual mistakes."""
    if mistake == "digits-fixed":
        k = 5
    filler = length - 2 * k - 2
    if mistake == "truncated":
        before = int(depth * filler)
    elif mistake == "half-up":
        before = math.floor(depth * filler + 0.5)
    else:
        before = round(depth * filler)
    return length - k - 2 - before + (1 if mistake == "off-by-one" else 0)


# --- 18.03: cache positions ----------------------------------------------------------------------

def positions(cache_len: int, q_len: int, mistake: str | None = None) -> np.ndarray:
    start = {"restart": 0, "chunk-restart": 0, "off-by-one": cache_len + 1}.get(mistake,
                                                                                cache_len)
    return np.arange(start, start + q_len)


def relative(cache_len: int, q_len: int, mistake: str | None = None) -> np.ndarray:
    k_len = cache_len + q_len
    keys = np.arange(cache_len if mistake == "new-keys-only" else 0, k_len)
    if mistake == "chunk-restart":  # the cached keys keep 0 .. c-1, the new ones restart at 0
        keys = np.concatenate([np.arange(cache_len), np.arange(q_len)])
    rel = keys[None, :] - positions(cache_len, q_len, mistake)[:, None]
    return -rel if mistake == "sign" else rel


def mask(cache_len: int, q_len: int, mistake: str | None = None) -> np.ndarray:
    rel = relative(cache_len, q_len, "restart" if mistake == "top-left" else None)
    blocked = rel >= 0 if mistake == "strict" else rel > (1 if mistake == "off-by-one" else 0)
    return np.where(blocked, -np.inf, 0.0)


def rows(table: np.ndarray, cache_len: int, q_len: int, mistake: str | None = None) -> np.ndarray:
    k_len, M = cache_len + q_len, table.shape[-1]
    if mistake == "first-rows":
        return table[..., :q_len, :k_len]
    if mistake == "last-rows":
        return table[..., M - q_len:, :k_len]
    if mistake == "off-by-one":
        return table[..., cache_len + 1 : k_len + 1, :k_len]
    if mistake == "all-columns":
        return table[..., cache_len:k_len, :]
    if mistake == "new-keys-only":
        return table[..., cache_len:k_len, cache_len:k_len]
    return table[..., cache_len:k_len, :k_len]
