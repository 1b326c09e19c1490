"""Visible checks for lab 17.03 (RoPE). Students may read these; the grader's differ."""

from __future__ import annotations

import torch

from minimodel.selfcheck.compare import CheckList, StudentModule, expect_array
from minimodel.selfcheck.snapshots import Snapshots

checks = CheckList()
rope = StudentModule("rope")
snap = Snapshots("17.03")


def _heads(shape=(2, 3, 5, 8), seed=0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


@checks.add("rope_frequencies", "theta_i = base^(-2i/r) en float32",
            "theta_i = base^(-2i/r) in float32")
def frequency_values() -> None:
    snap.expect(rope.rope_frequencies(8), "rope_frequencies(8)")
    snap.expect(rope.rope_frequencies(6, base=100.0), "rope_frequencies(6, base=100.0)")


@checks.add("rope_cos_sin", "cos y sin de p·theta, (T, F) y (B, T, F)", "cos and sin of p·theta")
def cos_sin_tables() -> None:
    theta = torch.tensor([1.0, 0.1, 0.01])
    cos, sin = rope.rope_cos_sin(torch.tensor([0, 1, 5, 200]), theta)
    name = "rope_cos_sin([0, 1, 5, 200], [1, 0.1, 0.01])"
    snap.expect(cos, f"{name}[0]", atol=1e-5)
    snap.expect(sin, f"{name}[1]", atol=1e-5)
    cos_b, _ = rope.rope_cos_sin(torch.tensor([[0, 1], [7, 8]]), theta, attention_factor=2.0)
    name = "rope_cos_sin([[0, 1], [7, 8]], [1, 0.1, 0.01], attention_factor=2.0)"
    snap.expect(cos_b, f"{name}[0]", atol=1e-5)


@checks.add("apply_rotary", "x = [1, 2, 3, 4] en p = 1, intercalada",
            "x = [1, 2, 3, 4] at p = 1, interleaved")
def reference_interleaved() -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 1, 4)
    got = rope.apply_rope(x, torch.tensor([1]), rope.rope_frequencies(4))
    snap.expect(got, "apply_rope([1, 2, 3, 4], [1], rope_frequencies(4))", atol=1e-5)


@checks.add("apply_rotary", "x = [1, 2, 3, 4] en p = 1, mitades", "x = [1, 2, 3, 4] at p = 1, half")
def reference_half() -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 1, 4)
    got = rope.apply_rope(x, torch.tensor([1]), rope.rope_frequencies(4), convention="half")
    snap.expect(got, "apply_rope([1, 2, 3, 4], [1], rope_frequencies(4), 'half')", atol=1e-5)


@checks.add("apply_rotary", "las dos convenciones, varias posiciones",
            "both conventions, many positions")
def many_positions() -> None:
    x = _heads()
    positions = torch.tensor([0, 3, 17, 100, 999])
    for convention in ("interleaved", "half"):
        got = rope.apply_rope(x, positions, rope.rope_frequencies(8), convention=convention)
        name = f"apply_rope(randn(2, 3, 5, 8), [0, 3, 17, 100, 999], ..., {convention!r})"
        snap.expect(got, name, atol=1e-4)


@checks.add("apply_rotary", "posiciones por secuencia (B, T)", "positions per sequence (B, T)")
def batch_positions() -> None:
    x = _heads((2, 2, 3, 4), seed=1)
    positions = torch.tensor([[0, 1, 2], [10, 11, 12]])
    got = rope.apply_rope(x, positions, rope.rope_frequencies(4))
    snap.expect(got, "apply_rope(randn(2, 2, 3, 4), [[0, 1, 2], [10, 11, 12]], ...)", atol=1e-5)


@checks.add("apply_rotary", "rotación parcial: la cola no cambia",
            "partial rotation: tail unchanged")
def partial_rotation() -> None:
    x = _heads((1, 2, 4, 8), seed=2)
    positions = torch.arange(4)
    for convention in ("interleaved", "half"):
        got = rope.apply_rope(x, positions, rope.rope_frequencies(4), convention=convention)
        name = f"apply_rope(randn(1, 2, 4, 8), arange(4), rope_frequencies(4), {convention!r})"
        expect_array(got, x, name=name, values=False, keeps="apply_rotary")  # x's kind, dtype
        snap.expect(got[..., 4:], f"{name}[..., 4:]")  # the tail: x's, as it was
        snap.expect(got, name, atol=1e-5)


@checks.add("apply_rotary", "bfloat16 en p >= 4096: ángulos en float32", "bfloat16 at p >= 4096")
def bfloat16_large_positions() -> None:
    x = _heads((1, 1, 16, 64), seed=3).to(torch.bfloat16)
    got = rope.apply_rope(x, torch.arange(4096, 4112), rope.rope_frequencies(64))
    name = "apply_rope(randn(1, 1, 16, 64).bfloat16(), arange(4096, 4112), ...)"
    snap.expect(got, name, atol=3e-2, rtol=2e-2, keeps="apply_rotary")


@checks.add("rope_permutation", "[0, 2, ..., 1, 3, ..., r, ..., D-1]",
            "[0, 2, ..., 1, 3, ..., r, ..., D-1]")
def permutation_values() -> None:
    expect_array(rope.rope_permutation(8), torch.tensor([0, 2, 4, 6, 1, 3, 5, 7]),
                 name="rope_permutation(8)")
    expect_array(rope.rope_permutation(8, rotary_dim=4), torch.tensor([0, 2, 1, 3, 4, 5, 6, 7]),
                 name="rope_permutation(8, rotary_dim=4)")


@checks.add("RotaryEmbedding", "tablas float32 y offset (caché KV)",
            "float32 tables and offset (KV cache)")
def module_offset() -> None:
    module = rope.RotaryEmbedding(8, max_len=32, convention="half")
    name = "RotaryEmbedding(8, max_len=32, convention='half')"
    got = module(_heads((1, 2, 5, 8), seed=4), offset=20)
    snap.expect(got, f"{name}(randn(1, 2, 5, 8), offset=20)", atol=1e-5)
    snap.expect(module.cos, f"{name}.cos", atol=1e-5)


@checks.add("RotaryEmbedding", "posiciones más allá de max_len", "positions past max_len")
def module_past_table() -> None:
    module = rope.RotaryEmbedding(4, max_len=8)
    got = module(_heads((1, 1, 3, 4), seed=5), offset=30)
    snap.expect(got, "RotaryEmbedding(4, max_len=8)(randn(1, 1, 3, 4), offset=30)", atol=1e-5)
