"""The student's self-check: visible checks per lab, run safely, reported in the student's language.

- ``compare.py``: bilingual comparison of arrays (type, shape, dtype, values) and ``CheckFailure``.
- ``contracts.py``: what a graded function must return, in the words the grader uses too.
- ``lab_<phase>_<lesson>.py``: the visible checks of one lab (also run by ``tests/student/``).
- ``runner.py``: runs a lab's checks in a child process with a time limit per check.
- ``command.py``: ``minimodel check 17.01`` / ``make check LAB=17.01``.
"""
