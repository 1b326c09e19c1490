"""The times a lesson gives for its lab and its runs are the measured ones.

``minimodel.course.LABS`` holds each lab's measured time at full size on two quiet cores
(``full_run_s``, from the course's benchmarks); the lab section of the lesson says it in words:
"about N minutes" is N once rounded, "under N minutes" is below it.
"""

from __future__ import annotations

import csv
import math
import re

import pytest
from docs_pages import ROOT, pages

from minimodel.course import find_lab

# lab -> what its lesson says, in each language
STATED = {
    "18.01": {"es": "unos 3 minutos", "en": "about 3 minutes"},
    "18.02": {"es": "menos de 3 minutos", "en": "under 3 minutes"},
    "18.03": {"es": "menos de un minuto", "en": "under a minute"},
    "19.02": {"es": "unos 4 minutos", "en": "about 4 minutes"},
}
WORDS = {"un": 1, "a": 1}


@pytest.mark.parametrize("lab_id", sorted(STATED))
def test_the_lesson_states_the_measured_time_of_its_lab(lab_id):
    lab = find_lab(lab_id)
    minutes = lab.full_run_s / 60
    for lang, page in pages(lab.page).items():
        said = STATED[lab_id][lang]
        assert said in " ".join(page.text.split()), (lab_id, lang, said)
        number = said.split()[-2]
        stated = WORDS.get(number) or int(number)
        if re.match(r"unos|about", said):
            assert round(minutes) == stated, (lab_id, minutes)
        else:
            assert minutes < stated, (lab_id, minutes)


def test_19_02_states_how_long_each_of_its_models_trained():
    """The recorded run of the page's command: each model's ``train_seconds``."""
    with (ROOT / "benchmarks" / "results" / "19_02_text_results.csv").open(newline="") as handle:
        seconds = [float(row["train_seconds"]) for row in csv.DictReader(handle)]
    low, high = math.floor(min(seconds) / 60), math.ceil(max(seconds) / 60)
    said = {"es": f"cada modelo tardó entre {low} y {high} minutos",
            "en": f"each model took between {low} and {high} minutes"}
    for lang, page in pages("19/02-experiments.md").items():
        assert said[lang] in " ".join(page.text.split()), lang



NUMBER_WORDS = {5: ("cinco", "five")}


def test_19_02_counts_the_models_of_each_run():
    """The recorded run's processes (one per seed) and the notebook's models, from the sources."""
    from minimodel.encodings import COURSE  # with none, the encodings the lab compares

    with (ROOT / "benchmarks" / "results" / "19_02_text_results.csv").open(newline="") as handle:
        processes = NUMBER_WORDS[len({row["seed"] for row in csv.DictReader(handle)})]
    notebook = (ROOT / "solutions" / "labs" / "19_02_experiments" / "notebook.py").read_text()
    seeds = int(re.search(r"^SEEDS = tuple\(range\(sized\(full=(\d+)", notebook, re.M)[1])
    copy = re.search(r"^COPY_ENCODINGS = \(([^)]*)\)", notebook, re.M)[1].count('"') // 2
    models = len(COURSE) * seeds
    said = {"es": [f"salieron de {processes[0]} procesos de un solo hilo",
                   f"entrena los {models} modelos de su comparación y los {copy} de la tarea"],
            "en": [f"come from {processes[1]} single-thread processes",
                   f"trains the {models} models of its comparison and the {copy} of the"]}
    for lang, page in pages("19/02-experiments.md").items():
        for words in said[lang]:
            assert words in " ".join(page.text.split()), (lang, words)
