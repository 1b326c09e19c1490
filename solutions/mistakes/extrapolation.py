"""Classic mistakes in extrapolation.py (lesson 18.01): what a student who makes each one writes.

See ``grader/mistakes.py``. The self-check names the mistakes of ``doubling_buckets``,
``failure_position`` and ``needle_distance`` (which return Python lists and numbers) from the
wrong values it lists next to each check.
"""

import torch

from grader.mistakes import mistake


@mistake("bucket_means", "mean_of_means",
         es="Parece una media de medias por secuencia; cada valor debe contar una vez "
            "(media de todos los valores de la cubeta).",
         en="It looks like a mean of per-sequence means; every value must count once (the mean "
            "of all values in the bucket).")
def mean_of_means(loss: torch.Tensor, buckets: list[tuple[int, int]]) -> torch.Tensor:
    means = [loss[..., start:end].float().nanmean(-1).nanmean() for start, end in buckets]
    return torch.stack(means).to(torch.float32)
