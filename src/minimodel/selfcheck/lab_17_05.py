"""Visible checks for lab 17.05 (relative biases). Students may read these; the grader's differ."""

from __future__ import annotations

import math

import numpy as np
import torch

from minimodel.selfcheck.compare import CheckFailure, CheckList, expect_array

checks = CheckList()

# The lesson's worked table (32 buckets, max_distance 128), relative position = key - query.
RELATIVE = [-1000, -128, -64, -32, -16, -9, -8, -7, -1, 0, 1, 7, 8, 16, 32, 64, 127]
BIDIRECTIONAL = [15, 15, 14, 12, 10, 8, 8, 7, 1, 0, 17, 23, 24, 26, 28, 30, 31]
CAUSAL = [31, 31, 26, 21, 16, 9, 8, 7, 1, 0, 0, 0, 0, 0, 0, 0, 0]


def _student():
    from minimodel.positional import relative_bias

    return relative_bias


def t5_bucket(rel: int, bidirectional: bool, num_buckets: int = 32, max_distance: int = 128) -> int:
    """One bucket, written from the lesson's formula (the logarithm in float32, as T5)."""
    bucket = 0
    if bidirectional:
        num_buckets //= 2
        bucket += num_buckets if rel > 0 else 0
        n = abs(rel)
    else:
        n = max(-rel, 0)
    exact = num_buckets // 2
    if n < exact:
        return bucket + n
    ratio = torch.tensor(n / exact, dtype=torch.float32)
    scaled = torch.log(ratio) / math.log(max_distance / exact)
    return bucket + min(exact + int(scaled * (num_buckets - exact)), num_buckets - 1)


def bucket_mistakes(rel: list[int], bidirectional: bool) -> dict:
    def table(function) -> np.ndarray:
        return np.array([function(r) for r in rel], dtype=np.int64)

    mistakes = {
        "sign": (
            table(lambda r: t5_bucket(-r, bidirectional)),
            "Parece que usaste consulta - clave. T5 define relative_position = clave - consulta: "
            "las claves del pasado tienen posición relativa negativa.",
            "It looks like you used query - key. T5 defines relative_position = key - query: keys "
            "in the past have a negative relative position.",
        ),
    }
    if bidirectional:
        mistakes["not_halved"] = (
            table(lambda r: t5_bucket(r, False, 32) if r <= 0 else 32 + t5_bucket(-r, False, 32)),
            "En modo bidireccional, cada lado usa la mitad de las cubetas: divide num_buckets "
            "entre 2 antes de calcular las exactas.",
            "In bidirectional mode each side uses half the buckets: divide num_buckets by 2 "
            "before computing the exact ones.",
        )
    else:
        mistakes["future"] = (
            table(lambda r: t5_bucket(-r, False)),
            "En modo causal, n = max(-rel, 0): las claves futuras (rel > 0) van a la cubeta 0 y "
            "las del pasado usan su distancia -rel.",
            "In causal mode, n = max(-rel, 0): future keys (rel > 0) go to bucket 0 and past "
            "keys use their distance -rel.",
        )
    return mistakes


def _buckets(rel: list[int], **kwargs) -> torch.Tensor:
    return _student().relative_position_bucket(torch.tensor(rel), **kwargs)


@checks.add(
    "relative_position_bucket",
    "bidireccional: la tabla de la lección",
    "bidirectional: the lesson's table",
)
def buckets_bidirectional() -> None:
    expect_array(
        _buckets(RELATIVE, bidirectional=True),
        torch.tensor(BIDIRECTIONAL),
        name="relative_position_bucket(rel, bidirectional=True)",
        mistakes=bucket_mistakes(RELATIVE, True),
    )


@checks.add(
    "relative_position_bucket", "causal: la tabla de la lección", "causal: the lesson's table"
)
def buckets_causal() -> None:
    expect_array(
        _buckets(RELATIVE, bidirectional=False),
        torch.tensor(CAUSAL),
        name="relative_position_bucket(rel, bidirectional=False)",
        mistakes=bucket_mistakes(RELATIVE, False),
    )


@checks.add(
    "relative_position_bucket",
    "otros num_buckets y max_distance; conserva la forma",
    "other num_buckets and max_distance; keeps the shape",
)
def buckets_other_settings() -> None:
    rel = torch.arange(-60, 61).reshape(11, 11)
    for bidirectional in (True, False):
        expected = torch.tensor(
            [[t5_bucket(int(r), bidirectional, 16, 50) for r in row] for row in rel]
        )
        expect_array(
            _student().relative_position_bucket(
                rel, bidirectional=bidirectional, num_buckets=16, max_distance=50
            ),
            expected,
            name=f"relative_position_bucket(rel (11, 11), bidirectional={bidirectional}, "
            "num_buckets=16, max_distance=50)",
        )


def _module(n_heads: int, **kwargs):
    module = _student().RelativePositionBias(n_heads, **kwargs)
    with torch.no_grad():  # a recognisable table: bias[b, h] = 100 h + b
        rows = torch.arange(module.bias.weight.shape[0], dtype=torch.float32)[:, None]
        module.bias.weight.copy_(rows + 100.0 * torch.arange(n_heads, dtype=torch.float32))
    return module


def _expected_bias(n_heads, q_len, k_len, bidirectional, query_positions=None) -> torch.Tensor:
    if query_positions is None:
        query_positions = range(k_len - q_len, k_len)
    out = torch.zeros(n_heads, q_len, k_len)
    for h in range(n_heads):
        for i, p in enumerate(query_positions):
            for j in range(k_len):
                out[h, i, j] = 100.0 * h + t5_bucket(j - p, bidirectional)
    return out


@checks.add(
    "RelativePositionBias.forward",
    "forma (H, q_len, k_len) y tabla[cubeta(clave - consulta)]",
    "shape (H, q_len, k_len) and table[bucket(key - query)]",
)
def module_square() -> None:
    module = _module(3, bidirectional=True)
    got = module(10, 10)
    expected = _expected_bias(3, 10, 10, True)
    if isinstance(got, torch.Tensor) and tuple(got.shape) == (10, 10, 3):
        raise CheckFailure(
            "La forma es (q_len, k_len, H): self.bias(cubetas) deja las cabezas al final; "
            "permútalas al principio con .permute(2, 0, 1).",
            "The shape is (q_len, k_len, H): self.bias(buckets) leaves the heads last; move them "
            "first with .permute(2, 0, 1).",
        )
    expect_array(
        got.detach() if isinstance(got, torch.Tensor) else got,
        expected,
        name="RelativePositionBias(3, bidirectional=True)(10, 10)",
        mistakes={
            "sign": (
                _expected_bias(3, 10, 10, True).transpose(1, 2).numpy(),
                "Parece que la posición relativa es consulta - clave; T5 usa clave - consulta.",
                "The relative position looks like query - key; T5 uses key - query.",
            )
        },
    )


@checks.add(
    "RelativePositionBias.forward",
    "consultas alineadas al final (caché KV)",
    "queries aligned to the end (KV cache)",
)
def module_end_aligned() -> None:
    module = _module(2, bidirectional=False)
    got = module(3, 40)
    expect_array(
        got.detach() if isinstance(got, torch.Tensor) else got,
        _expected_bias(2, 3, 40, False),
        name="RelativePositionBias(2)(3, 40)",
        mistakes={
            "top_left": (
                _expected_bias(2, 3, 40, False, query_positions=range(3)).numpy(),
                "Las consultas parecen alineadas al principio. Son las ÚLTIMAS q_len: la consulta "
                "i está en la posición k_len - q_len + i.",
                "The queries look aligned to the start. They are the LAST q_len: query i sits at "
                "position k_len - q_len + i.",
            )
        },
    )


@checks.add(
    "RelativePositionBias.forward",
    "el sesgo es diferenciable respecto a la tabla",
    "the bias is differentiable with respect to the table",
)
def module_gradient() -> None:
    module = _student().RelativePositionBias(2, num_buckets=8, max_distance=20)
    module(4, 4).sum().backward()
    grad = module.bias.weight.grad
    if grad is None:
        raise CheckFailure(
            "La tabla no recibe gradiente: usa self.bias(cubetas) y no rompas el grafo (nada de "
            ".detach(), .item() ni torch.tensor(...) sobre el resultado).",
            "The table gets no gradient: use self.bias(buckets) and do not break the graph (no "
            ".detach(), .item() or torch.tensor(...) on the result).",
        )
    # 16 pairs, 2 heads: each bucket's gradient counts how many pairs fall in it.
    counts = torch.zeros(8)
    for i in range(4):
        for j in range(4):
            counts[t5_bucket(j - i, False, 8, 20)] += 1
    expect_array(grad, counts[:, None].expand(8, 2).contiguous(), name="bias.weight.grad")


def swin_formula(window_h: int, window_w: int, sign: int = 1) -> np.ndarray:
    n = window_h * window_w
    index = np.zeros((n, n), dtype=np.int64)
    for a in range(n):
        for b in range(n):
            dr = sign * (a // window_w - b // window_w)
            dc = sign * (a % window_w - b % window_w)
            index[a, b] = (dr + window_h - 1) * (2 * window_w - 1) + dc + window_w - 1
    return index


@checks.add("swin_relative_index", "ventana 2 x 2 de la lección", "the lesson's 2 x 2 window")
def swin_two_by_two() -> None:
    expect_array(
        _student().swin_relative_index(2, 2),
        torch.tensor([[4, 3, 1, 0], [5, 4, 2, 1], [7, 6, 4, 3], [8, 7, 5, 4]]),
        name="swin_relative_index(2, 2)",
        mistakes={
            "sign": (
                swin_formula(2, 2, sign=-1),
                "Parece que usaste clave - consulta (como T5); Swin usa consulta - clave.",
                "It looks like you used key - query (as T5 does); Swin uses query - key.",
            )
        },
    )


@checks.add(
    "swin_relative_index",
    "ventanas no cuadradas (3 x 2, 2 x 5)",
    "non-square windows (3 x 2, 2 x 5)",
)
def swin_rectangular() -> None:
    for h, w in ((3, 2), (2, 5)):
        swapped = swin_formula(h, w).copy()
        n = h * w
        for a in range(n):
            for b in range(n):
                dr, dc = a // w - b // w, a % w - b % w
                swapped[a, b] = (dr + h - 1) * (2 * h - 1) + dc + w - 1
        expect_array(
            _student().swin_relative_index(h, w),
            torch.from_numpy(swin_formula(h, w)),
            name=f"swin_relative_index({h}, {w})",
            mistakes={
                "stride": (
                    swapped,
                    "La fila del desplazamiento se multiplica por (2 * window_w - 1), el número "
                    "de desplazamientos posibles en columnas, no por (2 * window_h - 1).",
                    "The row offset is multiplied by (2 * window_w - 1), the number of possible "
                    "column offsets, not by (2 * window_h - 1).",
                )
            },
        )
