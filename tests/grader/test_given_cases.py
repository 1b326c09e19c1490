"""Cases that run the course's given code on the student's module (``Case("given", ...)``):
only a ``minimodel`` function outside the student's package and the self-check can be named,
and it gets the student's module first."""

from __future__ import annotations

import pytest
import torch

from grader.child.probe_runner import call_case, given_function
from grader.hidden.spec import Case
from minimodel.positional import scaling


@pytest.mark.parametrize("name", [
    "minimodel.positional.rope.apply_rope",  # the student's own code
    "minimodel.selfcheck.compare.compare",  # the self-check's answers
    "os.system", "builtins.eval", "minimodel", "hf_llama.llama_logits",
])
def test_only_given_code_can_be_named(name):
    with pytest.raises(ValueError, match="given code"):
        given_function(name)


def test_a_given_case_gets_the_student_module_first():
    parameters = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 4.0,
                  "original_max_position_embeddings": 64, "low_freq_factor": 1.0,
                  "high_freq_factor": 4.0}
    case = Case("given", "minimodel.hf_llama.scaling_from_rope_parameters", (parameters, 16))
    inv_freq, factor = call_case(scaling, case.to_json(), {}, "cpu")
    expected = scaling.llama3_scaling(16, 10000.0, factor=4.0, original_max_len=64)
    assert torch.equal(inv_freq, expected[0]) and factor == expected[1]
