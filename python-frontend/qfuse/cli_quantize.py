"""`quantize`: GPTQ of a Hugging Face model directory on the GPU (quantizer.py)."""
import sys

from .artifacts import DECODE_BATCH_SIZES
from .cli_args import add_chip_arg, damp as _damp, positive as _positive
from .quantizer import DEFAULT_SEQ_LEN, FORMATS, FP16_ARTIFACT, MAX_CHUNK


def cmd_quantize(args):
    from .quantizer import quantize
    result = quantize(args.model, args.encoding, args.calibration, args.out,
                      format=args.format, seq_len=args.seq_len,
                      fp16_artifact=args.fp16_artifact, gptq_artifact=args.gptq_artifact,
                      decode_artifact=args.decode_artifact, act_order=args.act_order,
                      static_groups=args.static_groups, damp=args.damp,
                      json_path=args.json, overwrite=args.overwrite, seed=args.seed,
                      device=args.device, chip=args.chip, resume=args.resume)
    how = ("the C API's qfuse_quantize" if result["via"] == "c-api"
           else f"{result['command'][0]}")
    print(f"qfuse quantize: wrote {result['out']} (through {how})", file=sys.stderr)


def add_quantize_parser(sub):
    """The `quantize` command's options."""
    q = sub.add_parser("quantize", help="GPTQ-quantize a Hugging Face model directory "
                       "on the GPU (the runtime's qfuse_quantize, or the qfuse-quantize "
                       "tool where libqfuse_c.so is not built), compiling the artifacts "
                       "it reads when they are missing")
    q.add_argument("--model", required=True, metavar="DIR",
                   help="Hugging Face model directory: config.json and the fp16/bf16 "
                        "safetensors checkpoint")
    q.add_argument("--encoding", default="int4-g128",
                   help="the weights' encoding (default int4-g128)")
    q.add_argument("--calibration", required=True, metavar="SPEC",
                   help="random:N (N random sequences) or a JSON file [[token ids...], ...]")
    q.add_argument("--out", required=True, metavar="OUTDIR",
                   help="directory the quantized checkpoint is written to")
    q.add_argument("--format", default="qfuse", choices=FORMATS,
                   help="checkpoint format of OUTDIR (default qfuse)")
    q.add_argument("--seq-len", type=_positive,
                   help=f"tokens per calibration sequence (default {DEFAULT_SEQ_LEN}, or "
                        "the model's positions when fewer; longer files are cut)")
    q.add_argument("--fp16-artifact", metavar="FILE",
                   help=f"the fp16 calibration model (default DIR/{FP16_ARTIFACT}, "
                        f"compiled with --batch-sizes 1,C, C = min(seq-len, {MAX_CHUNK}), "
                        "when missing)")
    q.add_argument("--gptq-artifact", metavar="FILE",
                   help="the GPTQ block kernels (default DIR/qfuse-gptq-<encoding>.qfa, "
                        "compiled with compile-gptq when missing)")
    q.add_argument("--decode-artifact", metavar="FILE",
                   help="--format qfuse: the decode artifact the packed checkpoint is for "
                        "(default DIR/qfuse-<encoding>.qfa, compiled with --batch-sizes "
                        f"{DECODE_BATCH_SIZES} when missing, as generate does)")
    q.add_argument("--act-order", action="store_true",
                   help="columns by descending Hessian diagonal")
    q.add_argument("--static-groups", action="store_true",
                   help="fit every group up front on the original weights")
    q.add_argument("--damp", type=_damp, metavar="F",
                   help="dampening fraction of the mean Hessian diagonal (default 0.01)")
    q.add_argument("--json", metavar="FILE", help="write the GPTQ report (JSON: per layer and module "
                   "the times, loss, damping and fallbacks)")
    q.add_argument("--overwrite", action="store_true", help="replace an existing OUTDIR")
    q.add_argument("--resume", action="store_true",
                   help="continue an interrupted run from OUTDIR/.qfuse-progress (the "
                   "same inputs; the results are those of an uninterrupted run)")
    q.add_argument("--seed", type=int, help="seed of the random calibration sequences")
    q.add_argument("--device", type=int, help="CUDA device ordinal")
    add_chip_arg(q, "target chip when compiling")
    q.set_defaults(func=cmd_quantize)
