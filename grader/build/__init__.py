"""Building the course from ``solutions/``: the student stubs and notebooks, the grader's reference
outputs, the self-check's stored answers, the catalogue of mistakes, the student release and the
nbgrader course. Nothing here judges a submission (see ``grader/ARCHITECTURE.md``)."""
