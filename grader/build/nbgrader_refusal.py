"""The only step of nbgrader's Autograde in the course ``minimodel-grader nbgrader-course``
writes: stop before any student code runs, and say what to run instead.

Its own module so that the command line does not import nbgrader for every command; the
course's ``nbgrader_config.py`` names it as ``grader.build.nbgrader_refusal.RefuseAutograde``.
"""

from __future__ import annotations

from nbgrader.preprocessors import NbGraderPreprocessor

from grader.build.nbgrader_course import CourseError
from minimodel.messages import bilingual

REFUSAL = bilingual(
    "El autograde de nbgrader está desactivado en este curso: ejecutaría el código de los "
    "estudiantes fuera del entorno aislado. Corrige con `minimodel-grader grade "
    "submitted --out OUT` y pasa las notas con `minimodel-grader nbgrader-course . --scores OUT`.",
    "nbgrader's autograde is disabled in this course: it would run student code outside the "
    "sandbox. Grade with `minimodel-grader grade submitted --out OUT`, then bring the scores in "
    "with `minimodel-grader nbgrader-course . --scores OUT`.")


class RefuseAutograde(NbGraderPreprocessor):
    """Autograde's only step in this course: stop before any student code runs."""

    def preprocess(self, nb, resources):
        raise CourseError(REFUSAL)
