"""Visible checks for lab 17.03 (RoPE). Students may read these; the grader's differ."""

from __future__ import annotations

import numpy as np
import torch

from minimodel.selfcheck.compare import CheckList, expect_array

checks = CheckList()


def _student():
    from minimodel.positional import rope

    return rope


def frequencies(r: int, base: float = 10000.0) -> np.ndarray:
    """theta_i = base^(-2i/r), i = 0 .. r/2 - 1, in float64."""
    return base ** (-np.arange(0, r, 2) / r)


def rotate(x: np.ndarray, positions: np.ndarray, theta: np.ndarray, convention: str) -> np.ndarray:
    """The lesson's formula pair by pair, in float64. x (..., T, D); positions (T,) or (B, T)."""
    x = np.asarray(x, dtype=np.float64)
    out = x.copy()
    F = theta.shape[0]
    angles = np.asarray(positions, dtype=np.float64)[..., None] * theta  # (..., T, F)
    if angles.ndim == 3:  # (B, T, F) -> (B, 1, T, F)
        angles = angles[:, None]
    c, s = np.cos(angles), np.sin(angles)
    for i in range(F):
        a, b = (2 * i, 2 * i + 1) if convention == "interleaved" else (i, i + F)
        out[..., a] = x[..., a] * c[..., i] - x[..., b] * s[..., i]
        out[..., b] = x[..., a] * s[..., i] + x[..., b] * c[..., i]
    return out


def rope_mistakes(x, positions, theta, convention) -> dict:
    other = "half" if convention == "interleaved" else "interleaved"
    return {
        "convention": (
            rotate(x, positions, theta, other),
            f"Parece la convención {other!r}: en {convention!r} la pareja i es "
            + ("(2i, 2i+1)." if convention == "interleaved" else "(i, i + r/2)."),
            f"It looks like the {other!r} convention: in {convention!r} pair i is "
            + ("(2i, 2i+1)." if convention == "interleaved" else "(i, i + r/2)."),
        ),
        "sign": (
            rotate(x, -np.asarray(positions), theta, convention),
            "Parece que giras en sentido contrario: la pareja (a, b) pasa a "
            "(a cos - b sin, a sin + b cos).",
            "It looks like you rotate the other way: pair (a, b) becomes "
            "(a cos - b sin, a sin + b cos).",
        ),
    }


def _heads(shape=(2, 3, 5, 8), seed=0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


@checks.add(
    "rope_frequencies", "theta_i = base^(-2i/r) en float32", "theta_i = base^(-2i/r) in float32"
)
def frequency_values() -> None:
    got = _student().rope_frequencies(8)
    theta = frequencies(8)
    mistakes = {
        "exponent": (
            10000.0 ** (-np.arange(4) / 8),
            "Parece que usaste el exponente i/r; la pareja i tiene base^(-2i/r).",
            "It looks like you used the exponent i/r; pair i has base^(-2i/r).",
        ),
        "inverse": (
            1 / theta,
            "Son las frecuencias invertidas: se pide 1 / base^(2i/r), de 1 hacia abajo.",
            "These are inverted: the function returns 1 / base^(2i/r), from 1 downwards.",
        ),
    }
    expect_array(
        got,
        torch.from_numpy(theta).float(),
        name="rope_frequencies(8)",
        mistakes=mistakes,
    )
    expect_array(
        _student().rope_frequencies(6, base=100.0),
        torch.from_numpy(frequencies(6, 100.0)).float(),
        name="rope_frequencies(6, base=100.0)",
    )


@checks.add("rope_cos_sin", "cos y sin de p·theta, (T, F) y (B, T, F)", "cos and sin of p·theta")
def cos_sin_tables() -> None:
    theta = torch.tensor([1.0, 0.1, 0.01])
    positions = torch.tensor([0, 1, 5, 200])
    cos, sin = _student().rope_cos_sin(positions, theta)
    angles = positions.double()[:, None] * theta.double()
    expect_array(cos, angles.cos().float(), name="cos", atol=1e-5)
    expect_array(sin, angles.sin().float(), name="sin", atol=1e-5)
    batch = torch.tensor([[0, 1], [7, 8]])
    cos_b, _ = _student().rope_cos_sin(batch, theta, attention_factor=2.0)
    expected = 2.0 * (batch.double()[..., None] * theta.double()).cos()
    expect_array(cos_b, expected.float(), name="cos (B, T) · attention_factor=2", atol=1e-5)


@checks.add(
    "apply_rotary",
    "x = [1, 2, 3, 4] en p = 1, intercalada",
    "x = [1, 2, 3, 4] at p = 1, interleaved",
)
def reference_interleaved() -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 1, 4)
    got = _student().apply_rope(x, torch.tensor([1]), _student().rope_frequencies(4))
    expected = torch.tensor([-1.142640, 1.922076, 2.959851, 4.029800]).reshape(1, 1, 1, 4)
    theta = frequencies(4)
    mistakes = rope_mistakes(x.numpy(), np.array([1]), theta, "interleaved")
    expect_array(got, expected, name="apply_rope(x, [1], ...)", atol=1e-5, mistakes=mistakes)


@checks.add("apply_rotary", "x = [1, 2, 3, 4] en p = 1, mitades", "x = [1, 2, 3, 4] at p = 1, half")
def reference_half() -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0]).reshape(1, 1, 1, 4)
    rope = _student()
    got = rope.apply_rope(x, torch.tensor([1]), rope.rope_frequencies(4), convention="half")
    expected = torch.tensor([-1.984111, 1.959901, 2.462378, 4.019800]).reshape(1, 1, 1, 4)
    mistakes = rope_mistakes(x.numpy(), np.array([1]), frequencies(4), "half")
    expect_array(
        got, expected, name="apply_rope(x, [1], ..., 'half')", atol=1e-5, mistakes=mistakes
    )


@checks.add(
    "apply_rotary", "las dos convenciones, varias posiciones", "both conventions, many positions"
)
def many_positions() -> None:
    rope = _student()
    x = _heads()
    positions = torch.tensor([0, 3, 17, 100, 999])
    theta = frequencies(8)
    for convention in ("interleaved", "half"):
        got = rope.apply_rope(x, positions, rope.rope_frequencies(8), convention=convention)
        expected = rotate(x.numpy(), positions.numpy(), theta, convention)
        expect_array(
            got,
            torch.from_numpy(expected).float(),
            name=f"apply_rope(x, positions, convention={convention!r})",
            atol=1e-4,
            mistakes=rope_mistakes(x.numpy(), positions.numpy(), theta, convention),
        )


@checks.add("apply_rotary", "posiciones por secuencia (B, T)", "positions per sequence (B, T)")
def batch_positions() -> None:
    rope = _student()
    x = _heads((2, 2, 3, 4), seed=1)
    positions = torch.tensor([[0, 1, 2], [10, 11, 12]])
    got = rope.apply_rope(x, positions, rope.rope_frequencies(4))
    expected = rotate(x.numpy(), positions.numpy(), frequencies(4), "interleaved")
    expect_array(got, torch.from_numpy(expected).float(), name="apply_rope(x, (B, T))", atol=1e-5)


@checks.add(
    "apply_rotary", "rotación parcial: la cola no cambia", "partial rotation: tail unchanged"
)
def partial_rotation() -> None:
    rope = _student()
    x = _heads((1, 2, 4, 8), seed=2)
    positions = torch.arange(4)
    for convention in ("interleaved", "half"):
        got = rope.apply_rope(x, positions, rope.rope_frequencies(4), convention=convention)
        expected = x.double().numpy().copy()
        expected[..., :4] = rotate(
            x[..., :4].numpy(), positions.numpy(), frequencies(4), convention
        )
        expect_array(
            got,
            torch.from_numpy(expected).float(),
            name=f"apply_rope(x (D=8), rotary_dim=4, {convention!r})",
            atol=1e-5,
        )


@checks.add("apply_rotary", "bfloat16 en p >= 4096: ángulos en float32", "bfloat16 at p >= 4096")
def bfloat16_large_positions() -> None:
    rope = _student()
    x = _heads((1, 1, 16, 64), seed=3).to(torch.bfloat16)
    positions = torch.arange(4096, 4112)
    got = rope.apply_rope(x, positions, rope.rope_frequencies(64))
    expected = rotate(x.double().numpy(), positions.numpy(), frequencies(64), "interleaved")
    expect_array(
        got,
        torch.from_numpy(expected).to(torch.bfloat16),
        name="apply_rope(x_bf16, positions 4096..4111)",
        atol=3e-2,
        rtol=2e-2,
    )


@checks.add(
    "rope_permutation", "[0, 2, ..., 1, 3, ..., r, ..., D-1]", "[0, 2, ..., 1, 3, ..., r, ..., D-1]"
)
def permutation_values() -> None:
    rope = _student()
    expect_array(
        rope.rope_permutation(8), torch.tensor([0, 2, 4, 6, 1, 3, 5, 7]), name="rope_permutation(8)"
    )
    expect_array(
        rope.rope_permutation(8, rotary_dim=4),
        torch.tensor([0, 2, 1, 3, 4, 5, 6, 7]),
        name="rope_permutation(8, rotary_dim=4)",
    )


@checks.add(
    "RotaryEmbedding", "tablas float32 y offset (caché KV)", "float32 tables and offset (KV cache)"
)
def module_offset() -> None:
    rope = _student()
    module = rope.RotaryEmbedding(8, max_len=32, convention="half")
    x = _heads((1, 2, 5, 8), seed=4)
    expected = rotate(x.numpy(), np.arange(20, 25), frequencies(8), "half")
    expect_array(
        module(x, offset=20),
        torch.from_numpy(expected).float(),
        name="rotary(x, offset=20)",
        atol=1e-5,
    )
    expect_array(
        module.cos,
        torch.from_numpy(np.cos(np.arange(32)[:, None] * frequencies(8))).float(),
        name="RotaryEmbedding.cos",
        atol=1e-5,
    )


@checks.add("RotaryEmbedding", "posiciones más allá de max_len", "positions past max_len")
def module_past_table() -> None:
    rope = _student()
    module = rope.RotaryEmbedding(4, max_len=8)
    x = _heads((1, 1, 3, 4), seed=5)
    expected = rotate(x.numpy(), np.arange(30, 33), frequencies(4), "interleaved")
    expect_array(
        module(x, offset=30),
        torch.from_numpy(expected).float(),
        name="rotary(x, offset=30)",
        atol=1e-5,
    )
