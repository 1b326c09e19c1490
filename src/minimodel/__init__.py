"""minimodel: the course library.

- ``minimodel.positional``: the positional encodings students implement (one file each).
- The rest (messages, self-check, the Mini-GPT) is given code that uses them.
"""

__version__ = "0.1.0"
