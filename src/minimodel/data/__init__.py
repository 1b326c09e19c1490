"""Data for the Mini-GPT, none of it downloaded: character-level text and synthetic tasks.

``load_data(spec)`` rebuilds any of them from the small dict saved in checkpoints:

- ``{"name": "stdlib"}``: the Python standard library's sources (``text.stdlib_corpus``);
- ``{"name": "text", "path": ...}``: any UTF-8 text file (``text.text_file_corpus``);
- ``{"name": "copy" | "recall" | "passkey"}``: the synthetic tasks of ``tasks``.

Every dataset has ``vocab_size``, ``spec``, ``decode(ids)``,
``batch(split, batch_size, length, generator) -> (x, y)`` and ``eval_batch(split, n, length)``.
"""

from __future__ import annotations

from minimodel.data.tasks import TASKS
from minimodel.data.text import stdlib_corpus, text_file_corpus
from minimodel.messages import bilingual

DATA_NAMES = ("stdlib", *TASKS)


def load_data(spec: dict | str):
    """The dataset described by ``spec`` (a dict as above, a name, or a path to a text file)."""
    if isinstance(spec, str):
        spec = {"name": spec} if spec in DATA_NAMES else {"name": "text", "path": spec}
    options = {k: v for k, v in spec.items() if k != "name"}
    if spec["name"] == "stdlib":
        return stdlib_corpus(**options)
    if spec["name"] == "text":
        return text_file_corpus(**options)
    if spec["name"] in TASKS:
        return TASKS[spec["name"]]()
    raise ValueError(
        bilingual(
            f"Datos desconocidos {spec['name']!r}: usa {', '.join(DATA_NAMES)} o la ruta de un "
            "archivo de texto.",
            f"Unknown data {spec['name']!r}: use {', '.join(DATA_NAMES)} or the path of a text "
            "file.",
        )
    )
