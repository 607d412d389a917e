#!/usr/bin/env python3
"""Writes the qf IR of one decode step's linear layers for a reference model.

One function per model with one qf.matmul per distinct projection shape
(q, k, v, o, gate, up, down, lm_head); the benchmark replays them with
distinct weights per layer (DESIGN.md, performance method).

    python3 bench/decode_step_ir.py --model llama3-8b --encoding int4-g128 \
        --batch 1 -o artifacts/llama3-8b-int4-g128-b1.mlir

A thin wrapper over the Python frontend (python-frontend/qfuse): the encoding
names and the emitter are defined there, once.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python-frontend"))
from qfuse import decode_step  # noqa: E402
from qfuse.atomic import write_text  # noqa: E402
from qfuse.encodings import EncodingError, encoding_text, valid_names  # noqa: E402

MODELS = decode_step.MODELS


def projections(model):
    return decode_step.reference_projections(model)


def emit_full_step(model, encoding, batch, as_model=False):
    """All layers: layers x (q, k, v, o, gate, up, down) + lm_head, each with
    its own weight, reading one input per projection kind (or, `as_model`,
    wired per layer as a model runs it)."""
    return decode_step.emit_full_step(model, projections(model), MODELS[model][4],
                                      encoding, batch, as_model=as_model)


def emit(model, encoding, batch, only=None):
    return decode_step.emit_shapes(model, projections(model), encoding, batch, only)


def encoding_name(name):
    try:
        encoding_text(name)
    except EncodingError as e:
        raise argparse.ArgumentTypeError(str(e))
    return name


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), required=True)
    parser.add_argument("--encoding", type=encoding_name,
                        help="an encoding name: " + ", ".join(valid_names()) +
                        ", int4-g<G>, ...")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--only", help="one projection (q_proj, ..., lm_head)")
    parser.add_argument("--full-step", action="store_true",
                        help="every layer with its own weights + lm_head")
    parser.add_argument("--as-model", action="store_true",
                        help="with --full-step: each layer wired as a model runs it "
                        "(its own q/k/v, o and gate/up inputs; down reads "
                        "qf.silu_mul(gate, up)), so no fusion spans layers")
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
    if args.as_model and not args.full_step:
        parser.error("--as-model goes with --full-step")
    if args.full_step:
        text = emit_full_step(args.model, args.encoding, args.batch, args.as_model)
    else:
        text = emit(args.model, args.encoding, args.batch, args.only)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        write_text(args.output, text)  # whole or not at all (qfuse.atomic)


if __name__ == "__main__":
    main()
