"""Which implementation the tests exercise.

In the course repository the tests run against the reference solutions; in a student's copy
(no ``solutions/``) they run against the student's own files. ``MINIMODEL_IMPL`` overrides both.
"""

import os

from minimodel.implementation import REFERENCE_DIR

os.environ.setdefault("MINIMODEL_IMPL", "reference" if REFERENCE_DIR.is_dir() else "src")
