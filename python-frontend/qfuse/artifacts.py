"""Artifacts kept beside a model (DIR/qfuse-*.qfa), compiled when missing.

`generate` reads DIR/qfuse-<encoding>.qfa; `quantize` reads the fp16
calibration model DIR/qfuse-fp16-calib.qfa and the GPTQ block kernels
DIR/qfuse-gptq-<encoding>.qfa. Each is compiled by a `python3 -m qfuse`
command; where the compiler is missing, the error prints that command.

    path = ensure_artifact("DIR/qfuse-int4-g128.qfa",
                           ["compile", "--config", "DIR/config.json", "--encoding",
                            "int4-g128", "--batch-sizes", "1,8"],
                           prog="generate", what="artifact for --encoding int4-g128",
                           flag="--artifact", model_dir="DIR")
"""
import os
import sys

from .atomic import atomic_path
from .quantize_kernels import quantize_artifact_path
from .tools import ToolError, find_tool


class ArtifactError(ValueError):
    """A model directory without its config, or a missing artifact that cannot
    be compiled here (the message says how to get it)."""


def model_config_path(model_dir, flag="--model"):
    """DIR/config.json of a Hugging Face model directory."""
    if not os.path.isdir(model_dir):
        raise ArtifactError(f"{flag} {model_dir}: no such directory")
    path = os.path.join(model_dir, "config.json")
    if not os.path.isfile(path):
        raise ArtifactError(f"{flag} {model_dir}: no config.json there; expected a "
                            "Hugging Face model directory (config.json, and "
                            "model.safetensors or model.safetensors.index.json with "
                            "its shards)")
    return path


def command_text(argv, output):
    """The shell command that makes `output` with `python3 -m qfuse argv`."""
    return ("PYTHONPATH=python-frontend python3 -m qfuse " + " ".join(argv)
            + f" -o {output}")


# The plans of a model's decode artifact DIR/qfuse-<encoding>.qfa, as
# `generate` (and qfuse-run, qfuse-quantize's qfuse output) read it: decode
# (1 row) and prefill chunks (8 rows).
DECODE_BATCH_SIZES = "1,8"


def decode_artifact_name(encoding):
    return f"qfuse-{encoding}.qfa"


def model_compile_argv(config_path, encoding, batch_sizes, max_seq=None):
    """`compile` of a whole model (`batch_sizes`: "1,8") from its config."""
    return (["compile", "--config", config_path, "--encoding", encoding,
             "--batch-sizes", batch_sizes]
            + (["--max-seq", str(max_seq)] if max_seq else []))


def gptq_compile_argv(config_path, encoding):
    """`compile-gptq`: the GPTQ block kernels of a model's shapes."""
    return ["compile-gptq", "--config", config_path, "--encoding", encoding]


def run_command(argv):
    """`python3 -m qfuse argv` in this process: the command's work, without
    its closing message; errors propagate as exceptions."""
    from .cli import build_parser
    args = build_parser().parse_args(argv)
    args.work(args)


def ensure_artifact(path, argv, prog, what, flag, model_dir, chip=None, describe=None):
    """`path` when it exists; else compiles it with `python3 -m qfuse argv -o
    path [--chip chip]` (None: the compile command's default, an artifact set
    for sm_80, sm_90 and sm_90a; written beside it and renamed, so an interrupted
    compile leaves nothing at `path`). ArtifactError naming `what`, the
    command and `flag` (the option that names another file) when the
    compiler is missing or `model_dir` is not writable."""
    if os.path.isfile(path):
        return path
    command = command_text(argv, path)
    try:
        find_tool("qfuse-compile")
    except ToolError as e:
        raise ArtifactError(f"no {what}: {path} does not exist, and it cannot be "
                            f"compiled here: {e}\nCompile it on a machine with the "
                            f"compiler:\n  {command}\nor pass {flag} FILE") from None
    if not os.access(model_dir, os.W_OK):
        raise ArtifactError(f"no {what}: {path} does not exist, and {model_dir} is not "
                            f"writable to compile it there; compile it elsewhere with\n"
                            f"  {command}\nand pass {flag} FILE")
    config = argv[argv.index("--config") + 1] if "--config" in argv else model_dir
    print(f"qfuse {prog}: {path} does not exist; compiling it from {config}"
          + (f" ({describe})" if describe else ""), file=sys.stderr)
    with atomic_path(path) as partial:
        run_command(list(argv) + (["--chip", chip] if chip else []) + ["-o", partial])
        # compile also writes the quantize artifact beside its output.
        kernels = quantize_artifact_path(partial)
        if os.path.isfile(kernels):
            os.replace(kernels, quantize_artifact_path(path))
    print(f"qfuse {prog}: wrote {path}", file=sys.stderr)
    return path


__all__ = ["ArtifactError", "DECODE_BATCH_SIZES", "command_text", "decode_artifact_name", "ensure_artifact", "gptq_compile_argv",
           "model_compile_argv", "model_config_path", "run_command"]
