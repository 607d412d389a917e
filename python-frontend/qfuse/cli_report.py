"""`report`: the roofline of a model per layer (qf-roofline), as a table, JSON
and an SVG plot."""
import os
import sys
import tempfile

from .atomic import write_json
from .cli_emit import add_model_args, emitted_rows, input_ir
from .tools import TUNING_DB_HELP, resolve_tuning_db


def cmd_report(args):
    from .report import (format_table, load_measurements, match_measurements,
                         run_roofline, write_svg)
    with tempfile.TemporaryDirectory(prefix="qfuse-") as tmp:
        ir = input_ir(args, tmp)
        entries = run_roofline(ir, batch=emitted_rows(args) or 1, bandwidth_gbps=args.bandwidth_gbps,
                               peak_tflops=args.peak_tflops,
                               tuning_db=resolve_tuning_db(args.tuning_db, args.config,
                                                           tmp))
    steps = []
    if args.bench:
        steps = match_measurements(entries, load_measurements(args.bench))
    sys.stdout.write(format_table(entries, steps, per_op=args.per_op))
    sys.stdout.flush()
    if args.json:
        write_json(args.json, entries, trailing_newline=False, indent=2)
    if args.svg:
        title = (f"qfuse roofline: {os.path.basename(args.input or args.config)}, "
                 f"batch {emitted_rows(args) or 1}")
        write_svg(entries, args.svg, title)
        print(f"qfuse report: wrote {args.svg}", file=sys.stderr)


def add_report_parser(sub):
    """The `report` command's options."""
    r = sub.add_parser("report", help="roofline per layer (qf-roofline), table and SVG")
    r.add_argument("input", nargs="?", help="input .mlir (or use --config)")
    add_model_args(r, config_required=False)
    r.add_argument("--bandwidth-gbps", type=float)
    r.add_argument("--peak-tflops", type=float)
    r.add_argument("--tuning-db", default="auto", metavar="FILE|auto|shipped|none",
                   help=TUNING_DB_HELP)
    r.add_argument("--bench", action="append", metavar="JSON_OR_DIR",
                   help="qfuse-bench JSON (or a bench/results folder) with measured times")
    r.add_argument("--per-op", action="store_true", help="one row per linear layer")
    r.add_argument("--svg", help="write a roofline plot")
    r.add_argument("--json", help="write the qf-roofline entries")
    r.set_defaults(func=cmd_report)
