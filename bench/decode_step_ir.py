#!/usr/bin/env python3
"""Writes the qf IR of one decode step's linear layers for a reference model.

One function per model with one qf.matmul per distinct projection shape
(q, k, v, o, gate, up, down, lm_head); the benchmark replays them with
distinct weights per layer (DESIGN.md, performance method).

    python3 bench/decode_step_ir.py --model llama3-8b --encoding int4-g128 \
        --batch 1 -o artifacts/llama3-8b-int4-g128-b1.mlir
"""
import argparse
import sys

# hidden, kv (num_kv_heads * head_dim), intermediate, vocab, layers
MODELS = {
    "qwen2.5-1.5b": (1536, 256, 8960, 151936, 28),
    "llama3-8b": (4096, 1024, 14336, 128256, 32),
}

ENCODINGS = {
    "int4-g128": "int4, group = 128, scale = f16",
    "uint4-g128-asym": "uint4, group = 128, scale = f16, zero = int",
    "nf4": "nf4, group = 64, scale = f32",
    "int8": "int8, per_channel, scale = f16",
    "fp8": "fp8e4m3, per_channel, scale = f32",
    "nvfp4": "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale",
    "mxfp4": "fp4e2m1, group = 32, scale = f8E8M0FNU",
    "sparse24-f16": "f16, sparse = 2:4",
}


def projections(model):
    hidden, kv, inter, vocab, _ = MODELS[model]
    return [
        ("q_proj", hidden, hidden),
        ("k_proj", kv, hidden),
        ("v_proj", kv, hidden),
        ("o_proj", hidden, hidden),
        ("gate_proj", inter, hidden),
        ("up_proj", inter, hidden),
        ("down_proj", hidden, inter),
        ("lm_head", vocab, hidden),
    ]


def emit_full_step(model, encoding, batch):
    """All layers: layers x (q, k, v, o, gate, up, down) + lm_head, each with
    its own weight, reading one input per projection kind."""
    enc = ENCODINGS[encoding]
    hidden, _, inter, _, layers = MODELS[model]
    m = str(batch)
    projs = projections(model)
    lines = [f"// {model} whole decode step ({layers} layers), {encoding}, batch {batch}.",
             f"#enc = #qf.enc<{enc}>",
             f"func.func @decode_step(%h: tensor<{m}x{hidden}xf16> {{qf.name = \"hidden\"}}, "
             f"%a: tensor<{m}x{inter}xf16> {{qf.name = \"act\"}}) -> ("]
    header = len(lines) - 1
    count = 0
    results = []
    for layer in range(layers):
        for name, n, k in projs[:-1]:
            wt = f"!qf.weight<{n}x{k}, #enc>"
            src = "%a" if k == inter else "%h"
            lines.append(f"  %w{count} = qf.weight_ref \"model.layers.{layer}.{name}\" : {wt}")
            lines.append(f"  %y{count} = qf.matmul {src}, %w{count} : tensor<{m}x{k}xf16>, {wt} -> tensor<{m}x{n}xf16>")
            results.append((f"%y{count}", f"tensor<{m}x{n}xf16>"))
            count += 1
    name, n, k = projs[-1]
    wt = f"!qf.weight<{n}x{k}, #enc>"
    lines.append(f"  %wl = qf.weight_ref \"lm_head\" : {wt}")
    lines.append(f"  %logits = qf.matmul %h, %wl : tensor<{m}x{k}xf16>, {wt} -> tensor<{m}x{n}xf16>")
    # Every output is returned: an unused (pure) matmul would be erased.
    results.append(("%logits", f"tensor<{m}x{n}xf16>"))
    types = ", ".join(t for _, t in results)
    lines[header] += types + ") {"
    lines.append(f"  return {', '.join(v for v, _ in results)} : {types}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def emit(model, encoding, batch, only=None):
    enc = ENCODINGS[encoding]
    m = str(batch)
    lines = [f"// {model} decode-step linear layers, {encoding}, batch {batch}.",
             f"#enc = #qf.enc<{enc}>"]
    projs = [p for p in projections(model) if only is None or p[0] == only]
    args = ", ".join(
        f"%x{i}: tensor<{m}x{k}xf16> {{qf.name = \"{name}.in\"}}"
        for i, (name, _, k) in enumerate(projs))
    results = ", ".join(f"tensor<{m}x{n}xf16>" for _, n, _ in projs)
    lines.append(f"func.func @decode_step({args}) -> ({results}) {{")
    outs = []
    for i, (name, n, k) in enumerate(projs):
        wt = f"!qf.weight<{n}x{k}, #enc>"
        lines.append(f"  %w{i} = qf.weight_ref \"{name}\" : {wt}")
        lines.append(f"  %y{i} = qf.matmul %x{i}, %w{i} : tensor<{m}x{k}xf16>, "
                     f"{wt} -> tensor<{m}x{n}xf16>")
        outs.append(f"%y{i}")
    lines.append(f"  return {', '.join(outs)} : {results}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--encoding", choices=sorted(ENCODINGS))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--only", help="one projection (q_proj, ..., lm_head)")
    parser.add_argument("--full-step", action="store_true",
                        help="every layer with its own weights + lm_head")
    parser.add_argument("--list-shapes", action="store_true",
                        help="print 'name N K' per projection and exit")
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args()
    if args.list_shapes:
        for name, n, k in projections(args.model):
            print(name, n, k)
        return
    if not args.encoding:
        parser.error("--encoding is required")
    if args.full_step:
        text = emit_full_step(args.model, args.encoding, args.batch)
    else:
        text = emit(args.model, args.encoding, args.batch, args.only)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
