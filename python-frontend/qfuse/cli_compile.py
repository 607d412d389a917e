"""`compile` (an .mlir or a config to an artifact, with the quantize-at-load
kernels beside it) and `compile-gptq` (the GPTQ block kernels of a model)."""
import os
import re
import sys
import tempfile

from .cli_args import CliError, add_chip_arg
from .cli_emit import add_model_args, input_ir, write_output
from .gptq import describe, gptq_ir, row_counts
from .model import ModelConfig
from .quantize_kernels import load_artifact_json, quantize_artifact_path, quantize_ir
from .tools import (TUNING_DB_HELP, ToolError, compile_ir, model_tuning_db,
                    resolve_tuning_db)


def _explain_compile_error(msg):
    """Ops qfuse-compile cannot lower, summarized instead of one error each."""
    ops = re.findall(r"'(qf\.\w+)' op has no GPU lowering", msg)
    if not ops:
        return msg
    counts = {op: ops.count(op) for op in dict.fromkeys(ops)}
    first = msg.splitlines()[0]
    return (f"{first}\nqfuse-compile has no GPU lowering for "
            + ", ".join(f"{op} ({n}x)" for op, n in counts.items())
            + "; use --emit=mlir to see the model after the pipeline")


def _compile(args):
    """The compile command's work: (the IR of) args.input / args.config ->
    args.output."""
    with tempfile.TemporaryDirectory(prefix="qfuse-") as tmp:
        ir = input_ir(args, tmp)
        batches = [int(b) for b in args.batch_sizes.split(",")] if args.batch_sizes else None
        tuning_db = resolve_tuning_db(args.tuning_db, args.config, tmp)
        _note_model_db(args, "compile")
        try:
            _, err = compile_ir(ir, args.output, chip=args.chip, batch_sizes=batches,
                                emit=args.emit, tuning_db=tuning_db)
        except ToolError as e:
            raise CliError(_explain_compile_error(str(e))) from None
        if err.strip():
            sys.stderr.write(err)


def _note_model_db(args, prog):
    """Says on stderr when the model's own tuning database is used."""
    own = model_tuning_db(args.config) if args.tuning_db == "auto" else None
    if own:
        print(f"qfuse {prog}: tuning database {own} (qfuse tune) over the shipped one",
              file=sys.stderr)


def _compile_quantize(args):
    """The quantize artifact beside args.output (quantize_kernels.py); not
    with --no-quantize-kernels or --emit other than artifact."""
    if args.emit != "artifact" or args.no_quantize_kernels or args.output == "-":
        return None
    text = quantize_ir(load_artifact_json(args.output))
    if text is None:
        return None
    out = quantize_artifact_path(args.output)
    with tempfile.TemporaryDirectory(prefix="qfuse-") as tmp:
        ir = os.path.join(tmp, "quantize.mlir")
        write_output(text, ir)
        try:
            _, err = compile_ir(ir, out, chip=args.chip, extra=["--fuse=none"])
        except ToolError as e:
            raise CliError(str(e)) from None
    # The remarks name encodings left to the host's round-to-nearest.
    for line in err.splitlines():
        if "remark:" in line:
            print(f"qfuse compile: {line.split('remark: ', 1)[1]}", file=sys.stderr)
    return out


def _compile_with_quantize(args):
    """compile's work when another command compiles a model on demand."""
    _compile(args)
    _compile_quantize(args)


def cmd_compile(args):
    _compile(args)
    print(f"qfuse compile: wrote {args.output}", file=sys.stderr)
    quantize = _compile_quantize(args)
    if quantize:
        print(f"qfuse compile: wrote {quantize} (round-to-nearest kernels for "
              "quantize-at-load)", file=sys.stderr)


def _compile_gptq(args):
    """compile-gptq's work: gptq_ir of --config -> --emit-only and/or -o."""
    if not args.output and not args.emit_only:
        raise CliError("expected -o ARTIFACT (or --emit-only FILE to write the IR alone)")
    cfg = ModelConfig.load(args.config)
    text = gptq_ir(cfg, args.encoding)
    if args.emit_only:
        write_output(text, args.emit_only)
    if not args.output:
        return
    with tempfile.TemporaryDirectory(prefix="qfuse-") as tmp:
        ir = os.path.join(tmp, "gptq.mlir")
        with open(ir, "w") as f:
            f.write(text)
        try:
            # No matmuls to fuse (--fuse's notes about large batches would
            # only be noise here).
            _, err = compile_ir(ir, args.output, chip=args.chip,
                                batch_sizes=row_counts(cfg), extra=["--fuse=none"])
        except ToolError as e:
            raise CliError(str(e)) from None
        if err.strip():
            sys.stderr.write(err)


def cmd_compile_gptq(args):
    _compile_gptq(args)
    where = args.output or args.emit_only
    if where != "-":
        print(f"qfuse compile-gptq: wrote {where} "
              f"({describe(ModelConfig.load(args.config), args.encoding)})",
              file=sys.stderr)


def add_compile_parser(sub):
    """The `compile` command's options."""
    c = sub.add_parser("compile", help="qfuse-compile an .mlir (or a config) to an artifact")
    c.add_argument("input", nargs="?", help="input .mlir (or use --config)")
    add_model_args(c, config_required=False)
    c.add_argument("-o", "--output", required=True)
    add_chip_arg(c, emit=True)
    c.add_argument("--batch-sizes", help="e.g. 1,2,4,8 (for a dynamic M)")
    c.add_argument("--emit", default="artifact", choices=("artifact", "mlir", "ptx"))
    c.add_argument("--tuning-db", default="auto", metavar="FILE|auto|shipped|none",
                   help=TUNING_DB_HELP)
    c.add_argument("--no-quantize-kernels", action="store_true",
                   help="do not write the round-to-nearest kernels of quantize-at-load "
                        "(OUTPUT minus .qfa, plus .quantize.qfa)")
    c.set_defaults(func=cmd_compile, work=_compile_with_quantize)


def add_compile_gptq_parser(sub):
    """The `compile-gptq` command's options."""
    cg = sub.add_parser("compile-gptq", help="the GPTQ block kernels (qf.gptq_block_update) "
                        "of a model's shapes, for GPTQ (quantize)")
    cg.add_argument("--config", required=True, help="the model's config.json")
    cg.add_argument("--encoding", default="int4-g128",
                    help="the encoding GPTQ quantizes into (default int4-g128)")
    cg.add_argument("-o", "--output", help="the artifact (one plan per stacked row count)")
    cg.add_argument("--emit-only", metavar="FILE",
                    help="write the IR to FILE ('-': stdout); with -o, compile it too")
    add_chip_arg(cg)
    cg.set_defaults(func=cmd_compile_gptq, work=_compile_gptq)
