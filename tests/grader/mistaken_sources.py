"""Each classic mistake of the catalogue (``solutions/mistakes/``) written into the reference,
as a student would write it: module -> mistake code -> ``(old, new)`` edits of that module.

Each module whose catalogue the grader names has its dictionary here, named after the module
(an empty one: not yet); ``tests/grader/test_mistakes_shared.py`` checks each listed module's
mistakes with both tools. Keyed by module, not lab: a lab may grade several modules.
"""

from minimodel.course import encoding_modules

SINUSOIDAL = {
    "concatenated": (
        "pe[:, 0::2] = np.sin(angles)\n    pe[:, 1::2] = np.cos(angles)",
        "pe[:, : d // 2] = np.sin(angles)\n    pe[:, d // 2 :] = np.cos(angles)",
    ),
    "exponent": (
        "inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)",
        "inv_freq = base ** (-np.arange(0, d // 2, dtype=np.float64) / d)",
    ),
    "swapped": (
        "pe[:, 0::2] = np.sin(angles)\n    pe[:, 1::2] = np.cos(angles)",
        "pe[:, 0::2] = np.cos(angles)\n    pe[:, 1::2] = np.sin(angles)",
    ),
    "from-one": (
        "angles = np.arange(T, dtype=np.float64)[:, None]",
        "angles = np.arange(1, T + 1, dtype=np.float64)[:, None]",
    ),
    "base-ignored": ("inv_freq = base ** (", "inv_freq = 10000.0 ** ("),
    "float16": ("angles = np.arange(T, dtype=np.float64)[:, None] * inv_freq[None, :]",
                "angles = np.arange(T, dtype=np.float16)[:, None] * "
                "inv_freq.astype(np.float16)[None, :]"),
    "offset-ignored": ("rows = self.pe[offset : offset + T]", "rows = self.pe[:T]"),
    "offset-off-by-one": ("rows = self.pe[offset : offset + T]",
                          "rows = self.pe[offset + 1 : offset + 1 + T]"),
}
EQUIVARIANCE = {
    "not-permuted": ("permuted_after = layer(x)[:, perm]", "permuted_after = layer(x)"),
    "inverse": ("permuted_after = layer(x)[:, perm]",
                "permuted_after = layer(x)[:, perm.argsort()]"),
    "inverse-both": (
        "layer(x[:, perm])  # f(P x)\n        permuted_after = layer(x)[:, perm]",
        "layer(x[:, perm.argsort()])\n        permuted_after = layer(x)[:, perm.argsort()]",
    ),
    "batch-axis": (
        "layer(x[:, perm])  # f(P x)\n        permuted_after = layer(x)[:, perm]",
        "layer(x[perm])\n        permuted_after = layer(x)[perm]",
    ),
    "no-abs": ("(permuted_first - permuted_after).abs().max()",
               "(permuted_first - permuted_after).max()"),
    "mean": ("(permuted_first - permuted_after).abs().max()",
             "(permuted_first - permuted_after).abs().mean()"),
    "norm": ("(permuted_first - permuted_after).abs().max()",
             "(permuted_first - permuted_after).norm()"),
}
LEARNED = {
    "centres": (
        "step = (L - 1) / (new_len - 1) if new_len > 1 else 0.0\n"
        "    where = torch.arange(new_len, device=table.device, dtype=torch.float64) * step",
        "where = torch.arange(new_len, device=table.device, dtype=torch.float64)\n"
        "    where = ((where + 0.5) * L / new_len - 0.5).clamp(0, L - 1)",
    ),
    "nearest": ("return torch.lerp(rows[lo], rows[hi], frac).to(table.dtype)",
                "return table[where.round().long()]"),
}
ROPE = {
    "exponent": ("torch.arange(0, rotary_dim, 2, device=device).to(torch.float32) / rotary_dim",
                 "torch.arange(rotary_dim // 2, device=device).to(torch.float32) / rotary_dim"),
    "positive-exponent": ("return 1.0 / base**exponents", "return base**exponents"),
    "base-ignored": ("return 1.0 / base**exponents", "return 1.0 / 10000.0**exponents"),
    "sign": ("return angles.cos() * attention_factor, angles.sin() * attention_factor",
             "return angles.cos() * attention_factor, -angles.sin() * attention_factor"),
    "bf16-angles": (
        "angles = positions.to(torch.float32)[..., None] * inv_freq",
        "angles = (positions.to(torch.bfloat16)[..., None] * inv_freq.bfloat16()).float()",
    ),
    "factor-ignored": ("return angles.cos() * attention_factor, angles.sin() * attention_factor",
                       "return angles.cos(), angles.sin()"),
    "direction": ("sin = sin.to(device=x.device, dtype=x.dtype)",
                  "sin = -sin.to(device=x.device, dtype=x.dtype)"),
    "convention-swapped": ('if convention == "interleaved":', 'if convention != "interleaved":'),
    "tail": ("rotated = torch.cat((rotated, x[..., r:]), dim=-1)",
             "rotated = torch.cat((rotated, torch.zeros_like(x[..., r:])), dim=-1)"),
    "offset-ignored": ("cos, sin = self.cos[offset : offset + T], self.sin[offset : offset + T]",
                       "cos, sin = self.cos[:T], self.sin[:T]"),
}
ALIBI = {
    "geometric": (
        "slopes = power_of_two(closest) + power_of_two(2 * closest)[0::2][: n_heads - closest]",
        "slopes = power_of_two(n_heads)",
    ),
    "odd-half": ("power_of_two(2 * closest)[0::2]", "power_of_two(2 * closest)[1::2]"),
    "sorted": (
        "return torch.tensor(slopes, dtype=torch.float32, device=device)",
        "return torch.tensor(sorted(slopes, reverse=True), dtype=torch.float32, device=device)",
    ),
    "off-by-one": ("for k in range(1, n + 1)]", "for k in range(n)]"),
    "sign": ("bias = m * -distance  #", "bias = m * distance  #"),
    "no-mask": ('return bias.masked_fill(distance < 0, float("-inf"))', "return bias"),
    "row-constant": ("bias = m * -distance  #", "bias = (m * key).expand(-1, q_len, -1)  #"),
    "start-aligned": (
        "query = torch.arange(k_len - q_len, k_len, device=device)[:, None]",
        "query = torch.arange(q_len, device=device)[:, None]",
    ),
    "masked": ("    if not causal:\n        return m * -distance.abs()  # negate", "    # negate"),
    "signed": ("return m * -distance.abs()", "return m * -distance"),
}
RELATIVE_BIAS = {
    "sign": ("    rel = relative_position.long()", "    rel = -relative_position.long()"),
    "not-halved": ("        num_buckets //= 2\n", ""),
    "causal-abs": ("n = (-rel).clamp(min=0)", "n = rel.abs()"),
    "start-aligned": (
        "query = torch.arange(k_len - q_len, k_len, device=device)[:, None]  # (q_len, 1)",
        "query = torch.arange(q_len, device=device)[:, None]  # (q_len, 1)",
    ),
    "reshape": (".permute(2, 0, 1)  # (H", ".reshape(self.n_heads, q_len, k_len)  # (H"),
    "transposed": (".permute(2, 0, 1)  # (H", ".permute(2, 1, 0)  # (H"),
    "bidirectional-ignored": ("bidirectional=self.bidirectional,", "bidirectional=False,"),
    "defaults": (
        "            num_buckets=self.num_buckets,\n            max_distance=self.max_distance,\n",
        "",
    ),
    "t5-sign": (
        "d_row = rows[:, None] - rows[None, :] + (window_h - 1)  # (N, N), in [0, 2 window_h - 2]\n"
        "    d_col = cols[:, None] - cols[None, :] + (window_w - 1)",
        "d_row = rows[None, :] - rows[:, None] + (window_h - 1)\n"
        "    d_col = cols[None, :] - cols[:, None] + (window_w - 1)",
    ),
    "stride": ("return d_row * (2 * window_w - 1) + d_col", "return d_row * window_w + d_col"),
    "stride-height": (
        "return d_row * (2 * window_w - 1) + d_col",
        "return d_row * (2 * window_h - 1) + d_col",
    ),
}
TWO_D = {
    "column-first": ("torch.cat((rows, cols), dim=-1)", "torch.cat((cols, rows), dim=-1)"),
    "blocks": (
        "return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)",
        "return torch.cat((angles.sin(), angles.cos()), dim=-1)",
    ),
    "over-d": ("dtype=torch.float64) / half)", "dtype=torch.float64) / d)"),
    "align-corners": (
        "size=(new_h, new_w), mode=mode, align_corners=False)",
        "size=(new_h, new_w), mode=mode, align_corners=True)",
    ),
    "transposed": (
        "cells_table.reshape(h, w, D).permute(2, 0, 1).unsqueeze(0)  # (1, D, h, w)\n"
        "    resized = F.interpolate(image, size=(new_h, new_w)",
        "cells_table.reshape(w, h, D).permute(2, 0, 1).unsqueeze(0)  # (1, D, h, w)\n"
        "    resized = F.interpolate(image, size=(new_w, new_h)",
    ),
    "permuted": ("reshape(h, w, D).permute(2, 0, 1)", "reshape(h, w, D).permute(2, 1, 0)"),
    "swapped": (
        "    cos_r, sin_r = rope_cos_sin(rows.to(x.device), inv_freq)\n"
        "    cos_c, sin_c = rope_cos_sin(cols.to(x.device), inv_freq)\n",
        "    cos_r, sin_r = rope_cos_sin(cols.to(x.device), inv_freq)\n"
        "    cos_c, sin_c = rope_cos_sin(rows.to(x.device), inv_freq)\n",
    ),
    "rows-only": (
        "apply_rotary(x[..., r : 2 * r], cos_c, sin_c,",
        "apply_rotary(x[..., r : 2 * r], cos_r, sin_r,",
    ),
}
SMOOTH_18_01 = "curve[max(0, p - window + 1) : p + 1].nanmean()"
EXTRAPOLATION = {
    "linear": ("min(2 * edges[-1], length)", "min(edges[-1] + train_len, length)"),
    "not-cut": (
        "edges = [0, min(train_len, length)]\n    while edges[-1] < length:\n"
        "        edges.append(min(2 * edges[-1], length))",
        "edges = [0, train_len]\n    while edges[-1] < length:\n"
        "        edges.append(2 * edges[-1])",
    ),
    "mean-of-means": (".float().nanmean() for", ".float().nanmean(-1).nanmean() for"),
    "nan-not-skipped": (".float().nanmean() for", ".float().mean() for"),
    "nan-as-zero": (".float().nanmean() for", ".float().nan_to_num().mean() for"),
    "centred": (SMOOTH_18_01,
                "curve[max(0, p - window // 2) : p + (window + 1) // 2].nanmean()"),
    "forward": (SMOOTH_18_01, "curve[p : p + window].nanmean()"),
    "no-smoothing": (SMOOTH_18_01, "curve[p : p + 1].nanmean()"),
    "reference-from-start": ("curve[train_len // 2 : train_len]", "curve[:train_len]"),
    "search-from-zero": ("range(train_len, len(curve))", "range(len(curve))"),
    "failure-nan-not-skipped": (
        "reference = curve[train_len // 2 : train_len].nanmean()\n"
        "    for p in range(train_len, len(curve)):\n"
        "        smooth = " + SMOOTH_18_01,
        "reference = curve[train_len // 2 : train_len].mean()\n"
        "    for p in range(train_len, len(curve)):\n"
        "        smooth = " + SMOOTH_18_01.replace("nanmean", "mean"),
    ),
    "greater-equal": ("if smooth > reference", "if smooth >= reference"),
    "window-start": ("            return p\n", "            return p - window + 1\n"),
    "truncated": ("round(depth * filler)", "int(depth * filler)"),
    "half-up": ("round(depth * filler)", "int(depth * filler + 0.5)"),
    "off-by-one": ("first_digit = 1 + before + 1", "first_digit = 1 + before"),
    "digits-fixed": (
        "filler = length - 2 * n_digits - 2\n    before = round(depth * filler)\n"
        "    query = length - n_digits",
        "filler = length - 12\n    before = round(depth * filler)\n    query = length - 5",
    ),
}
SCALING = {
    "multiplied": ("rope_frequencies(rotary_dim, base) / factor, 1.0",
                   "rope_frequencies(rotary_dim, base) * factor, 1.0"),
    "no-exponent": ("new_base = base * factor ** (rotary_dim / (rotary_dim - 2))",
                    "new_base = base * factor"),
    "inverted-exponent": ("new_base = base * factor ** (rotary_dim / (rotary_dim - 2))",
                          "new_base = base * factor ** ((rotary_dim - 2) / rotary_dim)"),
    "divided": (
        "new_base = base * factor ** (rotary_dim / (rotary_dim - 2))\n"
        "    return rope_frequencies(rotary_dim, new_base), 1.0",
        "return rope_frequencies(rotary_dim, base) / factor, 1.0",
    ),
    "below-original": ("if seq_len is None or seq_len <= original_max_len:",
                       "if seq_len is None:"),
    "ratio-only": ("scale = factor * seq_len / original_max_len - (factor - 1)",
                   "scale = seq_len / original_max_len"),
    "static": (
        "    if seq_len is None or seq_len <= original_max_len:\n"
        "        return rope_frequencies(rotary_dim, base), 1.0\n"
        "    scale = factor * seq_len / original_max_len - (factor - 1)",
        "    scale = factor",
    ),
    "dynamic-no-exponent": ("new_base = base * scale ** (rotary_dim / (rotary_dim - 2))",
                            "new_base = base * scale"),
    "not-rounded": ("lo, hi = math.floor(lo), math.ceil(hi)", "lo, hi = lo, hi"),
    "rounded-in": ("lo, hi = math.floor(lo), math.ceil(hi)",
                   "lo, hi = math.ceil(lo), math.floor(hi)"),
    "always-rounded": ("    if truncate:\n", "    if True:\n"),
    "swapped": ("lo, hi = pair_turning(beta_fast), pair_turning(beta_slow)",
                "lo, hi = pair_turning(beta_slow), pair_turning(beta_fast)"),
    "returned-swapped": ("    return lo, hi\n", "    return hi, lo\n"),
    "not-clamped": ("lo, hi = max(float(lo), 0.0), min(float(hi), float(rotary_dim - 1))",
                    "lo, hi = float(lo), float(hi)"),
    "no-two-pi": ("math.log(wavelength / (2 * math.pi))", "math.log(wavelength)"),
    "ramp-reversed": ("inv_freq = inv_freq * (1 - ramp) + (inv_freq / factor) * ramp",
                      "inv_freq = inv_freq * ramp + (inv_freq / factor) * (1 - ramp)"),
    "all-divided": ("inv_freq = inv_freq * (1 - ramp) + (inv_freq / factor) * ramp",
                    "inv_freq = inv_freq / factor"),
    "extended-length": (
        "rotary_dim, base, original_max_len, beta_fast, beta_slow, truncate=truncate",
        "rotary_dim, base, int(original_max_len * factor), beta_fast, beta_slow, "
        "truncate=truncate",
    ),
    "truncate-ignored": (
        "rotary_dim, base, original_max_len, beta_fast, beta_slow, truncate=truncate",
        "rotary_dim, base, original_max_len, beta_fast, beta_slow",
    ),
    # LongRoPE
    "switch-extended": ("if seq_len is not None and seq_len > original_max_len:",
                        "if seq_len is not None and seq_len > factor * original_max_len:"),
    "switch-at-original": ("if seq_len is not None and seq_len > original_max_len:",
                           "if seq_len is not None and seq_len >= original_max_len:"),
    "factor-multiplied": (
        "inv_freq = theta / torch.as_tensor(long_factor, dtype=torch.float32)\n"
        "    elif short_factor is None:\n        inv_freq = theta\n    else:\n"
        "        inv_freq = theta / torch.as_tensor(short_factor, dtype=torch.float32)",
        "inv_freq = theta * torch.as_tensor(long_factor, dtype=torch.float32)\n"
        "    elif short_factor is None:\n        inv_freq = theta\n    else:\n"
        "        inv_freq = theta * torch.as_tensor(short_factor, dtype=torch.float32)"),
    "attention-factor-forgotten": (
        "math.sqrt(1 + math.log(factor) / math.log(original_max_len)) if factor > 1 else 1.0",
        "1.0"),
    "attention-factor-yarn": (
        "math.sqrt(1 + math.log(factor) / math.log(original_max_len)) if factor > 1 else 1.0",
        "0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0"),
    "squared": ("attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0",
                "attention_factor = (0.1 * math.log(factor) + 1.0) ** 2 if factor > 1 else 1.0"),
    "sqrt": ("attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0",
             "attention_factor = math.sqrt(0.1 * math.log(factor) + 1.0) if factor > 1 else 1.0"),
    "log10": ("attention_factor = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0",
              "attention_factor = 0.1 * math.log10(factor) + 1.0 if factor > 1 else 1.0"),
    "given-ignored": ("if attention_factor is None:\n        attention_factor = 0.1",
                      "if True:\n        attention_factor = 0.1"),
    "bands-swapped": (
        "scaled = torch.where(wavelength > long, inv_freq / factor, blended)\n"
        "    return torch.where(wavelength < short, inv_freq, scaled), 1.0",
        "scaled = torch.where(wavelength > long, inv_freq, blended)\n"
        "    return torch.where(wavelength < short, inv_freq / factor, scaled), 1.0",
    ),
    "weights-swapped": ("blended = (1 - w) * inv_freq / factor + w * inv_freq",
                        "blended = w * inv_freq / factor + (1 - w) * inv_freq"),
}
CACHE_POSITIONS = {
    "restart": (
        "torch.arange(cache_len, cache_len + q_len, dtype=torch.long, device=device)",
        "torch.arange(q_len, dtype=torch.long, device=device)",
    ),
    "off-by-one": (
        "torch.arange(cache_len, cache_len + q_len, dtype=torch.long, device=device)",
        "torch.arange(cache_len + 1, cache_len + q_len + 1, dtype=torch.long, device=device)",
    ),
    "sign": ("    return key - query\n", "    return query - key\n"),
    "chunk-restart": (
        "query = chunk_positions(cache_len, q_len, device=device)[:, None]  # (q_len, 1)\n"
        "    key = torch.arange(cache_len + q_len, dtype=torch.long, device=device)[None, :]",
        "query = chunk_positions(0, q_len, device=device)[:, None]  # (q_len, 1)\n"
        "    key = torch.cat([torch.arange(cache_len), torch.arange(q_len)]).to(device)[None, :]",
    ),
    "new-keys-only": (
        "key = torch.arange(cache_len + q_len, dtype=torch.long, device=device)[None, :]",
        "key = torch.arange(cache_len, cache_len + q_len, dtype=torch.long,\n"
        "                   device=device)[None, :]",
    ),
    "top-left": (
        "future = relative_positions(cache_len, q_len, device=device) > 0",
        "future = torch.ones(q_len, cache_len + q_len, dtype=torch.bool, device=device).triu(1)",
    ),
    "strict": (
        "future = relative_positions(cache_len, q_len, device=device) > 0",
        "future = relative_positions(cache_len, q_len, device=device) >= 0",
    ),
    "first-rows": (
        "return table[..., cache_len:k_len, :k_len]",
        "return table[..., :q_len, :k_len]",
    ),
    "last-rows": (
        "return table[..., cache_len:k_len, :k_len]",
        "return table[..., -q_len:, :k_len]",
    ),
    "rows-off-by-one": (
        "return table[..., cache_len:k_len, :k_len]",
        "return table[..., cache_len + 1 : k_len + 1, :k_len]",
    ),
    "all-columns": (
        "return table[..., cache_len:k_len, :k_len]",
        "return table[..., cache_len:k_len, :]",
    ),
    "rows-new-keys-only": (
        "return table[..., cache_len:k_len, :k_len]",
        "return table[..., cache_len:k_len, cache_len:k_len]",
    ),
}

_TABLES = {name.lower() for name, value in dict(globals()).items()
           if name.isupper() and isinstance(value, dict)}
assert set(encoding_modules()) >= _TABLES, _TABLES - set(encoding_modules())  # a module's name
MISTAKEN = {
    module: edits
    for module in encoding_modules()
    if (edits := globals().get(module.upper()))
}
