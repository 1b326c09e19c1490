"""Stored answers: what the reference solutions give on the self-check's visible inputs.

The self-check knows the right answers only as data: for every value a check compares, the
output of the reference solution on that same visible input, and the output of each classic
mistake on it (with the mistake's explanation in both languages). They are computed from the
instructor's solutions when the course is built and stored in
``snapshots/lab_<phase>_<lesson>.npz`` (arrays) and ``.json`` (names, dtypes, explanations), so
no code in the student's repository can compute an answer for any other input. The visible
inputs are not the grader's: no stored answer is the answer of a hidden case.

A check names each value it compares, e.g. ``snap.expect(table, "sinusoidal_pe(50, 16)")``;
the name is also the key of the stored answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from minimodel.messages import bilingual
from minimodel.selfcheck.compare import expect_array

FOLDER = Path(__file__).resolve().parent / "snapshots"
# While the snapshots are being computed (when the course is built), an object with a method
# ``record(lab_id, name, value)``; checks then record what the reference gives instead of judging.
RECORDER = None


def files(lab_id: str, folder: Path = FOLDER) -> tuple[Path, Path]:
    """The ``.npz`` and ``.json`` of a lab's snapshots."""
    stem = "lab_" + lab_id.replace(".", "_")
    return folder / f"{stem}.npz", folder / f"{stem}.json"


class Snapshots:
    """The stored answers of one lab, loaded on first use."""

    def __init__(self, lab_id: str):
        self.lab_id = lab_id
        self._meta: dict | None = None
        self._arrays: dict[str, np.ndarray] = {}

    def _load(self) -> dict:
        if self._meta is None:
            npz, meta = files(self.lab_id)
            if not npz.exists() or not meta.exists():
                raise FileNotFoundError(
                    bilingual(
                        f"Faltan las respuestas guardadas del laboratorio {self.lab_id} "
                        f"({meta.name}): vienen con el repositorio del curso; vuelve a copiarlas "
                        "de él.",
                        f"The stored answers of lab {self.lab_id} are missing ({meta.name}): they "
                        "come with the course repository; copy them from it again.",
                    )
                )
            self._meta = json.loads(meta.read_text(encoding="utf-8"))
            with np.load(npz, allow_pickle=False) as stored:
                self._arrays = {key: stored[key] for key in stored.files}
        return self._meta

    def right(self, name: str) -> np.ndarray | torch.Tensor:
        """What the reference gives for the value ``name``, as it returned it: its kind (tensor or
        array) and dtype."""
        described = self._load()["right"].get(name)
        if described is None:
            raise KeyError(f"lab {self.lab_id}: no stored answer named {name!r}")
        array = self._arrays[described["array"]]
        if described["kind"] == "torch":
            return torch.from_numpy(np.array(array)).to(getattr(torch, described["dtype"]))
        return np.array(array, dtype=described["dtype"])

    def mistakes(self, name: str) -> dict[str, tuple[np.ndarray, str, str]]:
        """What each classic mistake gives for the value ``name``, with its explanation; the
        mistakes of the function the value is named after (``"f(...)"``) first, so that where a
        mistake in a function it calls gives the same value, the function's own is named first
        (``compare.closest_mistake`` names both)."""
        meta = self._load()
        wrong = meta["wrong"].get(name, {})
        own = [code for code in wrong if name.startswith(meta["mistakes"][code]["target"] + "(")]
        return {
            code: (self._arrays[wrong[code]], meta["mistakes"][code]["es"],
                   meta["mistakes"][code]["en"])
            for code in own + [code for code in wrong if code not in own]
        }

    def answer(self, actual: object, name: str) -> tuple[object, dict]:
        """``(stored answer, mistakes)`` of the value ``name``, for a check that compares
        ``actual`` in its own way (a Python number, say; pass it as an array). While the answers
        are being computed, ``actual`` is recorded and comes back as the answer, with no mistakes.
        """
        if RECORDER is not None:
            RECORDER.record(self.lab_id, name, actual)
            return actual, {}
        return self.right(name), self.mistakes(name)

    def expect(self, actual: object, name: str, **options) -> np.ndarray | torch.Tensor:
        """Judge ``actual`` against the stored answer ``name`` (``compare.expect_array``'s
        options), naming a classic mistake when the values match one; return the answer."""
        expected, mistakes = self.answer(actual, name)
        if RECORDER is None:
            expect_array(actual, expected, name=name, mistakes=mistakes, **options)
        return expected
