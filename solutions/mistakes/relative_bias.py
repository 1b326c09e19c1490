"""Classic mistakes in relative_bias.py (lesson 17.05): what a student who makes each one writes.

Each function is a wrong ``relative_position_bucket``, ``RelativePositionBias.forward`` or
``swin_relative_index``; ``RelativePositionBias``, which buckets with
``relative_position_bucket``, inherits that function's mistakes. See ``grader/build/mistakes.py``.
"""

import math

import torch

from grader.build.mistakes import mistake
from minimodel.positional.relative_bias import relative_position_bucket as right_bucket
from minimodel.positional.relative_bias import swin_relative_index as right_swin


def _log_buckets(n: torch.Tensor, num_buckets: int, max_distance: int) -> torch.Tensor:
    """T5's bucket of each distance ``n >= 0`` on one side of ``num_buckets`` buckets."""
    exact = num_buckets // 2
    scaled = torch.log(n.clamp(min=exact).float() / exact) / math.log(max_distance / exact)
    large = (exact + (scaled * (num_buckets - exact)).long()).clamp(max=num_buckets - 1)
    return torch.where(n < exact, n, large)


@mistake("relative_position_bucket", "sign",
         es="Parece que usaste consulta - clave. T5 define relative_position = clave - consulta, "
            "tal como llega, sin cambiarle el signo: las claves del pasado tienen posición "
            "relativa negativa y, en modo causal, son ellas las que reciben cubetas distintas.",
         en="It looks like you used query - key. T5 defines relative_position = key - query, as "
            "it comes, without flipping its sign: keys in the past have a negative relative "
            "position and, in causal mode, they are the ones that get distinct buckets.")
def sign(relative_position: torch.Tensor, *, bidirectional: bool, num_buckets: int = 32,
         max_distance: int = 128) -> torch.Tensor:
    return right_bucket(-relative_position, bidirectional=bidirectional,
                        num_buckets=num_buckets, max_distance=max_distance)


@mistake("relative_position_bucket", "not-halved",
         es="En modo bidireccional cada lado usa la mitad de las cubetas: divide num_buckets "
            "entre 2 antes de calcular las exactas y las logarítmicas.",
         en="In bidirectional mode each side uses half the buckets: divide num_buckets by 2 "
            "before computing the exact and the logarithmic ones.")
def not_halved(relative_position: torch.Tensor, *, bidirectional: bool, num_buckets: int = 32,
               max_distance: int = 128) -> torch.Tensor:
    rel = relative_position.long()
    if not bidirectional:
        return right_bucket(rel, bidirectional=False, num_buckets=num_buckets,
                            max_distance=max_distance)
    side = (rel > 0).long() * num_buckets  # the whole count, not half of it
    return side + _log_buckets(rel.abs(), num_buckets, max_distance)


@mistake("relative_position_bucket", "causal-abs",
         es="En modo causal, n = max(-rel, 0): todas las claves futuras (rel > 0) van a la "
            "cubeta 0, no a la cubeta de |rel|, y las del pasado usan su distancia -rel.",
         en="In causal mode, n = max(-rel, 0): every future key (rel > 0) goes to bucket 0, not "
            "to the bucket of |rel|, and past keys use their distance -rel.")
def causal_abs(relative_position: torch.Tensor, *, bidirectional: bool, num_buckets: int = 32,
               max_distance: int = 128) -> torch.Tensor:
    rel = relative_position.long()
    if bidirectional:
        return right_bucket(rel, bidirectional=True, num_buckets=num_buckets,
                            max_distance=max_distance)
    return _log_buckets(rel.abs(), num_buckets, max_distance)  # future keys by their distance


def _lookup(module, q_len: int, k_len: int, *, start_aligned: bool = False,
            bidirectional: bool | None = None, defaults: bool = False) -> torch.Tensor:
    """``module.bias(bucket(key - query))``, ``(q_len, k_len, H)``, with the queries at the
    start of the keys, another ``bidirectional`` or the bucket function's defaults."""
    device = module.bias.weight.device
    first = 0 if start_aligned else k_len - q_len
    query = torch.arange(first, first + q_len, device=device)[:, None]
    key = torch.arange(k_len, device=device)[None, :]
    settings = {} if defaults else {"num_buckets": module.num_buckets,
                                    "max_distance": module.max_distance}
    buckets = right_bucket(key - query, bidirectional=module.bidirectional if bidirectional is None
                           else bidirectional, **settings)
    return module.bias(buckets)


@mistake("RelativePositionBias.forward", "start-aligned",
         es="Con menos consultas que claves, las consultas son las ÚLTIMAS q_len posiciones: la "
            "consulta i está en k_len − q_len + i y su posición relativa es "
            "j − (k_len − q_len + i).",
         en="With fewer queries than keys, the queries are the LAST q_len positions: query i "
            "sits at k_len − q_len + i and its relative position is j − (k_len − q_len + i).")
def start_aligned(self, q_len: int, k_len: int) -> torch.Tensor:
    return _lookup(self, q_len, k_len, start_aligned=True).permute(2, 0, 1)


@mistake("RelativePositionBias.forward", "reshape",
         es="self.bias(cubetas) tiene forma (q_len, k_len, H): reordenar sus ejes exige "
            ".permute(2, 0, 1); .reshape o .view a (H, q_len, k_len) dan la forma correcta pero "
            "mezclan los valores de cabezas y posiciones.",
         en="self.bias(buckets) has shape (q_len, k_len, H): moving its axes takes "
            ".permute(2, 0, 1); .reshape or .view to (H, q_len, k_len) give the right shape but "
            "mix up the values of heads and positions.")
def reshape(self, q_len: int, k_len: int) -> torch.Tensor:
    return _lookup(self, q_len, k_len).reshape(self.n_heads, q_len, k_len)


@mistake("RelativePositionBias.forward", "transposed",
         es="El resultado tiene los ejes (H, k_len, q_len): la forma pedida es (H, q_len, k_len), "
            "es decir, .permute(2, 0, 1) y no .permute(2, 1, 0) ni .transpose(0, 2).",
         en="The result has axes (H, k_len, q_len): the required shape is (H, q_len, k_len), "
            "that is, .permute(2, 0, 1), not .permute(2, 1, 0) or .transpose(0, 2).")
def transposed(self, q_len: int, k_len: int) -> torch.Tensor:
    return _lookup(self, q_len, k_len).permute(2, 1, 0)


@mistake("RelativePositionBias.forward", "bidirectional-ignored",
         es="Las cubetas no usan self.bidirectional: pásalo a relative_position_bucket (True en "
            "codificadores, False en decodificadores causales).",
         en="The buckets do not use self.bidirectional: pass it to relative_position_bucket "
            "(True in encoders, False in causal decoders).")
def bidirectional_ignored(self, q_len: int, k_len: int) -> torch.Tensor:
    return _lookup(self, q_len, k_len, bidirectional=False).permute(2, 0, 1)


@mistake("RelativePositionBias.forward", "defaults",
         es="Las cubetas se calculan con los valores por defecto (32 cubetas, distancia 128): "
            "pasa self.num_buckets y self.max_distance a relative_position_bucket. Con menos "
            "cubetas, el índice se sale de la tabla.",
         en="The buckets are computed with the defaults (32 buckets, distance 128): pass "
            "self.num_buckets and self.max_distance to relative_position_bucket. With fewer "
            "buckets, the index falls outside the table.")
def defaults(self, q_len: int, k_len: int) -> torch.Tensor:
    return _lookup(self, q_len, k_len, defaults=True).permute(2, 0, 1)


@mistake("swin_relative_index", "t5-sign",
         es="Parece que usaste clave - consulta, como T5; Swin indexa su tabla con consulta - "
            "clave: la consulta a y la clave b usan posición(a) - posición(b).",
         en="It looks like you used key - query, as T5 does; Swin indexes its table with query - "
            "key: query a and key b use position(a) - position(b).")
def t5_sign(window_h: int, window_w: int) -> torch.Tensor:
    return right_swin(window_h, window_w).T.contiguous()


def _swin(window_h: int, window_w: int, row_stride: int) -> torch.Tensor:
    """Swin's index with ``row_stride`` in place of the table's width ``2 window_w - 1``."""
    rows, cols = torch.meshgrid(torch.arange(window_h), torch.arange(window_w), indexing="ij")
    rows, cols = rows.flatten(), cols.flatten()
    d_row = rows[:, None] - rows[None, :] + (window_h - 1)
    d_col = cols[:, None] - cols[None, :] + (window_w - 1)
    return d_row * row_stride + d_col


@mistake("swin_relative_index", "stride",
         es="El desplazamiento de fila se multiplica por el ancho de la tabla, 2 * window_w - 1, "
            "no por window_w: si no, dos desplazamientos distintos comparten índice.",
         en="The row offset is multiplied by the table's width, 2 * window_w - 1, not by "
            "window_w: otherwise two different offsets share an index.")
def stride(window_h: int, window_w: int) -> torch.Tensor:
    return _swin(window_h, window_w, window_w)


@mistake("swin_relative_index", "stride-height",
         es="La fila del desplazamiento se multiplica por (2 * window_w - 1), el número de "
            "desplazamientos posibles en columnas, no por (2 * window_h - 1).",
         en="The row offset is multiplied by (2 * window_w - 1), the number of possible column "
            "offsets, not by (2 * window_h - 1).")
def stride_height(window_h: int, window_w: int) -> torch.Tensor:
    return _swin(window_h, window_w, 2 * window_h - 1)
