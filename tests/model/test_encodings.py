"""The table of encodings (``minimodel.encodings``): a row is the whole encoding.

Each row names a real module, lesson and hook class, and the model does exactly what the class
says; no code outside an encoding's own module chooses what to do by its name; an encoding
registered in a test, and nowhere else, trains, decodes with a KV cache and is compared; every
encoding can be built on the meta device and loaded.
"""

import ast
import csv
import re
from pathlib import Path

import pytest
import torch
from conftest import tiny_config, tiny_model
from test_kv_cache import cached_logits

from minimodel.cli import main
from minimodel.course import lab_of
from minimodel.encodings import COURSE, ENCODINGS, STUDENT_WRITTEN, Encoding
from minimodel.hooks import Bias, Embed, Hook, Rotate
from minimodel.implementation import REFERENCE_DIR, REPO_ROOT, STUBS_DIR
from minimodel.model import GPT

GIVEN_DIR = REPO_ROOT / "src" / "minimodel" / "encodings"  # modules of encodings no lab grades


@pytest.mark.parametrize("encoding", ENCODINGS.values(), ids=list(ENCODINGS))
def test_each_row_names_a_real_module_lesson_and_hook(encoding):
    assert issubclass(encoding.hook, Hook)
    assert re.fullmatch(r"#[0-9a-f]{6}", encoding.colour)
    if encoding.module is None:
        assert encoding.hook is Hook and encoding.lesson is None and encoding.file == ""
        return
    assert all(encoding.hint) and encoding.hint[0] != encoding.hint[1]
    lab = lab_of(encoding.module)
    if lab is None:  # given code, next to the table
        assert encoding.lesson is None and (GIVEN_DIR / f"{encoding.module}.py").is_file()
        return
    assert encoding.lesson == lab.id
    assert (REFERENCE_DIR / f"{encoding.module}.py").exists()
    assert (STUBS_DIR / f"{encoding.module}.py").exists()


def test_the_labs_name_the_course_encodings_in_order():
    assert tuple(ENCODINGS)[: len(COURSE)] == COURSE
    assert [e.name for e in STUDENT_WRITTEN] == [n for n in COURSE if ENCODINGS[n].module]
    assert all(e.lesson for e in STUDENT_WRITTEN)


@pytest.mark.parametrize("encoding", ENCODINGS.values(), ids=list(ENCODINGS))
def test_the_model_uses_exactly_the_hook_of_its_class(encoding):
    hooks = tiny_model(encoding.name).hooks
    x = torch.randn(1, 5, 32)
    q, k = torch.randn(2, 1, 4, 5, 8).unbind(0)
    used = set()
    if not torch.equal(hooks.add_to_input(x, offset=0), x):
        used.add(Embed)
    if not torch.equal(hooks.rotate(q, k, offset=0)[0], q):
        used.add(Rotate)
    if hooks.attention_bias(5, 5) is not None:
        used.add(Bias)
    assert used == {kind for kind in (Embed, Rotate, Bias) if issubclass(encoding.hook, kind)}


# --- no code outside an encoding's own module chooses by its name ------------------------------
SOLUTION = re.compile(r"^( *)### BEGIN SOLUTION\n.*?### END SOLUTION\n", re.S | re.M)


def _code_files() -> list[Path]:
    """The code that uses the encodings: the library (but the student's modules), the labs'
    given code, the figures, the benchmarks. The labs' exercises (solution blocks) and their
    hidden checks are about the course's own encodings and may name them."""
    own = {f"{e.module}.py" for e in ENCODINGS.values() if e.module}
    files = [p for p in (REPO_ROOT / "src" / "minimodel").rglob("*.py")
             if "positional" not in p.parts and not (p.parent == GIVEN_DIR and p.name in own)]
    files += sorted((REPO_ROOT / "solutions" / "labs").glob("*/notebook.py"))
    files += sorted((REPO_ROOT / "docs_site").rglob("*.py"))
    return files + sorted((REPO_ROOT / "benchmarks").glob("*.py"))


def _names_compared(tree: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    """``(line, name)`` of every comparison (``==``, ``!=``, ``in``, ...) with a registered name,
    alone or in a literal tuple, list or set, that decides a branch (``if``, ``while``, ``x if c
    else y``). Picking rows of recorded results by name (a comprehension's filter) is not one."""
    found = []
    for branch in ast.walk(tree):
        if not isinstance(branch, ast.If | ast.IfExp | ast.While):
            continue
        for node in ast.walk(branch.test):
            if not isinstance(node, ast.Compare):
                continue
            for side in (node.left, *node.comparators):
                items = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
                found += [(node.lineno, item.value) for item in items
                          if isinstance(item, ast.Constant) and item.value in names]
    return found


def test_no_code_outside_an_encodings_module_branches_on_its_name():
    names = set(ENCODINGS)
    found = []
    for path in _code_files():
        text = SOLUTION.sub(lambda m: f"{m.group(1)}pass\n", path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(REPO_ROOT)}:{line}: {name!r}"
                  for line, name in _names_compared(ast.parse(text), names)]
    assert not found, "\n".join(found)


def test_the_name_check_sees_a_branch_on_a_name():
    code = ('if hooks.kind == "rope" or name in ("sinusoidal", "x"):\n    pass\n'
            'b = 0 if "t5" != e else 1\n'
            'rows = [r for r in rows if r["encoding"] == "alibi"]\n')
    assert sorted(_names_compared(ast.parse(code), set(ENCODINGS))) == [
        (1, "rope"), (1, "sinusoidal"), (3, "t5")]


# --- an encoding registered here, and nowhere else ---------------------------------------------
class LearntSlopes(Bias):
    """A toy encoding: ALiBi with one learnt slope per head, and a table no checkpoint holds."""

    def __init__(self, config) -> None:
        super().__init__(config)
        self.slope = torch.nn.Parameter(torch.full((config.n_head,), 0.1))
        self.register_buffer("keys", torch.arange(config.max_len), persistent=False)

    def bias(self, q_len: int, k_len: int) -> torch.Tensor:
        keys = self.keys[:k_len]
        distance = (keys[k_len - q_len :, None] - keys[None, :]).float()  # (q_len, k_len)
        bias = -self.slope[:, None, None] * distance
        return bias.masked_fill(distance < 0, float("-inf"))


@pytest.fixture
def toy(monkeypatch) -> str:
    monkeypatch.setitem(ENCODINGS, "toy", Encoding("toy", None, LearntSlopes, "#000000"))
    return "toy"


def test_a_registered_encoding_trains_decodes_and_is_compared(toy, tmp_path, capsys):
    model = tiny_model(toy).train()
    optimizer = model.optimizer(lr=3e-2, weight_decay=0.0)
    idx = torch.randint(0, 40, (4, 32), generator=torch.Generator().manual_seed(5))
    losses = []
    for _ in range(3):
        _, loss = model(idx[:, :-1], idx[:, 1:])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] and model.hooks.slope.grad.abs().sum() > 0
    with torch.no_grad():
        model.eval()
        torch.testing.assert_close(cached_logits(model, idx, [5, 6, 20]), model(idx)[0],
                                   atol=2e-5, rtol=0)
    out = tmp_path / "compare"
    assert main(["compare", "--out", str(out), "--encodings", toy, "--steps", "2",
                 "--factors", "1", "2", "--sequences", "2", "--data", "copy",
                 "--block-size", "16", "--layers", "1", "--width", "16", "--heads", "2",
                 "--batch-size", "2", "--warmup", "1", "--device", "cpu", "--threads", "1"]) == 0
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [(r["encoding"], r["eval_length"]) for r in rows] == [(toy, "16"), (toy, "32")]
    assert toy in capsys.readouterr().out


# --- meta-device initialisation (torchtune's test_rope_init_meta_device) -----------------------
@pytest.fixture(params=[*ENCODINGS, "toy"])
def any_encoding(request, monkeypatch) -> str:
    if request.param == "toy":
        request.getfixturevalue("toy")
    return request.param


@torch.no_grad()
def test_a_model_built_on_the_meta_device_loads_and_gives_the_same_logits(any_encoding):
    config = tiny_config(any_encoding, max_len=64)
    model = tiny_model(any_encoding, max_len=64)
    with torch.device("meta"):
        lazy = GPT(config)
    assert all(p.is_meta for p in lazy.parameters())
    lazy.to_empty(device="cpu")
    lazy.reset_tables()
    lazy.load_state_dict(model.state_dict())
    idx = torch.randint(0, 40, (2, 24), generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(lazy.eval()(idx)[0], model(idx)[0], atol=0, rtol=0)
    torch.testing.assert_close(lazy.to(torch.bfloat16)(idx)[0], model.to(torch.bfloat16)(idx)[0],
                               atol=0, rtol=0)  # a cast after loading rebuilds tables too
