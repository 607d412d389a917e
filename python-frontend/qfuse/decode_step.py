"""The linear layers of one decode step, as the benchmarks replay them.

Two forms: one qf.matmul per distinct projection shape (q, k, v, o, gate,
up, down, lm_head; `emit_shapes`), and every layer with its own weights plus
lm_head (`emit_full_step`). bench/decode_step_ir.py is a thin wrapper over
these for the reference models; `qfuse emit --decode-step-only` uses them for
any config. Output for the reference models is byte-identical to what
bench/decode_step_ir.py has always written (bench/make-artifacts.sh).
"""
from .encodings import alias_name, encoding_text, is_quantized

# hidden, kv (num_kv_heads * head_dim), intermediate, vocab, layers
MODELS = {
    "qwen2.5-1.5b": (1536, 256, 8960, 151936, 28),
    "llama3-8b": (4096, 1024, 14336, 128256, 32),
}


def projections(hidden, kv, inter, vocab, attn=None):
    """[(kind, N, K)] for the eight projection kinds; `attn` is
    num_heads * head_dim (hidden unless the config says otherwise)."""
    attn = hidden if attn is None else attn
    return [
        ("q_proj", attn, hidden),
        ("k_proj", kv, hidden),
        ("v_proj", kv, hidden),
        ("o_proj", hidden, attn),
        ("gate_proj", inter, hidden),
        ("up_proj", inter, hidden),
        ("down_proj", hidden, inter),
        ("lm_head", vocab, hidden),
    ]


def reference_projections(model):
    hidden, kv, inter, vocab, _ = MODELS[model]
    return projections(hidden, kv, inter, vocab)


def hf_weight_name(layer, kind):
    """Hugging Face names: model.layers.3.self_attn.q_proj, lm_head."""
    if kind == "lm_head":
        return "lm_head"
    block = "self_attn" if kind in ("q_proj", "k_proj", "v_proj", "o_proj") else "mlp"
    return f"model.layers.{layer}.{block}.{kind}"


def _fixed(encoding_name):
    text = encoding_text(encoding_name)
    return lambda weight, kind: text


class _Aliases:
    """'#enc' when one encoding is used (the benchmarks' files), else one
    alias per distinct encoding."""

    def __init__(self, texts):
        distinct = list(dict.fromkeys(t for t in texts if is_quantized(t)))
        if len(distinct) <= 1:
            self.names = {t: "enc" for t in distinct}
        else:
            self.names = {}
            for t in distinct:
                base, name, i = alias_name(t), alias_name(t), 1
                while name in self.names.values():
                    i += 1
                    name = f"{base}_{i}"
                self.names[t] = name

    def lines(self):
        return [f"#{a} = #qf.enc<{t}>" for t, a in self.names.items()]

    def weight(self, name, n, k, text, var, m):
        """(lines, weight type) for one projection's weight value `var`."""
        if is_quantized(text):
            wt = f"!qf.weight<{n}x{k}, #{self.names[text]}>"
            return f"  {var} = qf.weight_ref \"{name}\" : {wt}", wt
        wt = f"tensor<{n}x{k}x{text}>"
        return f"  {var} = qf.tensor_ref \"{name}.weight\" : {wt}", wt


def emit_shapes(label, projs, encoding, batch, only=None, enc_for=None,
                weight_name=None):
    """One function, one matmul per projection shape (weights named by kind)."""
    enc_for = enc_for or _fixed(encoding)
    weight_name = weight_name or (lambda kind: kind)
    m = str(batch)
    projs = [p for p in projs if only is None or p[0] == only]
    texts = [enc_for(weight_name(name), name) for name, _, _ in projs]
    aliases = _Aliases(texts)
    lines = [f"// {label} decode-step linear layers, {encoding}, batch {batch}."]
    lines += aliases.lines()
    args = ", ".join(
        f"%x{i}: tensor<{m}x{k}xf16> {{qf.name = \"{name}.in\"}}"
        for i, (name, _, k) in enumerate(projs))
    results = ", ".join(f"tensor<{m}x{n}xf16>" for _, n, _ in projs)
    lines.append(f"func.func @decode_step({args}) -> ({results}) {{")
    outs = []
    for i, ((name, n, k), text) in enumerate(zip(projs, texts)):
        line, wt = aliases.weight(weight_name(name), n, k, text, f"%w{i}", m)
        lines.append(line)
        lines.append(f"  %y{i} = qf.matmul %x{i}, %w{i} : tensor<{m}x{k}xf16>, "
                     f"{wt} -> tensor<{m}x{n}xf16>")
        outs.append(f"%y{i}")
    lines.append(f"  return {', '.join(outs)} : {results}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def emit_full_step(label, projs, layers, encoding, batch, enc_for=None,
                   weight_name=None, progress=None, as_model=False):
    """All layers: layers x (q, k, v, o, gate, up, down) + lm_head, each with
    its own weight, reading one input per distinct K (hidden, act, attn).

    `as_model=True` wires each layer as a model runs it, so that the default
    fusions form what they form in a model and nothing across layers: q/k/v
    share the layer's attention input, o_proj and gate/up read inputs of
    their own, down_proj reads qf.silu_mul(gate, up) (the gated gate/up
    kernel); lm_head reads `hidden`."""
    enc_for = enc_for or _fixed(encoding)
    weight_name = weight_name or (lambda layer, kind: (
        "lm_head" if kind == "lm_head" else f"model.layers.{layer}.{kind}"))
    by_kind = {name: (n, k) for name, n, k in projs}
    hidden = by_kind["q_proj"][1]
    inter = by_kind["down_proj"][1]
    attn = by_kind["o_proj"][1]
    m = str(batch)
    texts = {}
    for layer in range(layers):
        for name, _, _ in projs[:-1]:
            w = weight_name(layer, name)
            texts[w] = enc_for(w, name)
    lm = weight_name(layers, "lm_head")
    texts[lm] = enc_for(lm, "lm_head")
    aliases = _Aliases(texts.values())
    lines = [f"// {label} whole decode step ({layers} layers), {encoding}, batch {batch}."]
    lines += aliases.lines()
    args = [("%h", hidden, "hidden")]
    if as_model:
        for layer in range(layers):
            args += [(f"%x{layer}", hidden, f"layers.{layer}.attn_in"),
                     (f"%o{layer}", attn, f"layers.{layer}.attn_out"),
                     (f"%p{layer}", hidden, f"layers.{layer}.mlp_in")]
    else:
        inputs = {hidden: "%h", inter: "%a"}
        args.append(("%a", inter, "act"))
        if attn not in inputs:
            args.append(("%o", attn, "attn"))
            inputs[attn] = "%o"
    head = ", ".join(f"{v}: tensor<{m}x{k}xf16> {{qf.name = \"{n}\"}}" for v, k, n in args)
    lines.append(f"func.func @decode_step({head}) -> (")
    header = len(lines) - 1
    count = 0
    results = []
    for layer in range(layers):
        if as_model:
            inputs = {"q_proj": f"%x{layer}", "k_proj": f"%x{layer}",
                      "v_proj": f"%x{layer}", "o_proj": f"%o{layer}",
                      "gate_proj": f"%p{layer}", "up_proj": f"%p{layer}",
                      "down_proj": f"%act{layer}"}
        mlp = {}
        for name, n, k in projs[:-1]:
            w = weight_name(layer, name)
            line, wt = aliases.weight(w, n, k, texts[w], f"%w{count}", m)
            lines.append(line)
            x = inputs[name] if as_model else inputs[k]
            lines.append(f"  %y{count} = qf.matmul {x}, %w{count} : "
                         f"tensor<{m}x{k}xf16>, {wt} -> tensor<{m}x{n}xf16>")
            if as_model and name in ("gate_proj", "up_proj"):
                mlp[name] = f"%y{count}"
            else:
                results.append((f"%y{count}", f"tensor<{m}x{n}xf16>"))
            if as_model and name == "up_proj":
                lines.append(f"  %act{layer} = qf.silu_mul {mlp['gate_proj']}, "
                             f"{mlp['up_proj']} : tensor<{m}x{n}xf16>")
            count += 1
        if progress:
            progress.update(layer + 1)
    name, n, k = projs[-1]
    line, wt = aliases.weight(lm, n, k, texts[lm], "%wl", m)
    lines.append(line)
    lines.append(f"  %logits = qf.matmul %h, %wl : tensor<{m}x{k}xf16>, {wt} -> "
                 f"tensor<{m}x{n}xf16>")
    # Every output is returned: an unused (pure) matmul would be erased.
    results.append(("%logits", f"tensor<{m}x{n}xf16>"))
    types = ", ".join(t for _, t in results)
    lines[header] += types + ") {"
    lines.append(f"  return {', '.join(v for v, _ in results)} : {types}")
    lines.append("}")
    return "\n".join(lines) + "\n"
