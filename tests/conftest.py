"""The project's tests run against the reference solutions unless MINIMODEL_IMPL says otherwise."""

import os

os.environ.setdefault("MINIMODEL_IMPL", "reference")
