"""Timing helpers shared by the benchmarks: candidates interleaved, best and median reported.

On a shared machine a neighbour's burst slows whatever runs at that moment. Running the candidates
round-robin spreads that noise over all of them, and the best round estimates each one's own cost.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def measure(
    cases: dict[str, Callable[[], object]], rounds: int = 7, round_seconds: float = 0.25
) -> dict[str, tuple[float, float]]:
    """Seconds per call of each case: ``{name: (best, median)}`` over ``rounds`` rounds."""
    calls = {}
    for name, fn in cases.items():  # warm up and choose how many calls make one round
        fn()
        start = time.perf_counter()
        fn()
        once = max(time.perf_counter() - start, 1e-6)
        calls[name] = max(1, round(round_seconds / once))
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            start = time.perf_counter()
            for _ in range(calls[name]):
                fn()
            samples[name].append((time.perf_counter() - start) / calls[name])
    return {name: (min(s), statistics.median(s)) for name, s in samples.items()}


def table(results: dict[str, tuple[float, float]], baseline: str, unit: str = "ms") -> str:
    """Side-by-side table: best and median time per call, and the ratio of best times."""
    scale = {"ms": 1e3, "us": 1e6}[unit]
    width = max(len(name) for name in results) + 2
    ratio = f"x {baseline}"
    last = len(ratio) + 4
    lines = [f"{'case':<{width}}{'best ' + unit:>12}{'median ' + unit:>12}{ratio:>{last}}"]
    base = results[baseline][0]
    for name, (best, median) in results.items():
        lines.append(
            f"{name:<{width}}{best * scale:>12.3f}{median * scale:>12.3f}{best / base:>{last}.2f}"
        )
    return "\n".join(lines)
