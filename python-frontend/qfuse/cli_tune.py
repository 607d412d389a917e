"""`tune`: a model's candidate tilings measured on this GPU (or prepared to run
on another) and the tuning database written from the results (tune.py)."""
import glob
import os
import re
import sys
import tempfile

from .artifacts import DECODE_BATCH_SIZES, model_config_path
from .cli_args import CliError
from .model import ConfigError, ModelConfig


def _tune_config(args):
    """The config.json tune reads: --config, or --model DIR's."""
    if bool(args.config) == bool(args.model):
        raise CliError("give the model as --config config.json or --model DIR (one of them)")
    path = args.config or model_config_path(args.model)
    if not os.path.isfile(path):
        raise CliError(f"--config {path}: no such file")
    try:
        return ModelConfig.load(path), path
    except ConfigError as e:
        raise CliError(f"cannot derive the model's linear layers to tune: {e}") from None


def _tune_log(text):
    print(f"qfuse tune: {text}", file=sys.stderr)


def _tune_select(args):
    """--select: the database from run.sh's results; (output, the config
    the candidates were prepared from)."""
    from .tune import select
    out, _, report, manifest = select(args.select, args.out, replace=args.replace)
    print("\n".join(report))
    return out, manifest.get("config")


def _tune_next_steps(out, config_path):
    """What picks the database up, and the artifacts that predate it."""
    from .tools import USER_TUNING_DB
    model_dir = os.path.dirname(os.path.abspath(config_path)) if config_path else None
    if model_dir and os.path.abspath(out) == os.path.join(model_dir, USER_TUNING_DB):
        _tune_log("compiles of this model read it (qfuse compile --config, generate, "
                  "quantize; --tuning-db auto)")
        stale = sorted(glob.glob(os.path.join(model_dir, "qfuse-*.qfa")))
        if stale:
            _tune_log("generate and quantize compile their artifacts only when missing: "
                      "remove " + ", ".join(stale) + " to compile them with it")
    else:
        _tune_log(f"compile with it: python3 -m qfuse compile ... --tuning-db {out}")


def cmd_tune(args):
    from .tune import default_database, gpu_problem, parse_batch_sizes, prepare, run_all
    if args.select:
        if args.config or args.model:
            raise CliError("--select reads the results of prepared candidates, whose "
                           "manifest names the model; drop --config/--model")
        _tune_next_steps(*_tune_select(args))
        return
    cfg, config_path = _tune_config(args)
    batches = parse_batch_sizes(args.batch_sizes)
    out = args.out or default_database(config_path)
    problem = "--prepare-only" if args.prepare_only else gpu_problem()
    # The model directory's name, or a config file's own (configs/qwen.json).
    base = os.path.basename(config_path)
    name = (os.path.basename(os.path.dirname(os.path.abspath(config_path)))
            if base == "config.json" else os.path.splitext(base)[0])
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "model"
    with tempfile.TemporaryDirectory(prefix="qfuse-tune-") as tmp:
        work = args.work or (f"qfuse-tune-{name}" if problem else os.path.join(tmp, "work"))
        manifest = prepare(cfg, config_path, args.encoding, batches, work, chip=args.chip,
                           top=args.top, budget_s=args.budget_s, out_db=out,
                           log=_tune_log)
        runs = len(manifest["runs"])
        if problem:
            rel = os.path.relpath(work)
            rel = os.path.abspath(work) if rel.startswith("..") else rel
            _tune_log(f"no measurements here ({problem}); prepared {runs} candidate runs "
                      f"in {rel}/ ({len(manifest['skipped'])} candidate(s) did not "
                      "compile)")
            print(f"On the GPU machine (with qfuse-bench, or in the qfuse source to build "
                  f"it), with {rel}/ copied there:\n"
                  f"  bash {rel}/run.sh [RESULTS_DIR] [BUDGET_S, default {args.budget_s}]\n"
                  f"({rel}/run.sh holds the qfuse-bench command of every candidate; "
                  f"results go to {rel}/results, or RESULTS_DIR, and to "
                  f"$OUT/tune-results.tgz when $OUT is set.) Then here:\n"
                  f"  python3 -m qfuse tune --select RESULTS_DIR_OR_TGZ --out {out}")
            return
        results = os.path.join(work, "results")
        _tune_log(f"measuring {runs} candidates with qfuse-bench --check (budget "
                  f"{args.budget_s or 'none'} s)")
        ran, failed, skipped = run_all(work, results, args.budget_s, device=args.device,
                                       log=_tune_log)
        _tune_log(f"{ran} runs ({failed} failed), {skipped} not run within the budget")
        args.select = results
        _tune_select(args)
    _tune_next_steps(out, config_path)


def add_tune_parser(sub):
    """The `tune` command's options."""
    t = sub.add_parser("tune", help="measure the candidate tilings of a model's linear "
                       "shapes on this GPU (qfuse-bench --check, against cuBLAS fp16) and "
                       "write the tuning database its compiles then use; without a GPU, "
                       "prepare the candidates and print how to run them")
    t.add_argument("--config", help="the model's config.json")
    t.add_argument("--model", metavar="DIR", help="a Hugging Face model directory "
                   "(its config.json)")
    t.add_argument("--encoding", default="int4-g128",
                   help="weight encoding of the linear layers (default int4-g128; the "
                        "names of `compile`)")
    t.add_argument("--batch-sizes", default=DECODE_BATCH_SIZES, metavar="M,M,...",
                   help=f"batches to tune (default {DECODE_BATCH_SIZES}, the plans "
                        "`generate` compiles)")
    t.add_argument("--chip", default="sm_90",
                   help="target chip: sm_80, sm_89, sm_90 or sm_90a (wgmma candidates too)")
    t.add_argument("--out", metavar="DB",
                   help="the database to write, merged into its entries (default: "
                        "qfuse-tuning-db.json beside the config, which compiles of the "
                        "model read)")
    t.add_argument("--top", type=int, default=8, metavar="K",
                   help="at most K candidates per kernel family and (shape, batch), "
                        "ranked by the compiler (default 8; 0: all)")
    t.add_argument("--budget-s", type=int, default=600, metavar="S",
                   help="start a measurement only while its estimated time fits what is "
                        "left of S seconds (default 600; 0: no limit); runs go in rank "
                        "order, so a cut drops the lowest ranks")
    t.add_argument("--work", metavar="DIR",
                   help="where the candidate artifacts, manifest.json, runs.txt and "
                        "run.sh go (default: ./qfuse-tune-<model dir> (or <config name>) "
                        "when preparing, "
                        "a temporary folder when measuring here)")
    t.add_argument("--prepare-only", action="store_true",
                   help="prepare the candidates even where a GPU is present")
    t.add_argument("--select", metavar="RESULTS",
                   help="read the results of run.sh (its folder, or tune-results.tgz) and "
                        "write the database of the fastest passing candidates")
    t.add_argument("--replace", action="store_true",
                   help="with --select: drop the output file's existing entries")
    t.add_argument("--device", type=int, help="CUDA device ordinal for the measurements")
    t.set_defaults(func=cmd_tune)
