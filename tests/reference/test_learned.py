"""The reference learned positions: lookup at an offset, the limit, and table interpolation."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from minimodel.positional.learned import LearnedPositionalEmbedding, interpolate_positions

BILINGUAL = r"(?s)\[es\].*\[en\]"


def test_table_size_and_initialisation():
    torch.manual_seed(0)
    module = LearnedPositionalEmbedding(1024, 64)
    assert module.weight.shape == (1024, 64) and module.weight.dtype == torch.float32
    assert sum(p.numel() for p in module.parameters()) == 1024 * 64
    assert abs(module.weight.std().item() - 0.02) < 1e-3
    assert list(module.state_dict()) == ["weight"]


@settings(max_examples=30, deadline=None)
@given(T=st.integers(1, 20), offset=st.integers(0, 30))
def test_adds_rows_offset_to_offset_plus_t(T, offset):
    module = LearnedPositionalEmbedding(64, 8)
    x = torch.randn(2, T, 8)
    rows = module.weight[torch.arange(offset, offset + T)]  # an explicit gather, not a slice
    torch.testing.assert_close(module(x, offset=offset), x + rows, rtol=0, atol=0)


def test_decoding_in_chunks_equals_the_whole_sequence():
    module = LearnedPositionalEmbedding(16, 4)
    x = torch.randn(3, 10, 4)
    chunks = [module(x[:, :4]), module(x[:, 4:5], offset=4), module(x[:, 5:], offset=5)]
    assert torch.equal(torch.cat(chunks, dim=1), module(x))


def test_gradients_reach_only_the_rows_used():
    module = LearnedPositionalEmbedding(10, 3)
    module(torch.zeros(1, 4, 3), offset=5).sum().backward()
    used = module.weight.grad.abs().sum(dim=1) > 0
    assert used.tolist() == [False] * 5 + [True] * 4 + [False]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_output_keeps_the_input_dtype_and_shape(dtype):
    module = LearnedPositionalEmbedding(8, 4)
    x = torch.randn(2, 3, 5, 4).to(dtype)
    out = module(x, offset=2)
    assert out.dtype == dtype and out.shape == x.shape


def test_meta_device():
    module = LearnedPositionalEmbedding(8, 4).to("meta")
    assert module(torch.empty(2, 3, 4, device="meta"), offset=1).device.type == "meta"


@pytest.mark.parametrize(("T", "offset"), [(9, 0), (1, 8), (5, 6)])
def test_past_max_len_the_error_names_the_limit(T, offset):
    module = LearnedPositionalEmbedding(8, 4)
    with pytest.raises(ValueError, match=BILINGUAL) as error:
        module(torch.zeros(1, T, 4), offset=offset)
    message = str(error.value)
    assert "max_len = 8" in message and f"{offset + T - 1}" in message
    module(torch.zeros(1, 8 - offset, 4), offset=offset)  # exactly at the limit is fine


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda m: m(torch.zeros(1, 3, 5)), ValueError),  # wrong width
        (lambda m: m(torch.zeros(4)), ValueError),  # 1-D
        (lambda m: m(torch.zeros(1, 3, 4, dtype=torch.long)), ValueError),  # token ids, not floats
        (lambda m: m(torch.zeros(1, 3, 4), offset=-1), ValueError),
        (lambda m: m(torch.zeros(1, 3, 4), offset=1.0), TypeError),
        (lambda m: LearnedPositionalEmbedding(0, 4), ValueError),
        (lambda m: LearnedPositionalEmbedding(8, 4.0), TypeError),
    ],
)
def test_bad_input_gives_bilingual_errors(call, error):
    with pytest.raises(error, match=BILINGUAL):
        call(LearnedPositionalEmbedding(8, 4))


# ------------------------------------------------------------------------------ interpolation


@pytest.mark.parametrize(("L", "new_len"), [(5, 9), (9, 5), (512, 1024), (7, 7), (3, 1), (1, 4)])
def test_interpolation_matches_torch_linear_with_align_corners(L, new_len):
    table = torch.randn(L, 6)
    got = interpolate_positions(table, new_len)
    assert got.shape == (new_len, 6) and got.dtype == table.dtype
    if L > 1 and new_len > 1:
        # in float64: torch's float32 kernel rounds the source coordinate j * (L-1)/(new_len-1)
        wide = table.double()
        want = F.interpolate(wide.T[None], new_len, mode="linear", align_corners=True)[0].T
        torch.testing.assert_close(interpolate_positions(wide, new_len), want)
        torch.testing.assert_close(got, want.float(), atol=2e-4, rtol=0)
    else:  # one row in or out: the first row, repeated
        torch.testing.assert_close(got, table[:1].expand(new_len, 6))


def test_interpolation_keeps_end_rows_and_places_new_rows_between_old_ones():
    table = torch.tensor([[0.0, 10.0], [1.0, 20.0], [2.0, 40.0]])
    got = interpolate_positions(table, 5)  # old positions 0, 0.5, 1, 1.5, 2
    expected = torch.tensor([[0.0, 10.0], [0.5, 15.0], [1.0, 20.0], [1.5, 30.0], [2.0, 40.0]])
    torch.testing.assert_close(got, expected)
    assert torch.equal(interpolate_positions(table, 3), table)


@settings(max_examples=30, deadline=None)
@given(L=st.integers(2, 40), factor=st.integers(1, 6))
def test_upsampling_by_an_integer_keeps_every_old_row(L, factor):
    # With align_corners=True, new_len = factor * (L - 1) + 1 puts old row k at k * factor.
    table = torch.randn(L, 3, dtype=torch.float64)
    got = interpolate_positions(table, factor * (L - 1) + 1)
    torch.testing.assert_close(got[::factor], table)


def test_interpolation_dtypes_and_devices():
    table = torch.randn(4, 2)
    assert interpolate_positions(table.to(torch.bfloat16), 7).dtype == torch.bfloat16
    assert interpolate_positions(table.double(), 7).dtype == torch.float64
    assert interpolate_positions(table.to("meta"), 7).device.type == "meta"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((torch.zeros(4), 3), ValueError),
        ((torch.zeros(0, 3), 3), ValueError),
        ((torch.zeros(4, 3), 0), ValueError),
        ((torch.zeros(4, 3, dtype=torch.long), 3), ValueError),
        ((torch.zeros(4, 3), 3.5), TypeError),
    ],
)
def test_interpolation_rejects_bad_input(args, error):
    with pytest.raises(error, match=BILINGUAL):
        interpolate_positions(*args)
