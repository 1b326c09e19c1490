"""The trusted side that grades: it runs as root, never runs student code, and decides every grade
(``grader/ARCHITECTURE.md``, zone 2)."""
