"""Small builders for the Vega-Lite specs of the interactive figures: controls and layout.

A control is a Vega-Lite ``param`` bound to an input; its label is in the page's language. The
data of a spec covers every value a control offers, so moving it only filters and redraws.
"""

from __future__ import annotations

SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"  # an identifier; never fetched


def slider(name: str, label: str, lo: int | float, hi: int | float, step: int | float, value):
    """A range input from ``lo`` to ``hi``."""
    return {
        "name": name,
        "value": value,
        "bind": {"input": "range", "min": lo, "max": hi, "step": step, "name": f"{label} "},
    }


def select(name: str, label: str, options: list, value, labels: list[str] | None = None):
    """A drop-down list; ``labels`` are what the reader sees for each option."""
    bind = {"input": "select", "options": options, "name": f"{label} "}
    if labels is not None:
        bind["labels"] = labels
    return {"name": name, "value": value, "bind": bind}


def radio(name: str, label: str, options: list, value, labels: list[str] | None = None):
    """Radio buttons; ``labels`` are what the reader sees for each option."""
    spec = select(name, label, options, value, labels)
    spec["bind"]["input"] = "radio"
    return spec


def readout(expression: str, *, x: float = 0, y: float = 0, align: str = "left") -> dict:
    """A text mark named ``readout`` that shows ``expression``, a Vega expression string that
    reads ``'<what> = ' + <value>``, with its top ``left`` (or ``right``) corner at ``(x, y)``.

    The browser tests read the first number after the ``=`` and compare it with the reference
    code's value at the same setting.
    """
    return {
        "name": "readout",
        "mark": {"type": "text", "align": align, "baseline": "top", "fontSize": 13, "x": x,
                 "y": y, "fontWeight": "bold"},
        "encoding": {"text": {"value": {"expr": expression}}},
    }  # fmt: skip


def chart(title: str, description: str, params: list[dict], body: dict, data: dict) -> dict:
    """A complete spec: ``body`` holds the view (``layer``, ``hconcat``, ...), ``data`` its data."""
    return {
        "$schema": SCHEMA,
        "title": {"text": title, "anchor": "start", "fontSize": 14},
        "description": description,
        "params": params,
        "data": data,
        "config": {"view": {"stroke": None}, "axis": {"labelFontSize": 11, "titleFontSize": 12},
                   "legend": {"labelFontSize": 11, "titleFontSize": 11}},
        **body,
    }
