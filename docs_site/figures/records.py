"""The recorded benchmark results the figures of 18.01, 19.01 and 19.02 draw, read as written.

The CSV files are ``minimodel compare``'s ``results.csv`` (one row per encoding, seed and
evaluation length); the text files are the tables the benchmark scripts print.
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
_ROW = re.compile(r"^(\S.*?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s+([\d.]+))?$")


def compare_rows(name: str) -> list[dict]:
    """Rows of ``benchmarks/results/<name>``: numbers as float (``nan`` for an empty cell)."""
    with (RESULTS / name).open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        for key, value in row.items():
            if key != "encoding":
                row[key] = float(value) if value else math.nan
        row["eval_length"] = int(row["eval_length"])
    return rows


def windows(rows: list[dict]) -> list[tuple[int, int]]:
    """The position windows ``(start, end)`` of the ``loss_<start>_<end>`` columns, in order."""
    found = [key.split("_")[1:] for key in rows[0] if key.startswith("loss_")]
    return [(int(start), int(end)) for start, end in found]


def training_table() -> dict[str, dict[str, float]]:
    """``{encoding: {"best_ms", "median_ms", "tokens_per_s", "vs_none"}}`` of 19.01's benchmark."""
    table = {}
    for line in (RESULTS / "19_01_training_by_encoding.txt").read_text().splitlines()[2:]:
        match = _ROW.match(line.strip())
        if match:
            values = [float(v) for v in match.groups()[1:]]
            table[match.group(1)] = dict(zip(("best_ms", "median_ms", "tokens_per_s", "vs_none"),
                                             values, strict=True))  # fmt: skip
    return table


def attention_tables() -> dict[tuple[str, int], dict[str, float]]:
    """``{(direction, T): {case: best ms}}`` of 19.01's attention benchmark."""
    tables: dict[tuple[str, int], dict[str, float]] = {}
    current = None
    for line in (RESULTS / "19_01_attention.txt").read_text().splitlines():
        header = re.match(r"attention (forward \+ backward|forward), .*T=(\d+)", line)
        if header:
            current = tables.setdefault((header.group(1), int(header.group(2))), {})
            continue
        match = _ROW.match(line.strip())
        if current is not None and match and not match.group(5):
            current[match.group(1)] = float(match.group(2))
    return tables
