"""The course's rule of what a graded module may use (``minimodel.own_work``), read from the
source and watched at run time: the self-check, ``make submit`` and the grader all apply it."""

from __future__ import annotations

import sys
import textwrap

import pytest
import torch

from minimodel import own_work
from minimodel.implementation import REFERENCE_DIR, STUBS_DIR


@pytest.mark.parametrize(("source", "kind", "name"), [
    ("from transformers.models.llama.modeling_llama import apply_rotary_pos_emb", "library",
     "transformers.models.llama.modeling_llama"),
    ("import transformers", "library", "transformers"),
    ("def f(q):\n    from torchtune.modules import RotaryPositionalEmbeddings", "library",
     "torchtune.modules"),
    ("from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS", "library",
     "transformers.modeling_rope_utils"),
    ("from minimodel import hf_llama\nf = hf_llama.modeling_llama.rotate_half", "library",
     "transformers.modeling_llama"),
    ("import torch\nf = torch.onnx.ops.rotary_embedding", "library", "torch.onnx"),
    ("import importlib\nm = importlib.import_module('transf' + 'ormers')", "library",
     "transformers"),
    ("m = __import__(''.join(['transformers', '.models']))", "library", "transformers.models"),
    ("import sys\nsys.setprofile(None)", "hidden", "sys.setprofile"),
    ("import sys\ngetattr(sys, 'set' + 'trace')(None)", "hidden", "sys.settrace"),
    ("from minimodel import own_work", "hidden", "minimodel.own_work"),
    ("import minimodel.selfcheck.snapshots", "self-check", "minimodel.selfcheck.snapshots"),
    ("import importlib\nimportlib.import_module('minimodel.selfcheck')", "self-check",
     "minimodel.selfcheck"),
])
def test_every_refused_use_is_read_and_named(source, kind, name):
    assert own_work.refusal_in(source) == own_work.Refusal(kind, name)


@pytest.mark.parametrize("source", [
    "import math\nimport numpy as np\nimport torch\nimport torch.nn.functional as F",
    "from torch import nn\nclass A(nn.Module):\n    def n(self):\n        return len(list("
    "self.modules()))",
    "import torch\nf = torch.compile(lambda x: x)\nmodel = None\nmodel.eval()",
    "from minimodel.positional.rope import apply_rotary\nfrom . import rope\n"
    "'''Checked with make check LAB=17.03: half and interleaved.'''",
    "x = 'half'\ny = 'torch.float32'\nz = 'transformers'",  # strings that import nothing
    # a name computed at run time: the watch sees what it is used for
    "import importlib, sys\nm = importlib.import_module(name)\nn = sys.modules[name]\n"
    "exec(code)",
    "def broken(:\n",  # the self-check and the grader report the syntax error instead
])
def test_what_the_labs_need_is_allowed(source):
    assert own_work.refusal_in(source) is None


@pytest.mark.parametrize("folder", [REFERENCE_DIR, STUBS_DIR], ids=["reference", "stubs"])
def test_the_course_s_own_modules_are_allowed(folder):
    assert own_work.refused_modules(own_work.read_folder(folder)) == {}


def test_a_module_importing_a_refused_one_is_refused_through_it():
    files = {"rope": "import transformers\n", "two_d": "from .rope import apply_rotary\n",
             "scaling": "from minimodel.positional import rope\n", "alibi": "import torch\n"}
    found = own_work.refused_modules(files)
    assert sorted(found) == ["rope", "scaling", "two_d"]
    assert found["two_d"] == own_work.Refusal("library", "transformers", "rope.py")
    es, en = own_work.explain(found["two_d"], "two_d.py")
    assert es.startswith("two_d.py usa transformers (a través de rope.py, que importa)")
    assert en.startswith("two_d.py uses transformers (through rope.py, which it imports)")


STUDENT = """\
import torch

def honest(x):
    print("printing is fine")
    return torch.nn.functional.pad(torch.sin(x), (1, 1))

def borrowed(x):
    from minimodel import hf_llama
    module = getattr(hf_llama, "model" + "ing_llama")
    return getattr(module, "rotate" + "_half")(x)

def computed(x):
    import importlib
    name = "".join(chr(c) for c in b"transformers.models.llama.modeling_llama")
    namespace = {"name": name, "x": x}
    exec("import sys; result = sys.modules[name].rotate_half(x)", namespace)
    return importlib.import_module(name).rotate_half(namespace["result"])

def switched_off():
    import sys
    sys.setprofile(None)

def forks():
    import os
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
"""


@pytest.fixture
def student(tmp_path, monkeypatch):
    (tmp_path / "student_module.py").write_text(STUDENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "student_module", raising=False)
    import student_module

    return tmp_path, student_module


def test_the_watch_sees_a_library_call_however_it_is_reached(student):
    folder, module = student
    with own_work.Watch(folder) as watch:
        module.borrowed(torch.ones(2, 4))
    assert watch.take() == ["transformers.models.llama.modeling_llama.rotate_half"]
    with watch:
        module.computed(torch.ones(2, 4))
    assert watch.take() == ["transformers.models.llama.modeling_llama.rotate_half"]
    with watch:
        module.honest(torch.ones(2, 4))
    assert watch.take() == []


def test_the_watch_leaves_the_given_code_s_own_calls_alone(student):
    from minimodel import hf_llama

    with own_work.Watch(student[0]) as watch:
        hf_llama.tiny_llama()(torch.zeros(1, 4, dtype=torch.long))
    assert watch.take() == []


def test_a_library_s_at_fork_hooks_are_not_the_student_s_calls(student):
    """filelock (installed with transformers) runs hooks of its own in every os.fork; a module
    that forks calls none of them itself."""
    import filelock  # noqa: F401 - registers its at-fork hooks

    with own_work.Watch(student[0]) as watch:
        student[1].forks()
    assert watch.take() == []


def test_a_watch_switched_off_is_a_refusal(student):
    before = sys.getprofile()
    with own_work.Watch(student[0]) as watch:
        student[1].switched_off()
    assert watch.take() == [own_work.TAMPERED] and sys.getprofile() is before


def test_only_a_real_library_function_passes_as_a_refused_call():
    real = "transformers.models.llama.modeling_llama.apply_rotary_pos_emb"
    assert own_work.refused_call(own_work.call_refusal(real)) == real
    assert own_work.refused_call(own_work.call_refusal(own_work.TAMPERED)) == own_work.TAMPERED
    for forged in ["transformers.models.llama.modeling_llama.rotate_0_841",
                   "transformers.x0_841", "numpy.sin", "minimodel.positional.rope.apply_rotary"]:
        assert own_work.refused_call(own_work.call_refusal(forged)) is None, forged
    assert own_work.refused_call(own_work.call_refusal(real) + " 0.841") is None
    assert own_work.refused_call(textwrap.dedent(real)) is None
