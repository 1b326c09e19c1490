"""Instructor tooling: generated copies (stubs, labs, references), hidden checks and grading.

Nothing in this package ships to students (see ``minimodel-grader release``).
"""

import sys as _sys

# jsonschema (imported by nbformat and nbgrader) compiles a grammar for the optional "iri" string
# formats when it is imported: about a second of CPU in every grading process, for formats no
# notebook schema uses. Marking that optional module as absent makes jsonschema skip them.
_sys.modules.setdefault("rfc3987_syntax", None)
