"""Instructor tooling: generated copies (stubs, labs, references), hidden checks and grading.

Nothing in this package ships to students (see ``minimodel-grader release``).
"""
