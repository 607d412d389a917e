"""`emit`: a model's qf IR from its config.json, and what `compile` and `report`
share with it: the model options and the IR a command works on."""
import os
import sys

from .atomic import write_text
from .cli_args import CliError, batch as _batch
from .encoding_check import check_plan
from .encodings import FAMILY_HELP, NAMED_ENCODINGS, EncodingPlan
from .model import ModelConfig, emit_decode_step_only, emit_model
from .progress import Progress
from .tools import verify


def add_model_args(p, config_required):
    """The options that say which model and how: emit's, compile's and report's."""
    g = p.add_argument_group("model (from a Hugging Face config.json)")
    g.add_argument("--config", required=config_required,
                   help="config.json of a LlamaForCausalLM, MistralForCausalLM or "
                        "Qwen2ForCausalLM")
    g.add_argument("--encoding", default="int4-g128",
                   help="weight encoding of every linear layer (default int4-g128): "
                        + ", ".join(sorted(NAMED_ENCODINGS)) + "; or " + FAMILY_HELP)
    g.add_argument("--override", action="append", default=[], metavar="PROJ=ENC,...",
                   help="per-projection encodings, e.g. lm_head=fp16,down_proj=int8 "
                        "(keys: q_proj ... lm_head, a weight name or a pattern)")
    g.add_argument("--layers", type=int, help="emit only the first N decoder layers")
    g.add_argument("--batch", type=_batch, default=None,
                   help="rows per decode step (M), or 'dynamic' for one artifact with a "
                        "plan per --batch-sizes entry (default: 1 for emit; dynamic for "
                        "compile with --batch-sizes)")
    g.add_argument("--max-seq", type=int,
                   help="KV cache positions (default max_position_embeddings)")
    g.add_argument("--dtype", default="f16", choices=("f16", "bf16"),
                   help="activation type of the whole model")
    g.add_argument("--sampling", action="store_true",
                   help="draw next_token on the GPU (qf.sample: temperature, top-k, "
                        "top-p, min-p, repetition penalty, seed; docs/sampling.md) "
                        "instead of the greedy argmax")
    g.add_argument("--decode-step-only", action="store_true",
                   help="only the linear layers (every layer's q..down + lm_head), "
                        "as the benchmarks measure them")


def emitted_rows(args):
    """The M the IR is emitted with: None (dynamic) or a number."""
    batch = getattr(args, "batch", None)
    if batch == "dynamic":
        return None
    if batch is None:
        # A compile over several batch sizes needs one IR with a dynamic M.
        return None if getattr(args, "batch_sizes", None) else 1
    return batch


def emit_text(args):
    """The qf IR of --config with the model options given."""
    cfg = ModelConfig.load(args.config)
    plan = EncodingPlan(args.encoding, args.override)
    check_plan(plan)
    with Progress("emitting", total=args.layers or cfg.num_hidden_layers) as progress:
        if args.decode_step_only:
            return emit_decode_step_only(cfg, plan, emitted_rows(args) or 1, args.layers,
                                         progress)
        return emit_model(cfg, plan, emitted_rows(args), args.layers, args.max_seq,
                          args.dtype, progress, sampling=getattr(args, "sampling", False))


def write_output(text, output):
    """`text` to stdout (output None or '-'), else to the file `output`."""
    if output in (None, "-"):
        sys.stdout.write(text)
    else:
        write_text(output, text)


def cmd_emit(args):
    text = emit_text(args)
    write_output(text, args.output)
    if args.verify:
        if args.output in (None, "-"):
            raise CliError("--verify needs -o FILE")
        verify(args.output)
        print(f"qfuse emit: {args.output} verifies with qfuse-opt", file=sys.stderr)


def input_ir(args, tmpdir):
    """The IR file a command works on: the positional input, or --config emitted."""
    if args.input and args.config:
        raise CliError("give either an input .mlir or --config, not both")
    if args.input:
        if not os.path.exists(args.input):
            raise CliError(f"{args.input}: no such file")
        return args.input
    if not args.config:
        raise CliError("expected an input .mlir or --config config.json")
    path = os.path.join(tmpdir, "model.mlir")
    with open(path, "w") as f:
        f.write(emit_text(args))
    return path


def add_emit_parser(sub):
    """The `emit` command's options."""
    e = sub.add_parser("emit", help="write the qf IR of a model")
    add_model_args(e, config_required=True)
    e.add_argument("-o", "--output", default="-")
    e.add_argument("--verify", action="store_true", help="check the IR with qfuse-opt")
    e.set_defaults(func=cmd_emit)
