"""Every number and formula of lesson 19.01 (the Mini-GPT), checked against the model.

The test reads the pages in both languages, so editing a number or a formula breaks it:

- **Formulas.** The parameter count and the memory formulas are looked up verbatim on the page and
  evaluated for several configurations against ``GPT(config)``: its parameters, its buffers and
  the bias its hooks build.
- **Numbers.** Every ``=`` between numeric sides (parameter counts, bytes with ``B``, ``KiB``,
  ``MiB``, ``GiB``) is evaluated; the tables of fields and of hooks are compared with
  ``GPTConfig`` and ``PositionalHooks``.
- **Code.** The runnable blocks are run against the reference and their output compared with the
  ``text`` block that follows; the excerpts (blocks starting with ``# src/...``) must be literal
  lines of that source file, in order.
- **Measured results.** The timing tables are measurements, not formulas: the test checks that
  each comes with the command that produces it, that its derived columns (tokens/s, ratios)
  follow from its own times, and that the prose's claims about it hold in the table.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import re
import shlex

import pytest
import torch
from docs_pages import LANGS, ROOT, normalise_math, pages
from page_numbers import check_statement, statements

from minimodel.cli import SUBCOMMANDS
from minimodel.encodings import COURSE as ENCODINGS
from minimodel.hooks import Bias, Embed, Rotate, causal_mask
from minimodel.model import GPT, GPTConfig
from minimodel.positional.relative_bias import RelativePositionBias

LESSON = "19/01-mini-gpt.md"
LESSON_CONFIG = dict(vocab_size=98, block_size=128, n_layer=4, n_head=4, n_embd=128)
OTHER_CONFIGS = [
    dict(vocab_size=40, block_size=32, n_layer=2, n_head=4, n_embd=32, max_len=64),
    dict(vocab_size=65, block_size=50, n_layer=3, n_head=6, n_embd=48, max_len=300),
]
UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


@pytest.fixture(params=LANGS)
def page(request):
    return pages(LESSON)[request.param]


def model(positional: str, **config) -> GPT:
    torch.manual_seed(0)
    return GPT(GPTConfig(**{**LESSON_CONFIG, **config, "positional": positional}))


def with_units(tex: str) -> str:
    """Byte units as numbers and thousands without separators, for ``page_numbers``."""
    for unit, size in UNITS.items():
        tex = tex.replace(f"\\ \\text{{{unit}}}", f" \\cdot {size}")
    return re.sub(r"(?<=\d)\\,(?=\d{3}(?!\d))", "", tex)  # 4\,194\,304 -> 4194304


# --- formulas ----------------------------------------------------------------------------------

PARAMETERS = "N_{\\text{params}} = V C + N\\,(12 C^2 + 2 C) + C + N_{\\text{pos}}"


def parameters_formula(config: GPTConfig) -> int:
    """The page's formula, term by term."""
    V, C, N, H = config.vocab_size, config.n_embd, config.n_layer, config.n_head
    extra = {"learned": config.block_size * C, "t5": config.t5_num_buckets * H}
    return V * C + N * (12 * C**2 + 2 * C) + C + extra.get(config.positional, 0)


def test_parameter_formula_matches_the_model(page):
    assert PARAMETERS in page.math
    for config in [LESSON_CONFIG, *OTHER_CONFIGS]:
        for name in ENCODINGS:
            m = model(name, **config)
            assert parameters_formula(m.config) == m.num_parameters(), (name, config)


def test_encoding_parameter_table(page):
    [table] = page.part("parameters").tables
    rows = {row[0]: row[1] for row in table[1:]}
    stated = {name.strip("` "): cell for names, cell in rows.items() for name in names.split(",")}
    assert set(stated) == set(ENCODINGS)
    formulas = {"0": lambda c: 0, "$L_0 \\cdot C$": lambda c: c.block_size * c.n_embd}
    formulas["$32 \\cdot H$"] = lambda c: 32 * c.n_head
    for config in [LESSON_CONFIG, *OTHER_CONFIGS]:
        base = model("none", **config).num_parameters()
        for name, cell in stated.items():
            m = model(name, **config)
            assert m.num_parameters() - base == formulas[cell](m.config), (name, config)
    assert GPTConfig().t5_num_buckets == 32, "the table writes the default 32 buckets"


def test_course_size_numbers(page):
    from minimodel.data import load_data

    assert load_data("stdlib").vocab_size == 98, "V = 98 characters of the stdlib corpus"
    text = normalise_math(page.section("parameters"))
    for claim in (
        "98 \\cdot 128 + 4\\,(12 \\cdot 128^2 + 2 \\cdot 128) + 128 = 800\\,128",
        "128 \\cdot 128 = 16\\,384",
        "32 \\cdot 4 = 128",
        "4 \\cdot 12 \\cdot 128^2 = 786\\,432",
    ):
        assert claim in text, claim
    none, learned = model("none").num_parameters(), model("learned").num_parameters()
    assert none == 800_128 and learned - none == 16_384
    assert round(100 * (learned - none) / none) == 2, "the learned table is 2 % of the model"
    assert "$2$ %" in page.section("parameters")


def test_every_numeric_equality_holds(page):
    checked = 0
    for statement in statements(page.math):
        checked += check_statement(with_units(statement))
    assert checked >= 9, f"only {checked} numeric relations checked"


def test_field_table_matches_gpt_config(page):
    [table] = page.part("model").tables
    defaults = GPTConfig()
    for row in table[1:]:
        fields = [f.strip("` ") for f in row[0].split(",")]
        values = [v.strip('`" ') for v in row[1].split(",")]
        for field, value in zip(fields, values, strict=True):
            assert str(getattr(defaults, field)) == value, (field, value)
    assert "$C/H = 32$" in page.section("model")
    assert defaults.n_embd // defaults.n_head == 32


def test_hooks_table_matches_the_model(page):
    tables = page.part("hooks").tables
    hooks_table = tables[0]
    uses = {}
    for row in hooks_table[1:]:
        number = int(row[0].split("·")[0])
        for name in re.findall(r"`(\w+)`", row[4]):
            uses[name] = number
    by_name = {row[0].strip("`"): row[3] for row in page.part("by-name").tables[0][1:]}
    for name in ENCODINGS:
        hooks = model(name).hooks
        actual = (
            1 if isinstance(hooks, Embed) else
            2 if isinstance(hooks, Rotate) else
            3 if isinstance(hooks, Bias) else None
        )  # fmt: skip
        assert uses.get(name) == actual, name
        assert by_name[name] == (str(actual) if actual else by_name["none"]), name
        if actual == 3:
            assert tuple(hooks.attention_bias(3, 7).shape) == (1, 4, 3, 7)


def test_memory_formulas_match_the_buffers_and_the_bias(page):
    [table] = page.part("memory").tables
    cells = {row[0].strip("`"): (row[1], row[2]) for row in table[1:]}
    assert normalise_math(cells["sinusoidal"][0]) == "$\\text{max\\_len} \\cdot C$ numbers" or (
        normalise_math(cells["sinusoidal"][0]) == "$\\text{max\\_len} \\cdot C$ números"
    )
    rope_tables = "$2 \\cdot \\text{max\\_len} \\cdot \\tfrac{C}{2H}$"
    assert cells["rope"][0].startswith(rope_tables) and cells["rope"][0].endswith(
        "$+ \\tfrac{C}{2H}$"
    )
    assert cells["alibi"][1] == cells["t5"][1] == "$H \\cdot T^2$"
    for config in [LESSON_CONFIG, *OTHER_CONFIGS]:
        C, H = config["n_embd"], config["n_head"]
        max_len = config.get("max_len", GPTConfig().max_len)

        def floats(name: str, config=config) -> int:
            return sum(b.numel() for b in model(name, **config).hooks.buffers())

        assert floats("sinusoidal") == max_len * C
        assert floats("rope") == 2 * max_len * C // (2 * H) + C // (2 * H)
        assert floats("alibi") == H
        assert floats("t5") == floats("learned") == floats("none") == 0
        for name in ("alibi", "t5"):
            for T in (5, 33):
                assert model(name, **config).hooks.attention_bias(T, T).numel() == H * T**2


def test_memory_claims(page):
    text = normalise_math(page.section("memory"))
    claim = "8192 \\cdot 128 \\cdot 4\\ \\text{B} = 4\\,194\\,304\\ \\text{B} = 4\\ \\text{MiB}"
    assert claim in text
    sinusoidal = model("sinusoidal").hooks.input.pe
    assert sinusoidal.numel() * sinusoidal.element_size() == 4 * 2**20
    learned = model("learned").hooks.input.weight
    assert learned.numel() * learned.element_size() == 64 * 2**10
    assert sinusoidal.numel() // learned.numel() == 64, "sixty-four times the learned table"
    rope = model("rope").hooks.rotary
    assert (rope.cos.numel() + rope.sin.numel()) * 4 == 2**20, "RoPE: 1 MiB of cos and sin"
    assert rope.cos.shape == (8192, 16)
    # 1 GiB at T = 8192 with four heads (computed, not built: it would take 1 GiB).
    assert 4 * 8192**2 * 4 == 2**30 and "1\\ \\text{GiB}" in text


def test_tolerance_is_the_model_tests_one(page):
    assert "2 \\cdot 10^{-5}" in page.math
    source = (ROOT / "tests" / "model" / "test_kv_cache.py").read_text()
    assert re.search(r"^ATOL = 2e-5\b", source, re.MULTILINE)


# --- code --------------------------------------------------------------------------------------


def _blocks(page):
    return [(info, body) for info, body in page.code]


def test_excerpts_are_literal_source_lines(page):
    excerpts = [body for info, body in _blocks(page) if body.startswith("# src/")]
    assert len(excerpts) == 2
    for body in excerpts:
        header, *lines = body.rstrip("\n").splitlines()
        path = header[2:].split(",")[0]
        source = [line.strip() for line in (ROOT / path).read_text().splitlines()]
        position = 0
        for line in lines:
            assert line.strip() in source[position:], f"not in {path} (in order): {line!r}"
            position = source.index(line.strip(), position) + 1


def test_code_blocks_run_and_print_what_the_page_shows():
    page = pages(LESSON)["es"]  # the parity test makes both pages' code identical
    blocks = _blocks(page)
    ran = 0
    for index, (info, source) in enumerate(blocks):
        if info != "python" or source.startswith("# src/"):
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(source, f"{LESSON}:code#{index}", "exec"), {})  # noqa: S102
        following = blocks[index + 1] if index + 1 < len(blocks) else ("", "")
        assert following[0] == "text", f"code block #{index} has no output block after it"
        assert out.getvalue() == following[1], f"output of code block #{index}"
        ran += 1
    assert ran == 4


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="minimodel")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module_name, _) in SUBCOMMANDS.items():
        importlib.import_module(module_name).add_arguments(sub.add_parser(name))
    return parser


def test_commands_parse(page):
    [commands] = [body for info, body in page.part("commands").code if info == "bash"]
    parser = _parser()
    lines = commands.strip().splitlines()
    assert [line.split()[1] for line in lines] == ["train", "evaluate", "generate", "compare"]
    for line in lines:
        args = parser.parse_args(shlex.split(line)[1:])
        assert args.command == line.split()[1]
    compare = parser.parse_args(shlex.split(lines[-1])[1:])
    assert compare.encodings == list(ENCODINGS), "compare trains every encoding by default"


# --- measured results --------------------------------------------------------------------------


RESULTS = ROOT / "benchmarks" / "results"
ROW = re.compile(r"^(.*?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s+([\d.]+))?$")


def _number(cell: str) -> float:
    return float(cell.replace("\u202f", "").replace(" ", "").replace(",", "").strip("$x×`"))


def raw_training() -> dict[str, list[float]]:
    """``{encoding: [best ms, median ms, tokens/s, ratio to none]}`` as the script printed them."""
    rows = {}
    for line in (RESULTS / "19_01_training_by_encoding.txt").read_text().splitlines():
        match = ROW.match(line.strip())
        if match and match.group(1) in ENCODINGS:
            rows[match.group(1)] = [float(g) for g in match.groups()[1:]]
    return rows


def raw_attention() -> dict[tuple[str, int], dict[str, list[float]]]:
    """``{(direction, T): {case: [best ms, median ms, ratio]}}`` as the script printed them."""
    tables, current = {}, None
    for line in (RESULTS / "19_01_attention.txt").read_text().splitlines():
        header = re.match(r"attention (forward \+ backward|forward), B=16 H=4 T=(\d+)", line)
        if header:
            current = tables.setdefault((header.group(1), int(header.group(2))), {})
            continue
        match = ROW.match(line.strip())
        if current is not None and match and not match.group(5):
            current[match.group(1)] = [float(g) for g in match.groups()[1:4]]
    return tables


def test_training_table_comes_from_the_benchmark(page):
    """``benchmarks/training_by_encoding.py`` printed ``RESULTS/19_01_training_by_encoding.txt``;
    the page gives the numbers and how they were measured, not the course's paths (students do
    not get ``benchmarks/``)."""
    section = page.part("time")
    assert (ROOT / "benchmarks" / "training_by_encoding.py").is_file()
    assert "benchmarks/" not in section.text and "PyTorch 2.13" in section.text
    raw = raw_training()
    assert list(raw) == list(ENCODINGS)
    training = section.tables[0]
    rows = {row[0].strip("`"): [_number(c) for c in row[1:]] for row in training[1:]}
    assert list(rows) == list(ENCODINGS)
    tokens = 16 * 256
    for name, (best_ms, median_ms, rate, ratio) in rows.items():
        assert [best_ms, median_ms, rate, ratio] == raw[name], name
        assert best_ms <= median_ms, name
        # best ms is printed to 0.1 ms, tokens/s from the unrounded time
        slowest, fastest = tokens / ((best_ms + 0.05) / 1e3), tokens / ((best_ms - 0.05) / 1e3)
        assert slowest - 0.5 <= rate <= fastest + 0.5, f"{name}: tokens/s"
        assert abs(ratio - rate / rows["none"][2]) <= 0.0051, f"{name}: ratio to none"


def test_attention_table_comes_from_the_benchmark(page):
    """``benchmarks/attention.py`` printed ``RESULTS/19_01_attention.txt``."""
    section = page.part("time")
    assert (ROOT / "benchmarks" / "attention.py").is_file()
    raw = raw_attention()
    header, *rows = section.tables[1]
    columns = [("forward", 256), ("forward", 1024)]
    columns += [("forward + backward", 256), ("forward + backward", 1024)]
    assert [int(m) for m in re.findall(r"T = (\d+)", " ".join(header))] == [256, 1024, 256, 1024]
    cases = {}
    for row, case in zip(rows, ("causal (fused)", "alibi bias", "t5 bias"), strict=True):
        cases[case] = [_number(c) for c in row[1:]]
        for column, value in zip(columns, cases[case], strict=True):
            assert value == raw[column][case][0], (case, column)
    causal, alibi, t5 = cases.values()
    # The prose: the bias takes SDPA off its causal path, so ALiBi and T5 are slower, and the
    # gap grows with T, in each direction.
    for column in range(4):
        assert alibi[column] > causal[column] and t5[column] > causal[column]
    for short, long in ((0, 1), (2, 3)):
        assert alibi[long] / causal[long] > alibi[short] / causal[short]
        assert t5[long] / causal[long] > t5[short] / causal[short]


def test_the_measurements_say_where_they_come_from(page):
    text = page.section("time")
    assert re.search(r"PyTorch 2\.\d+", text), "name the PyTorch version"
    assert torch.__version__.startswith("2."), "the version the page names"


def test_input_scale_and_t5_bias_scale(page):
    text = page.section("model")
    assert "$\\sqrt{C}$" in text and "$0.02$" in text and "$-1$" in text
    sinusoidal = model("sinusoidal")
    x = torch.randn(2, 10, 128)
    with torch.no_grad():
        got = sinusoidal.hooks.add_to_input(x, 3)
    expected = x * 128**0.5 + sinusoidal.hooks.input.pe[3:13]
    assert torch.allclose(got, expected, atol=1e-5), "sinusoidal: sqrt(C) x + PE"
    assert abs(model("none").wte.weight.std().item() - 0.02) < 0.002, "embeddings at std 0.02"
    table = sinusoidal.hooks.input.pe
    assert float(table.min()) >= -1 and float(table.max()) <= 1
    assert "$\\sqrt{C/H}$" in page.section("hooks")
    t5 = model("t5").hooks
    with torch.no_grad():
        bias = t5.attention_bias(6, 6)[0]
        raw = t5.relative(6, 6)
    finite = torch.isfinite(bias)
    assert torch.allclose(bias[finite], (raw * (128 / 4) ** 0.5)[finite]), "T5 bias x sqrt(C/H)"


def test_t5_bias_scale_is_a_reparametrisation_not_t5s_balance(page):
    import torch.nn.functional as F

    hooks = page.section("hooks")
    assert "\\big(q \\cdot k + (C/H)\\, b\\big)/\\sqrt{C/H}" in page.math
    assert "$C/H = 32$" in hooks and "`scale=1.0`" in hooks
    t5 = model("t5")
    head_dim = t5.config.n_embd // t5.config.n_head
    assert head_dim == 32 and t5.hooks.bias_scale == 32**0.5
    # SDPA with the hook's bias computes (q.k + d b) / sqrt(d): the position term d times T5's.
    torch.manual_seed(0)
    T = 6
    q, k, v = (torch.randn(1, 4, T, head_dim) for _ in range(3))
    with torch.no_grad():
        t5.hooks.relative.bias.weight.normal_(0.0, 1.0)
        bias = t5.hooks.attention_bias(T, T)
        raw = t5.hooks.relative(T, T) + causal_mask(T, T)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    logits = (q @ k.transpose(-2, -1) + head_dim * raw) / head_dim**0.5
    assert torch.allclose(out, logits.softmax(-1) @ v, atol=1e-5)
    as_t5 = (q @ k.transpose(-2, -1) + raw).softmax(-1) @ v
    assert not torch.allclose(out, as_t5, atol=1e-2), "not T5's logits"
    assert torch.allclose(
        F.scaled_dot_product_attention(q, k, v, attn_mask=raw, scale=1.0), as_t5, atol=1e-5
    ), "scale=1.0 and the bias as is: T5's logits"
    # The table starts at std 0.02, so the bias that reaches the logits at 0.02 sqrt(32).
    wide = RelativePositionBias(10_000)
    assert abs(wide.bias.weight.std().item() - 0.02) < 5e-4
    # With AdamW, one step moves the table by about lr per entry, whatever the gradient's scale,
    # so the bias that reaches the logits moves sqrt(32) times more than an unscaled table.
    moved = {}
    for scale in (1.0, t5.hooks.bias_scale):
        torch.manual_seed(0)
        table = torch.nn.Parameter(torch.randn(32, 4) * 0.02)
        start = (table * scale).detach().clone()
        optimizer = torch.optim.AdamW([table], lr=1e-3, weight_decay=0.0)
        target = torch.randn(32, 4)
        ((table * scale - target) ** 2).sum().backward()
        optimizer.step()
        moved[scale] = ((table * scale).detach() - start).abs().mean().item()
    assert abs(moved[t5.hooks.bias_scale] / moved[1.0] - 32**0.5) < 1e-3


def test_xpos_uses_the_letters_of_17_03():
    """17.03 puts the query at m and the key at n; 19.01's xPos says the same, and its decay
    falls with the distance m - n >= 0 of a causal model."""
    from minimodel.encodings.xpos import xpos_decay

    said = {"es": r"consulta de la posición $m$ por $\zeta_i^{\,m/512}$ y la clave de la posición "
                  r"$n$ por $\zeta_i^{-n/512}$",
            "en": r"query at position $m$ by $\zeta_i^{\,m/512}$ and the key at position $n$ by "
                  r"$\zeta_i^{-n/512}$"}
    for lang, page in pages("19/01-mini-gpt.md").items():
        assert said[lang] in " ".join(page.text.split()), lang
    # The given module's docstrings use the lesson's letters too.
    from minimodel.encodings import xpos

    docs = " ".join((xpos.__doc__ + xpos.XPos.__doc__).split())
    assert "the query by ``zeta_i ** (m / 512)`` and the key by ``zeta_i ** (-n / 512)``" in docs
    assert "query at position ``m`` by ``zeta_i ** (m / 512)``" in docs
    zeta = xpos_decay(32).double()
    m, n = 700, 100  # query after key
    assert torch.all(zeta ** (m / 512) * zeta ** (-n / 512) <= 1)
