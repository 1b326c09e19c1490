"""Each classic mistake of the catalogue (``solutions/mistakes/``) written into the reference,
as a student would write it: lab -> mistake code -> ``(old, new)`` edits of the lab's module.

The labs listed here are those whose grader names the catalogue's mistakes.
"""

MISTAKEN = {
    "17.01": {
        "concatenated": ("pe[:, 0::2] = np.sin(angles)\n    pe[:, 1::2] = np.cos(angles)",
                         "pe[:, : d // 2] = np.sin(angles)\n    pe[:, d // 2 :] = np.cos(angles)"),
        "exponent": ("inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)",
                     "inv_freq = base ** (-np.arange(0, d // 2, dtype=np.float64) / d)"),
        "swapped": ("pe[:, 0::2] = np.sin(angles)\n    pe[:, 1::2] = np.cos(angles)",
                    "pe[:, 0::2] = np.cos(angles)\n    pe[:, 1::2] = np.sin(angles)"),
        "from-one": ("angles = np.arange(T, dtype=np.float64)[:, None]",
                     "angles = np.arange(1, T + 1, dtype=np.float64)[:, None]"),
        "base-ignored": ("inv_freq = base ** (", "inv_freq = 10000.0 ** ("),
    },
}
