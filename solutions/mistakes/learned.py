"""Classic mistakes in learned.py (lesson 17.02): what a student who makes each one writes.

Each function is a wrong ``interpolate_positions``. See ``grader/build/mistakes.py``.
"""

import torch
import torch.nn.functional as F

from grader.build.mistakes import mistake


@mistake("interpolate_positions", "centres",
         es="Colocas las filas nuevas en los centros de celda (align_corners=False). Aquí la "
            "primera y la última fila se conservan tal cual: la fila nueva j se lee en la "
            "posición j·(L − 1)/(new_len − 1).",
         en="You place the new rows at cell centres (align_corners=False). Here the first and "
            "last rows are kept as they are: new row j is read at position "
            "j·(L − 1)/(new_len − 1).")
def centres(table: torch.Tensor, new_len: int) -> torch.Tensor:
    rows = table if table.dtype == torch.float64 else table.float()
    blended = F.interpolate(rows.T[None], new_len, mode="linear", align_corners=False)[0].T
    return blended.to(table.dtype)


@mistake("interpolate_positions", "nearest",
         es="Copias la fila más cercana en lugar de mezclar linealmente las dos vecinas.",
         en="You copy the nearest row instead of blending the two neighbours linearly.")
def nearest(table: torch.Tensor, new_len: int) -> torch.Tensor:
    step = (table.shape[0] - 1) / (new_len - 1) if new_len > 1 else 0.0
    return table[(torch.arange(new_len, dtype=torch.float64) * step).round().long()]
