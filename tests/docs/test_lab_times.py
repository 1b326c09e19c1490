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
    "18.01": {"es": "unos 7 minutos", "en": "about 7 minutes"},
    "18.02": {"es": "menos de 3 minutos", "en": "under 3 minutes"},
    "18.03": {"es": "menos de un minuto", "en": "under a minute"},
    "19.02": {"es": "unos 6 minutos", "en": "about 6 minutes"},
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
    said = {"es": f"(entre {low} y {high} por modelo", "en": f"(between {low} and {high} per model"}
    for lang, page in pages("19/02-experiments.md").items():
        assert said[lang] in " ".join(page.text.split()), lang
