"""Instructor tooling, in three zones (``grader/ARCHITECTURE.md``): ``build`` (the generated
copies: stubs, notebooks, reference outputs, the release), ``trusted`` with ``hidden`` (grading)
and ``child`` (what runs next to student code, in the sandbox); ``cli`` is ``minimodel-grader``.

Nothing in this package ships to students (see ``minimodel-grader release``).
"""

import sys as _sys

# jsonschema (imported by nbformat and nbgrader) compiles a grammar for the optional "iri" string
# formats when it is imported: about a second of CPU in every grading process, for formats no
# notebook schema uses. Marking that optional module as absent makes jsonschema skip them.
_sys.modules.setdefault("rfc3987_syntax", None)
