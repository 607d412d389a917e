"""`generate`: text or tokens from a Hugging Face model directory on the GPU,
the artifact compiled beside it first when it is missing."""
import os
import sys
import time

from .artifacts import (DECODE_BATCH_SIZES, decode_artifact_name, ensure_artifact,
                        model_compile_argv, model_config_path)
from .cli_args import CliError, add_chip_arg
from .cli_args import positive as _positive, prompt_ids as _prompt_ids
from .progress import Progress


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


def add_generate_parser(sub):
    """The `generate` command's options."""
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
