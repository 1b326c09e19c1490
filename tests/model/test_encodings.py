"""The table of encodings (``minimodel.encodings``) says what the model really does with each."""

import pytest
import torch
from conftest import tiny_model

from minimodel.course import LABS
from minimodel.encodings import ENCODINGS, HOOKS
from minimodel.implementation import REFERENCE_DIR, STUBS_DIR


@pytest.mark.parametrize("encoding", ENCODINGS.values(), ids=list(ENCODINGS))
def test_each_row_names_a_real_module_lesson_and_hook(encoding):
    if encoding.module is None:
        assert encoding.hook is None and encoding.lesson is None
        return
    assert (REFERENCE_DIR / f"{encoding.module}.py").exists()
    assert (STUBS_DIR / f"{encoding.module}.py").exists()
    assert encoding.module in next(lab.modules for lab in LABS if lab.id == encoding.lesson)
    assert encoding.hook in HOOKS


@pytest.mark.parametrize("encoding", ENCODINGS.values(), ids=list(ENCODINGS))
def test_the_model_uses_exactly_the_hook_of_the_table(encoding):
    hooks = tiny_model(encoding.name).hooks
    x = torch.randn(1, 5, 32)
    q, k = torch.randn(2, 1, 4, 5, 8).unbind(0)
    used = set()
    if not torch.equal(hooks.add_to_input(x, offset=0), x):
        used.add("input")
    if not torch.equal(hooks.rotate(q, k, offset=0)[0], q):
        used.add("rotate")
    if hooks.attention_bias(5, 5) is not None:
        used.add("bias")
    assert used == ({encoding.hook} if encoding.hook else set())
