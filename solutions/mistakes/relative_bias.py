"""Classic mistakes in relative_bias.py (lesson 17.05): what a student who makes each one writes.

Each function is a wrong ``relative_position_bucket``, ``RelativePositionBias.forward`` or
``swin_relative_index``; ``RelativePositionBias``, which buckets with
``relative_position_bucket``, inherits that function's mistakes. See ``grader/mistakes.py``.
"""

import math

import torch

from grader.mistakes import mistake
from minimodel.positional.relative_bias import relative_position_bucket as right_bucket
from minimodel.positional.relative_bias import swin_relative_index as right_swin


def _log_buckets(n: torch.Tensor, num_buckets: int, max_distance: int) -> torch.Tensor:
    """T5's bucket of each distance ``n >= 0`` on one side of ``num_buckets`` buckets."""
    exact = num_buckets // 2
    scaled = torch.log(n.clamp(min=exact).float() / exact) / math.log(max_distance / exact)
    large = (exact + (scaled * (num_buckets - exact)).long()).clamp(max=num_buckets - 1)
    return torch.where(n < exact, n, large)


@mistake("relative_position_bucket", "sign",
         es="Parece que usaste consulta - clave. T5 define relative_position = clave - consulta: "
            "las claves del pasado tienen posición relativa negativa.",
         en="It looks like you used query - key. T5 defines relative_position = key - query: "
            "keys in the past have a negative relative position.")
def sign(relative_position: torch.Tensor, *, bidirectional: bool, num_buckets: int = 32,
         max_distance: int = 128) -> torch.Tensor:
    return right_bucket(-relative_position, bidirectional=bidirectional,
                        num_buckets=num_buckets, max_distance=max_distance)


@mistake("relative_position_bucket", "not_halved",
         es="En modo bidireccional, cada lado usa la mitad de las cubetas: divide num_buckets "
            "entre 2 antes de calcular las exactas.",
         en="In bidirectional mode each side uses half the buckets: divide num_buckets by 2 "
            "before computing the exact ones.")
def not_halved(relative_position: torch.Tensor, *, bidirectional: bool, num_buckets: int = 32,
               max_distance: int = 128) -> torch.Tensor:
    rel = relative_position.long()
    if not bidirectional:
        return right_bucket(rel, bidirectional=False, num_buckets=num_buckets,
                            max_distance=max_distance)
    side = (rel > 0).long() * num_buckets  # the whole count, not half of it
    return side + _log_buckets(rel.abs(), num_buckets, max_distance)


@mistake("relative_position_bucket", "future",
         es="En modo causal, n = max(-rel, 0): las claves futuras (rel > 0) van a la cubeta 0 y "
            "las del pasado usan su distancia -rel.",
         en="In causal mode, n = max(-rel, 0): future keys (rel > 0) go to bucket 0 and past "
            "keys use their distance -rel.")
def future(relative_position: torch.Tensor, *, bidirectional: bool, num_buckets: int = 32,
           max_distance: int = 128) -> torch.Tensor:
    rel = relative_position.long()
    if bidirectional:
        return right_bucket(rel, bidirectional=True, num_buckets=num_buckets,
                            max_distance=max_distance)
    return _log_buckets(rel.abs(), num_buckets, max_distance)  # future keys by their distance


@mistake("RelativePositionBias.forward", "module_sign",
         es="Parece que la posición relativa es consulta - clave; T5 usa clave - consulta.",
         en="The relative position looks like query - key; T5 uses key - query.")
def module_sign(self, q_len: int, k_len: int) -> torch.Tensor:
    device = self.bias.weight.device
    query = torch.arange(k_len - q_len, k_len, device=device)[:, None]
    key = torch.arange(k_len, device=device)[None, :]
    buckets = right_bucket(query - key, bidirectional=self.bidirectional,
                           num_buckets=self.num_buckets, max_distance=self.max_distance)
    return self.bias(buckets).permute(2, 0, 1)


@mistake("RelativePositionBias.forward", "module_top_left",
         es="Las consultas parecen alineadas al principio. Son las ÚLTIMAS q_len: la consulta i "
            "está en la posición k_len - q_len + i.",
         en="The queries look aligned to the start. They are the LAST q_len: query i sits at "
            "position k_len - q_len + i.")
def module_top_left(self, q_len: int, k_len: int) -> torch.Tensor:
    device = self.bias.weight.device
    query = torch.arange(q_len, device=device)[:, None]  # query i at position i
    key = torch.arange(k_len, device=device)[None, :]
    buckets = right_bucket(key - query, bidirectional=self.bidirectional,
                           num_buckets=self.num_buckets, max_distance=self.max_distance)
    return self.bias(buckets).permute(2, 0, 1)


@mistake("swin_relative_index", "swin_sign",
         es="Parece que usaste clave - consulta (como T5); Swin usa consulta - clave.",
         en="It looks like you used key - query (as T5 does); Swin uses query - key.")
def swin_sign(window_h: int, window_w: int) -> torch.Tensor:
    return right_swin(window_h, window_w).T.contiguous()


@mistake("swin_relative_index", "stride",
         es="La fila del desplazamiento se multiplica por (2 * window_w - 1), el número de "
            "desplazamientos posibles en columnas, no por (2 * window_h - 1).",
         en="The row offset is multiplied by (2 * window_w - 1), the number of possible column "
            "offsets, not by (2 * window_h - 1).")
def stride(window_h: int, window_w: int) -> torch.Tensor:
    rows, cols = torch.meshgrid(torch.arange(window_h), torch.arange(window_w), indexing="ij")
    rows, cols = rows.flatten(), cols.flatten()
    d_row = rows[:, None] - rows[None, :] + (window_h - 1)
    d_col = cols[:, None] - cols[None, :] + (window_w - 1)
    return d_row * (2 * window_h - 1) + d_col
