"""Every lab's notebook graded solved, released untouched and with typical mistakes written in
(one run per lab): real kernels, real judges."""

from __future__ import annotations

import pytest
from notebook_runs import LabNotebook, check_mistakes, check_reference, check_released, grade_lab

LABS = (
    LabNotebook(
        "17.00", "17_00_why_position",
        mistakes={
            # √d instead of √d_k: equal in the notebook (d = d_k = 16), not in the hidden probe
            "self-attention": [("q.shape[-1] ** 0.5", "x.shape[-1] ** 0.5")],
            "offset-spread": [(
                "return max((attention_logits(z, hook, o) - start).abs().max().item() "
                "for o in offsets)",
                "for o in offsets:\n        spread = (attention_logits(z, hook, o) - start)"
                ".abs().max().item()\n    return spread")],
        },
        diagnosed={"nb/test-self-attention": "nb-scale-d-model", "nb/test-hooks": "nb-last-offset"},
        partial=frozenset({"nb/test-self-attention"}),  # the notebook's own data still pass
        intact=("nb/test-equivariance", "nb/test-positions", "nb/test-causal"),
    ),
    LabNotebook(
        "17.02", "17_02_learned",
        mistakes={
            "evaluation": [
                (".float().mean(dim=0)", ".float().mean(dim=1)"),  # averaged over positions
                ("LearnedPositionalEmbedding(new_len, table.d_model)",  # new rows left at zero
                 "LearnedPositionalEmbedding(new_len, table.d_model, init_std=0.0)"),
            ],
        },
        diagnosed={"nb/test-past-lmax": frozenset({"nb-accuracy-axis", "nb-grow-zero-rows"})},
        intact=("nb/test-table",),
    ),
    LabNotebook(
        "17.03", "17_03_rope",
        mistakes={
            "formulations": [("rotated = torch.cat([-x2, x1], dim=-1)",
                              "rotated = torch.cat([x2, -x1], dim=-1)")],
            "relative-logit": [("cross = q[1::2] * k[0::2] - q[0::2] * k[1::2]",
                                "cross = q[0::2] * k[1::2] - q[1::2] * k[0::2]")],
            "permute-heads": [("[:, perm]", "[:, perm.argsort()]")],
            "angles-in": [
                ("(positions.to(dtype)[:, None] * inv_freq.to(dtype)[None, :]).double()",
                 "(positions[:, None] * inv_freq[None, :]).to(dtype).double()")],
        },
        diagnosed={"nb/test-formulations": "nb-rotate_half-direction",
                   "nb/test-relative": "nb-relative-sign",
                   "nb/test-convert": "nb-permute-inverse",
                   "nb/test-bf16": "nb-angles-rounded-late"},
        intact=("nb/test-by-hand", "nb/test-partial-and-cache"),
    ),
    LabNotebook(
        "17.04", "17_04_alibi",
        mistakes={
            "manual-attention": [
                ("logits = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + bias",
                 "logits = (q @ k.transpose(-2, -1) + bias) / q.shape[-1] ** 0.5")],
            "row-constant": [("bias = slopes[:, None, None]", "bias = -slopes[:, None, None]")],
            "profile": [("return row.softmax(dim=-1).flip(-1)", "return row.softmax(dim=-1)")],
        },
        diagnosed={"nb/test-sdpa": "nb-scaled-bias", "nb/test-row-constant": "nb-row-sign",
                   "nb/test-profile": "nb-profile-not-flipped"},
        intact=("nb/test-slopes", "nb/test-bias"),
    ),
    LabNotebook(
        "17.05", "17_05_relative_bias",
        mistakes={
            "bucket-starts": [("starts.setdefault(bucket, distance)",
                               "starts[bucket] = distance")],
            "shaw": [("return (q @ k.T + position) / d**0.5",
                      "return q @ k.T / d**0.5 + position")],
        },
        diagnosed={"nb/test-bucket-starts": "nb-starts-last",
                   "nb/test-shaw": "nb-shaw-scale-content-only"},
        intact=("nb/test-buckets", "nb/test-module", "nb/test-swin"),
    ),
    LabNotebook(
        "17.06", "17_06_two_d",
        mistakes={
            "mae-layout": [("return torch.cat((sin_then_cos(half), sin_then_cos(0)))",
                            "return torch.cat((sin_then_cos(0), sin_then_cos(half)))")],
            "sampled-positions": [
                ("(torch.arange(new, dtype=torch.float64) + 0.5) * old / new - 0.5",
                 "torch.arange(new, dtype=torch.float64) * (old - 1) / (new - 1)")],
            "video": [("(time.repeat_interleave(n, dim=0), space.repeat(frames, 1))",
                       "(time.repeat(n, 1), space.repeat_interleave(frames, dim=0))")],
        },
        diagnosed={"nb/test-mae": "nb-mae-halves", "nb/test-interpolate": "nb-align-corners",
                   "nb/test-video": "nb-video-repeat"},
        intact=("nb/test-two-d", "nb/test-rope-2d"),
    ),
    LabNotebook(
        "18.01", "18_01_extrapolation",
        mistakes={  # last_half over the first half of each window
            "averages": [("[(L // 2, L) for L in LENGTHS]", "[(0, L // 2) for L in LENGTHS]")],
        },
        diagnosed={"nb/test-averages": "first-half"},
        partial=frozenset({"nb/test-averages"}),  # window_mean and the keys are right
        intact=("nb/test-measures",),
    ),
    LabNotebook(
        "18.02", "18_02_rope_scaling",
        mistakes={
            "ratios": [("coverage > 1 + 1e-6", "coverage >= 1")],  # c_i = 1 counted as unseen
            "with-scaling": [("return scaled.eval()", "return scaled")],  # left in training mode
        },
        diagnosed={"nb/test-ratios": "nb-boundary", "nb/test-with-scaling": "nb-train-mode"},
        partial=frozenset({"nb/test-ratios",  # the ratios themselves are right
                           "nb/test-with-scaling"}),
        unsaid_on_released={"nb/test-with-scaling": "nb-modified-model"},
    ),
    LabNotebook(
        "18.03", "18_03_kv_cache",
        mistakes={
            "chunk-bias": [("return hooks.slopes.float()[:, None, None] * rel",
                            "return -hooks.slopes.float()[:, None, None] * rel")],  # ALiBi's sign
            "kv-bytes": [("return 2 * n_layer", "return n_layer")],  # keys only
        },
        diagnosed={"nb/test-chunk-bias": "nb-alibi-sign", "nb/test-exact": "nb-cache-encodings",
                   "nb/test-kv-bytes": "nb-kv-keys-only"},
        partial=frozenset({"nb/test-chunk-bias"}),
        mentions={("nb/test-exact", "nb-cache-encodings"): "alibi"},
        intact=("nb/test-positions",),
    ),
    LabNotebook(
        "19.01", "19_01_mini_gpt",
        mistakes={
            "parameters": [("total += config.t5_num_buckets * H",
                            "total += config.t5_num_buckets")],
            "cached": [("with torch.no_grad():", "if True:")],  # gradients kept
            "memory": [("p.numel() * p.element_size()", "p.numel()"),  # numbers, not bytes
                       ("b.numel() * b.element_size()", "b.numel()"),
                       ("bias.numel() * bias.element_size()", "bias.numel()")],
        },
        diagnosed={"nb/test-parameters": "nb-t5-heads", "nb/test-cached": "nb-grad",
                   "nb/test-memory": "nb-numel-only"},
        partial=frozenset({"nb/test-cached"}),
        # no module of its own: graded and totalled from the notebook alone
        items=frozenset({"nb/test-parameters", "nb/test-cached", "nb/test-memory",
                         "nb/q1-answer", "nb/q2-answer", "nb/q3-answer"}),
        total=8,
    ),
    LabNotebook(
        "19.02", "19_02_experiments",
        mistakes={
            "statistics": [("values.std(ddof=1)", "values.std()")],  # population deviation
            "separated": [('z * math.sqrt(a["se"] ** 2 + b["se"] ** 2)',
                           'z * (a["se"] + b["se"])')],  # standard errors added
        },
        diagnosed={"nb/test-statistics": "nb-population", "nb/test-separated": "nb-se-added"},
        partial=frozenset({"nb/test-statistics"}),  # n is right
    ),
)


@pytest.fixture(scope="module", params=LABS, ids=lambda lab: lab.id)
def graded(request, tmp_path_factory, capabilities) -> tuple[LabNotebook, dict[str, dict]]:
    """One lab and the records of its three notebooks (graded once per test run)."""
    if not capabilities.namespaces:
        pytest.skip("this platform cannot isolate the sandbox (needs root and namespaces)")
    return request.param, grade_lab(tmp_path_factory, request.param)


def test_solved_notebook_gets_full_marks(graded):
    lab, records = graded
    check_reference(records["solved"], lab)


def test_released_notebook_scores_nothing_and_says_why(graded):
    lab, records = graded
    check_released(records["released"], lab)


def test_typical_mistakes_are_diagnosed(graded):
    lab, records = graded
    check_mistakes(records["mistakes"], lab)
