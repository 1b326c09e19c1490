"""Self-check of lab 18.02 (RoPE scaling): a student's copy with one of LongRoPE's classic
mistakes gets the catalogue's explanation, the words the grader uses (reference and stubs:
``test_selfcheck_every_lab.py``)."""

import pytest
from selfcheck_copies import diagnose

from grader.build.mistakes import catalogue

SWITCH = "if seq_len is not None and seq_len > original_max_len:  # past L0: the long set"
LONG = "inv_freq = theta / torch.as_tensor(long_factor, dtype=torch.float32)"
SHORT = "inv_freq = theta / torch.as_tensor(short_factor, dtype=torch.float32)"
FACTOR = "math.sqrt(1 + math.log(factor) / math.log(original_max_len)) if factor > 1"

MISTAKES = [
    # (mistake code, edits in scaling.py, the check that names it)
    ("switch-extended", [(SWITCH, "if seq_len is not None and seq_len > factor * "
                                  "original_max_len:")], "longrope_switch"),
    ("switch-at-original", [(SWITCH, "if seq_len is not None and seq_len >= original_max_len:")],
     "longrope_switch"),
    ("factor-multiplied", [(LONG, LONG.replace("theta /", "theta *")),
                           (SHORT, SHORT.replace("theta /", "theta *"))], "longrope_switch"),
    ("attention-factor-forgotten", [(FACTOR, "1.0 if factor > 1")], "longrope_attention_factor"),
    ("attention-factor-yarn", [(FACTOR, "0.1 * math.log(factor) + 1.0 if factor > 1")],
     "longrope_attention_factor"),
]


@pytest.mark.parametrize(("code", "edits", "check"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_longrope_mistake_is_named_in_the_catalogues_words(tmp_path, code, edits, check):
    (item,) = [m for m in catalogue("scaling") if m.code == code]
    results = diagnose(tmp_path, "18.02", "scaling", *edits)
    assert results[check].status == "fail"
    assert item.es in results[check].detail_es and item.en in results[check].detail_en
    assert results["longrope_defaults"].status == "pass" or check == "longrope_switch"
