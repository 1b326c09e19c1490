"""Classic mistakes in learned.py (lesson 17.02): what a student who makes each one writes.

Each function is a wrong ``interpolate_positions``. See ``grader/mistakes.py``.
"""

import torch
import torch.nn.functional as F

from grader.mistakes import mistake


@mistake("interpolate_positions", "align_corners_false",
         es="Parece que colocaste las filas nuevas en los centros de celda (align_corners=False). "
            "En este curso la primera y la última fila se conservan: la fila j está en "
            "j (L-1)/(new_len-1).",
         en="It looks like you placed the new rows at cell centres (align_corners=False). In this "
            "course the first and last rows are kept: row j sits at j (L-1)/(new_len-1).")
def align_corners_false(table: torch.Tensor, new_len: int) -> torch.Tensor:
    return F.interpolate(table.T[None], new_len, mode="linear", align_corners=False)[0].T


@mistake("interpolate_positions", "nearest",
         es="Parece que copiaste la fila más cercana en vez de mezclar las dos vecinas.",
         en="It looks like you copied the nearest row instead of blending the two neighbours.")
def nearest(table: torch.Tensor, new_len: int) -> torch.Tensor:
    step = (table.shape[0] - 1) / (new_len - 1) if new_len > 1 else 0.0
    return table[(torch.arange(new_len, dtype=torch.float64) * step).round().long()]
