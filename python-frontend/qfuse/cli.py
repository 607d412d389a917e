"""python3 -m qfuse {emit,compile,compile-gptq,report,run,bench,generate,quantize,tune,encodings}."""
import argparse
import glob
import json
import os
import re
import sys
import tempfile
import time

from . import __version__
from .atomic import atomic_open, write_json, write_text
from .artifacts import (DECODE_BATCH_SIZES, decode_artifact_name, ensure_artifact,
                        model_compile_argv, model_config_path)
from .encoding_check import check_plan
from .encodings import (FAMILY_HELP, NAMED_ENCODINGS, ALIASES, EncodingError,
                        EncodingPlan, encoding_text, valid_names)
from .gptq import describe, gptq_ir, row_counts
from .quantize_kernels import load_artifact_json, quantize_artifact_path, quantize_ir
from .ir import IRError
from .model import ConfigError, ModelConfig, emit_decode_step_only, emit_model
from .progress import Progress
from .quantizer import DEFAULT_SEQ_LEN, FORMATS, FP16_ARTIFACT, MAX_CHUNK
from .cli_args import add_chip_arg, batch as _batch, damp as _damp
from .cli_args import positive as _positive, prompt_ids as _prompt_ids
from .tools import (TUNING_DB_HELP, ToolError, compile_ir, model_tuning_db,
                    resolve_tuning_db, verify)


class CliError(Exception):
    pass


def _add_model_args(p, config_required):
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


def _rows(args):
    """The M the IR is emitted with: None (dynamic) or a number."""
    batch = getattr(args, "batch", None)
    if batch == "dynamic":
        return None
    if batch is None:
        # A compile over several batch sizes needs one IR with a dynamic M.
        return None if getattr(args, "batch_sizes", None) else 1
    return batch


def _emit_text(args):
    cfg = ModelConfig.load(args.config)
    plan = EncodingPlan(args.encoding, args.override)
    check_plan(plan)
    with Progress("emitting", total=args.layers or cfg.num_hidden_layers) as progress:
        if args.decode_step_only:
            return emit_decode_step_only(cfg, plan, _rows(args) or 1, args.layers, progress)
        return emit_model(cfg, plan, _rows(args), args.layers, args.max_seq, args.dtype,
                          progress, sampling=getattr(args, "sampling", False))


def _write(text, output):
    if output in (None, "-"):
        sys.stdout.write(text)
    else:
        write_text(output, text)


def cmd_emit(args):
    text = _emit_text(args)
    _write(text, args.output)
    if args.verify:
        if args.output in (None, "-"):
            raise CliError("--verify needs -o FILE")
        verify(args.output)
        print(f"qfuse emit: {args.output} verifies with qfuse-opt", file=sys.stderr)


def _input_ir(args, tmpdir):
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
        f.write(_emit_text(args))
    return path


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
        ir = _input_ir(args, tmp)
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
        _write(text, ir)
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
        _write(text, args.emit_only)
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


def cmd_report(args):
    from .report import (format_table, load_measurements, match_measurements,
                         run_roofline, write_svg)
    with tempfile.TemporaryDirectory(prefix="qfuse-") as tmp:
        ir = _input_ir(args, tmp)
        entries = run_roofline(ir, batch=_rows(args) or 1, bandwidth_gbps=args.bandwidth_gbps,
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
        title = f"qfuse roofline: {os.path.basename(args.input or args.config)}, batch {_rows(args) or 1}"
        write_svg(entries, args.svg, title)
        print(f"qfuse report: wrote {args.svg}", file=sys.stderr)


def _open_runtime(args):
    from .runtime import Runtime
    rt = Runtime(args.artifact, device=args.device)
    if args.weights:
        with Progress("loading weights"):
            rt.load_weights(args.weights)
    else:
        with Progress("binding random weights"):
            rt.bind_random_weights(args.seed)
    return rt


def cmd_run(args):
    from .runtime import numpy, random_inputs
    with _open_runtime(args) as rt:
        print(f"{args.artifact}: runs {rt.chip}", file=sys.stderr)
        batches = [args.batch] if args.batch else rt.plan_batches()
        for batch in batches:
            for item in args.input or []:
                name, _, path = item.partition("=")
                if numpy is not None and path.endswith(".npy"):
                    rt.set_input(batch, name, numpy.load(path))
                else:
                    with open(path, "rb") as f:
                        rt.set_input(batch, name, f.read())
            if not args.input:
                random_inputs(rt, batch, args.seed)
            rt.run(batch)
            for name in rt.outputs:
                y = rt.get_output(batch, name)
                if args.output_dir:
                    os.makedirs(args.output_dir, exist_ok=True)
                    path = os.path.join(args.output_dir, f"{name}.b{batch}")
                    if numpy is not None and not isinstance(y, bytes):
                        with atomic_open(path + ".npy", "wb") as f:
                            numpy.save(f, y)
                    else:
                        with atomic_open(path + ".bin", "wb") as f:
                            f.write(y)
                summary = (f"shape {list(y.shape)}, mean |y| {float(abs(y.astype('float32')).mean()):.4g}"
                           if not isinstance(y, bytes) else f"{len(y)} bytes")
                print(f"batch {batch}: {name}: {summary}")


def cmd_bench(args):
    with _open_runtime(args) as rt:
        print(f"{args.artifact}: runs {rt.chip}", file=sys.stderr)
        from .runtime import random_inputs
        results = []
        batches = [args.batch] if args.batch else rt.plan_batches()
        with Progress("benchmarking", total=len(batches)) as progress:
            for i, batch in enumerate(batches):
                random_inputs(rt, batch, args.seed)
                results.append(rt.benchmark(batch, iterations=args.iterations,
                                            warmup=args.warmup))
                progress.update(i + 1)
        for r in results:
            print(f"batch {r['batch']}: median {r['median_us']:.1f} us "
                  f"(min {r['min_us']:.1f}, max {r['max_us']:.1f}, {r['iterations']} runs; "
                  "host-timed qfuse_run; qfuse-bench measures with CUDA graphs and "
                  "rotating weights)")
        if args.json:
            write_json(args.json, {"artifact": args.artifact, "chip": rt.chip,
                                   "results": results},
                       trailing_newline=False, indent=2)


# The artifact `generate` (and qfuse-run) read without --artifact, and the
# plans it is compiled with: decode (1 row) and prefill chunks (8 rows).
GENERATE_BATCH_SIZES = DECODE_BATCH_SIZES


def _generate_artifact(args, config_path):
    """--artifact, else DIR/qfuse-<encoding>.qfa (qfuse-run's convention),
    compiled from DIR/config.json first when it is missing."""
    if args.artifact:
        if not os.path.isfile(args.artifact):
            raise CliError(f"--artifact {args.artifact}: no such file")
        return args.artifact
    if os.sep in args.encoding:
        raise CliError(f"--encoding {args.encoding!r} cannot name an artifact file "
                       "(DIR/qfuse-<encoding>.qfa); pass --artifact FILE")
    path = os.path.join(args.model, decode_artifact_name(args.encoding))
    argv = model_compile_argv(config_path, args.encoding, GENERATE_BATCH_SIZES,
                              args.max_seq)
    return ensure_artifact(path, argv, prog="generate",
                           what=f"artifact for --encoding {args.encoding}",
                           flag="--artifact", model_dir=args.model, chip=args.chip,
                           describe=f"--encoding {args.encoding}, --batch-sizes "
                                    f"{GENERATE_BATCH_SIZES}")


def _check_generation(args, artifact):
    """What the artifact's model contract allows, checked on the host."""
    from .artifact_set import first_variant
    from .runtime import _read_artifact
    # Every variant of a set has the same model.
    model = first_variant(_read_artifact(artifact)).get("model")
    if not isinstance(model, dict):
        raise CliError(f"{artifact} is not a whole-model artifact (it has no 'model', "
                       "docs/decode-model.md); compile it from a config.json without "
                       "--decode-step-only or --layers")
    max_seq, vocab = model.get("max_seq"), model.get("vocab_size")
    if args.max_seq and max_seq != args.max_seq:
        raise CliError(f"{artifact} was compiled with max_seq {max_seq}, not --max-seq "
                       f"{args.max_seq}; remove it to compile it again, or drop --max-seq")
    if isinstance(vocab, int):
        bad = [t for t in args.prompt_ids if t >= vocab]
        if bad:
            raise CliError(f"--prompt-ids: token id {bad[0]} is outside the vocabulary "
                           f"(vocab_size {vocab})")
    if isinstance(max_seq, int) and len(args.prompt_ids) + args.max_new_tokens > max_seq:
        raise CliError(f"{len(args.prompt_ids)} prompt ids + --max-new-tokens "
                       f"{args.max_new_tokens} exceed the artifact's max_seq {max_seq} "
                       "(compile with a larger --max-seq)")


def _sampling(args):
    """The sampling options given on the command line (None: greedy)."""
    options = {k: getattr(args, k) for k in ("temperature", "top_k", "top_p", "min_p",
                                               "repetition_penalty", "seed")}
    if options["temperature"] < 0:
        raise CliError(f"--temperature {options['temperature']}: expected 0 (greedy) "
                       "or more")
    if not 0 < options["top_p"] <= 1:
        raise CliError(f"--top-p {options['top_p']}: expected a value in (0, 1]")
    if not 0 <= options["min_p"] <= 1:
        raise CliError(f"--min-p {options['min_p']}: expected a value in [0, 1]")
    if options["top_k"] < 0:
        raise CliError(f"--top-k {options['top_k']}: expected 0 (off) or more")
    if not options["repetition_penalty"] > 0:
        raise CliError(f"--repetition-penalty {options['repetition_penalty']}: expected "
                       "a positive number (1: off)")
    return options


def _text_prompt(args):
    """--prompt (with --chat, --system) through DIR's tokenizer: (ids, stop
    ids, tokenizer)."""
    from .runtime import Tokenizer
    if not os.path.isfile(os.path.join(args.model, "tokenizer.json")):
        raise CliError(f"--prompt needs the model's tokenizer: "
                       f"{os.path.join(args.model, 'tokenizer.json')} does not exist "
                       "(or give --prompt-ids)")
    tok = Tokenizer(args.model)
    text = tok.chat(args.prompt, system=args.system) if args.chat else args.prompt
    return tok.encode(text, add_special=not args.chat), tok.stop_ids(chat=args.chat), tok


def cmd_generate(args):
    from .runtime import Runtime
    if args.system is not None and not args.chat:
        raise CliError("--system needs --chat")
    if args.chat and args.prompt is None:
        raise CliError("--chat applies to --prompt TEXT")
    sampling = _sampling(args)
    config_path = model_config_path(args.model)
    tok, stops = None, []
    if args.prompt is not None:
        args.prompt_ids, stops, tok = _text_prompt(args)
    artifact = _generate_artifact(args, config_path)
    _check_generation(args, artifact)
    opened = time.monotonic()
    with Runtime(artifact, device=args.device) as rt:
        loading = time.monotonic()
        with Progress("loading checkpoint"):
            rt.load_checkpoint(args.model, args.threads)
        # What the user waits for before the first token, in its parts.
        print(f"{artifact}: opened in {loading - opened:.1f} s; {args.model} bound in "
              f"{time.monotonic() - loading:.1f} s", file=sys.stderr)
        if tok is None:
            with Progress("generating"):
                tokens, stats = rt.generate_stream(args.prompt_ids, args.max_new_tokens,
                                                   sampling)
            print(",".join(str(t) for t in tokens))
        else:
            stream, stop_set = tok.stream(), set(stops)

            def show(token):
                if token not in stop_set:
                    sys.stdout.write(stream.push(token))
                    sys.stdout.flush()

            tokens, stats = rt.generate_stream(args.prompt_ids, args.max_new_tokens,
                                               sampling, stops, show)
            sys.stdout.write(stream.finish() + "\n")
    report = sys.stderr if tok is not None else sys.stdout
    decode = (f"decode {stats['decode_tokens_per_s']:.1f} tokens/s ({len(tokens) - 1} "
              f"tokens in {stats['decode_ms']:.3f} ms)" if len(tokens) > 1
              else "no decode steps (one new token)")
    print(f"time to first token {stats['ttft_ms']:.3f} ms ({len(args.prompt_ids)} prompt "
          f"ids), {decode}; {artifact} ({rt.chip})", file=report)


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


def cmd_encodings(args):
    for name in valid_names():
        target = f" (= {ALIASES[name]})" if name in ALIASES else ""
        print(f"{name:16s} #qf.enc<{encoding_text(name)}>{target}")
    print(f"and {FAMILY_HELP}")


def build_parser():
    p = argparse.ArgumentParser(prog="qfuse", description=(
        "The qfuse Python frontend: emit qf IR from a Hugging Face config.json, "
        "compile it with qfuse-compile, report its roofline, and run artifacts "
        "through the runtime's C API."))
    p.add_argument("--version", action="version", version=f"qfuse {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("emit", help="write the qf IR of a model")
    _add_model_args(e, config_required=True)
    e.add_argument("-o", "--output", default="-")
    e.add_argument("--verify", action="store_true", help="check the IR with qfuse-opt")
    e.set_defaults(func=cmd_emit)

    c = sub.add_parser("compile", help="qfuse-compile an .mlir (or a config) to an artifact")
    c.add_argument("input", nargs="?", help="input .mlir (or use --config)")
    _add_model_args(c, config_required=False)
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

    r = sub.add_parser("report", help="roofline per layer (qf-roofline), table and SVG")
    r.add_argument("input", nargs="?", help="input .mlir (or use --config)")
    _add_model_args(r, config_required=False)
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

    for name, fn, text in (("run", cmd_run, "run an artifact on the GPU"),
                           ("bench", cmd_bench, "time an artifact on the GPU")):
        s = sub.add_parser(name, help=text)
        s.add_argument("artifact")
        s.add_argument("--device", type=int, default=0)
        s.add_argument("--batch", type=int, help="one batch size (default: every plan)")
        s.add_argument("--weights", help="qfuse-packed safetensors (default: random weights)")
        s.add_argument("--seed", type=int, default=1234)
        if name == "run":
            s.add_argument("--input", action="append", metavar="NAME=FILE",
                           help="input buffer from .npy or raw bytes (default: random)")
            s.add_argument("--output-dir")
        else:
            s.add_argument("--iterations", type=int, default=20)
            s.add_argument("--warmup", type=int, default=3)
            s.add_argument("--json")
        s.set_defaults(func=fn)

    g = sub.add_parser("generate", help="text or tokens from a Hugging Face model "
                       "directory on the GPU (compiling DIR/qfuse-<encoding>.qfa first "
                       "when it is missing)")
    g.add_argument("--model", required=True, metavar="DIR",
                   help="Hugging Face model directory: config.json and the safetensors "
                        "checkpoint (fp16/bf16 quantized at load, or AutoGPTQ / "
                        "compressed-tensors)")
    g.add_argument("--encoding", default="int4-g128",
                   help="weight encoding (default int4-g128); without --artifact the "
                        "artifact is DIR/qfuse-<encoding>.qfa")
    prompt = g.add_mutually_exclusive_group(required=True)
    prompt.add_argument("--prompt", metavar="TEXT",
                        help="the prompt as text, tokenized with DIR/tokenizer.json; "
                             "the answer streams to stdout as text and stops at the "
                             "model's stop tokens")
    prompt.add_argument("--prompt-ids", type=_prompt_ids, metavar="ID,ID,...",
                        help="the prompt's token ids, e.g. 1,2,3")
    g.add_argument("--chat", action="store_true",
                   help="apply the model's chat format (tokenizer_config.json's "
                        "chat_template: Llama-3, ChatML/Qwen2, Mistral instruct)")
    g.add_argument("--system", metavar="TEXT", help="with --chat: a system message")
    g.add_argument("--temperature", type=float, default=0.0,
                   help="sampling temperature (default 0: greedy)")
    g.add_argument("--top-k", type=int, default=0, help="keep the k likeliest (0: off)")
    g.add_argument("--top-p", type=float, default=1.0,
                   help="keep the likeliest up to this mass (1: off)")
    g.add_argument("--min-p", type=float, default=0.0,
                   help="drop tokens below this fraction of the likeliest (0: off)")
    g.add_argument("--repetition-penalty", type=float, default=1.0,
                   help="divide the logits of tokens seen so far (1: off)")
    g.add_argument("--seed", type=int, default=0, help="seed of the sampler")
    g.add_argument("--max-new-tokens", type=_positive, default=64)
    g.add_argument("--artifact", help="the compiled model (default DIR/qfuse-<encoding>.qfa, "
                   f"compiled with --batch-sizes {GENERATE_BATCH_SIZES} when missing)")
    g.add_argument("--max-seq", type=_positive,
                   help="KV cache positions when compiling (default "
                        "max_position_embeddings); an existing artifact must match")
    add_chip_arg(g, "target chip when compiling")
    g.add_argument("--device", type=int, default=0)
    g.add_argument("--threads", type=int, default=0,
                   help="threads quantizing the checkpoint (0: every core)")
    g.set_defaults(func=cmd_generate)

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

    n = sub.add_parser("encodings", help="list the encoding names")
    n.set_defaults(func=cmd_encodings)
    return p


def main(argv=None):
    from .runtime import QfuseError
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except (CliError, ConfigError, EncodingError, IRError, ToolError, QfuseError,
            ValueError, OSError) as e:  # TuneError is a ValueError
        print(f"qfuse {args.command}: error: {e}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"qfuse {args.command}: error: out of host memory (MemoryError); "
              "no file was left half-written", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
