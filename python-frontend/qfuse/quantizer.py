"""GPTQ of a Hugging Face model on the GPU: the runtime's qfuse_quantize.

    import qfuse
    result = qfuse.quantize("DIR", encoding="int4-g128", calibration="random:128",
                            out="DIR-int4")
    # or from a torch model (saved to a temporary directory first):
    result = qfuse.quantize(model=hf_model, encoding="int4-g128",
                            calibration="calib.json", out="out")

    python3 -m qfuse quantize --model DIR --encoding int4-g128 \\
        --calibration random:128 --out DIR-int4

The runtime's GPTQ pipeline (runtime/src/gptq/QuantizeModel.cpp) runs the fp16
model over the calibration sequences layer by layer to collect each layer's
Hessians, and quantizes the layers with the GPTQ block kernels. It is
called in this process through the C API's qfuse_quantize
(runtime.quantize_model, libqfuse_c.so); only where that library cannot be
loaded does the qfuse-quantize tool (runtime/tools/qfuse-quantize.cpp, the
same pipeline) run as a subprocess instead. The result's "via" says which:
"c-api" or "tool". It reads these artifacts, compiled here first when they
are missing and the compiler is available (artifacts.py):

| artifact | default | compiled with |
|---|---|---|
| fp16 calibration model | DIR/qfuse-fp16-calib.qfa | compile --encoding fp16 --batch-sizes 1,C, C = min(seq_len, 2048) |
| GPTQ block kernels | DIR/qfuse-gptq-<encoding>.qfa | compile-gptq --encoding <encoding> |
| decode model (--format qfuse) | DIR/qfuse-<encoding>.qfa | compile --encoding <encoding> --batch-sizes 1,8 (as `generate`) |

The calibration is `random:N` (N random sequences of seq_len tokens) or a
JSON file `[[token ids...], ...]`.

Through the C API the pipeline's progress lines go to the process's stdout,
and Ctrl-C (where Python's default SIGINT handler is installed, as in
`python3 -m qfuse quantize`) ends the process, as it would end the tool:
the C call cannot be interrupted and resumed.
"""
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading

from .atomic import write_json
from .artifacts import (DECODE_BATCH_SIZES, ArtifactError, decode_artifact_name,
                        ensure_artifact, gptq_compile_argv, model_compile_argv,
                        model_config_path)
from .encodings import encoding_text
from .gptq import grid_for
from .model import ModelConfig, max_seq_for
from .tools import ToolError, find_tool

TOOL = "qfuse-quantize"
FORMATS = ("qfuse", "compressed-tensors", "auto-gptq")
# Calibration sequences of this many tokens by default (qfuse-quantize's
# default), and the largest chunk of a sequence the calibration model runs
# at once (its plans are 1 and C rows): a whole 2048-token sample in one
# chunk runs the GEMMs at a higher rate than four of 512 (Llama-3-8B, 512 x
# 2048 tokens on the H200: 84.6 s against 92.0 s, docs/gptq.md).
DEFAULT_SEQ_LEN = 512
MAX_CHUNK = 2048
FP16_ARTIFACT = "qfuse-fp16-calib.qfa"


VIA_C_API = "c-api"
VIA_TOOL = "tool"


class QuantizeError(ValueError):
    """Arguments GPTQ cannot take, no library or tool, or no GPU to run it,
    or the run failed (the C library's or the tool's message)."""


def gptq_artifact_name(encoding):
    return f"qfuse-gptq-{encoding}.qfa"


def calibration_chunk(seq_len):
    """C: the calibration model's larger plan (rows run at once)."""
    return min(seq_len, MAX_CHUNK)


def default_seq_len(cfg):
    """DEFAULT_SEQ_LEN, or fewer where the model's context is shorter."""
    return min(DEFAULT_SEQ_LEN, max_seq_for(cfg))


def check_calibration(spec, vocab_size=None):
    """`random:N` (N > 0) or a JSON file of token id lists; QuantizeError
    saying which part is wrong. Returns the number of sequences."""
    if not isinstance(spec, str) or not spec:
        raise QuantizeError(f"--calibration {spec!r}: expected random:N or a JSON file "
                            "of token id lists")
    if spec.startswith("random:"):
        count = spec[len("random:"):]
        if not count.isdigit() or int(count) <= 0:
            raise QuantizeError(f"--calibration {spec}: expected random:N with N a "
                                "positive number of sequences, e.g. random:128")
        return int(count)
    if not os.path.isfile(spec):
        raise QuantizeError(f"--calibration {spec}: no such file, and not random:N; "
                            "expected random:N or a JSON file [[token ids...], ...]")
    try:
        with open(spec) as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        raise QuantizeError(f"--calibration {spec}:{e.lineno}:{e.colno}: not JSON: "
                            f"{e.msg}") from None
    if not isinstance(data, list) or not data:
        raise QuantizeError(f"--calibration {spec}: expected a non-empty JSON array of "
                            "token id arrays [[1, 2, ...], ...]")
    for i, seq in enumerate(data):
        if not isinstance(seq, list) or not seq:
            raise QuantizeError(f"--calibration {spec}: sequence {i} is not a non-empty "
                                "array of token ids")
        for t in seq:
            if isinstance(t, bool) or not isinstance(t, int) or t < 0:
                raise QuantizeError(f"--calibration {spec}: sequence {i} has {t!r}, "
                                    "expected non-negative integer token ids")
            if vocab_size is not None and t >= vocab_size:
                raise QuantizeError(f"--calibration {spec}: sequence {i} has token id "
                                    f"{t}, outside the vocabulary (vocab_size "
                                    f"{vocab_size})")
    return len(data)


def tool_argv(tool, model, encoding, calibration, out, fmt, seq_len, fp16_artifact,
              gptq_artifact, decode_artifact=None, act_order=False, static_groups=False,
              damp=None, json_path=None, overwrite=False, seed=None, device=None,
              resume=False):
    """qfuse-quantize's command line (runtime/tools/qfuse-quantize.cpp)."""
    argv = [tool, "--model", model, "--encoding", encoding, "--calibration",
            calibration, "--out", out, "--format", fmt, "--seq-len", str(seq_len),
            "--fp16-artifact", fp16_artifact, "--gptq-artifact", gptq_artifact]
    if decode_artifact:
        argv += ["--decode-artifact", decode_artifact]
    if act_order:
        argv.append("--act-order")
    if static_groups:
        argv.append("--static-groups")
    if damp is not None:
        argv += ["--damp", repr(float(damp))]
    if json_path:
        argv += ["--json", json_path]
    if overwrite:
        argv.append("--overwrite")
    if resume:
        argv.append("--resume")
    if seed is not None:
        argv += ["--seed", str(seed)]
    if device is not None:
        argv += ["--device", str(device)]
    return argv


def c_options(model, encoding, calibration, out, fmt, seq_len, fp16_artifact,
              gptq_artifact, decode_artifact=None, act_order=False, static_groups=False,
              damp=None, overwrite=False, seed=None, device=None, resume=False):
    """qfuse_quantize's options (qfuse.h): the same as tool_argv's command
    line, as the JSON object the C API takes."""
    options = {"model": model, "encoding": encoding, "calibration": calibration,
               "out": out, "format": fmt, "seq_len": seq_len,
               "fp16_artifact": fp16_artifact, "gptq_artifact": gptq_artifact}
    if decode_artifact:
        options["decode_artifact"] = decode_artifact
    if act_order:
        options["act_order"] = True
    if static_groups:
        options["static_groups"] = True
    if damp is not None:
        options["damp"] = float(damp)
    if overwrite:
        options["overwrite"] = True
    if resume:
        options["resume"] = True
    if seed is not None:
        options["seed"] = seed
    if device is not None:
        options["device"] = device
    return options


def gpu_problem():
    """Why there is no GPU to run on, or None. Asks the runtime's C library
    when it loads; else looks for the NVIDIA driver."""
    from . import runtime
    try:
        runtime.require_gpu(runtime.load_library())
        return None
    except runtime.NoDeviceError as e:
        return str(e)
    except runtime.QfuseError:
        pass  # no C library here: look for the driver instead
    if not os.path.exists("/proc/driver/nvidia/version"):
        return ("no NVIDIA driver here (/proc/driver/nvidia/version is missing) and "
                "no libqfuse_c.so to ask for a device")
    return None


def _existing(path, flag):
    if not os.path.isfile(path):
        raise QuantizeError(f"{flag} {path}: no such file")
    return path


def _check_calibration_model(path, seq_len, chunk):
    """The fp16 artifact is a whole model that holds seq_len positions."""
    from .artifact_set import first_variant
    from .runtime import QfuseError, _read_artifact
    try:
        # The variants of a set share the model and the plans' batch sizes.
        meta = first_variant(_read_artifact(path))
    except QfuseError as e:
        raise QuantizeError(str(e)) from None
    model = meta.get("model")
    if not isinstance(model, dict):
        raise QuantizeError(f"{path} is not a whole-model artifact (it has no 'model', "
                            "docs/decode-model.md); compile it from the config.json with "
                            "--encoding fp16")
    max_seq = model.get("max_seq")
    if isinstance(max_seq, int) and max_seq < seq_len:
        raise QuantizeError(f"{path} holds {max_seq} positions, fewer than --seq-len "
                            f"{seq_len}; remove it to compile it again, or lower --seq-len")
    batches = sorted(p.get("batch") for p in meta.get("plans", []) if isinstance(p, dict))
    if batches and chunk not in batches:
        print(f"qfuse quantize: note: {path} has plans for {batches} rows, not "
              f"{chunk}; the calibration runs in the chunks it has",
              file=sys.stderr)


def _forward(stream, sink, tail):
    for line in iter(stream.readline, ""):
        sink.write(line)
        sink.flush()
        tail.append(line)
        del tail[:-20]
    stream.close()


def run_tool(argv):
    """Runs qfuse-quantize, its stdout and stderr streamed to sys.stdout and
    sys.stderr as it writes them; QuantizeError with the last lines of its
    stderr when it fails."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    out_tail, err_tail = [], []
    threads = [threading.Thread(target=_forward, args=(proc.stdout, sys.stdout, out_tail),
                                daemon=True),
               threading.Thread(target=_forward, args=(proc.stderr, sys.stderr, err_tail),
                                daemon=True)]
    for t in threads:
        t.start()
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        raise
    finally:
        for t in threads:
            t.join()
    if rc != 0:
        last = "".join(err_tail).strip()
        raise QuantizeError(f"{TOOL} failed (exit {rc}): {' '.join(argv)}"
                            + (f"\n{last}" if last else ""))


@contextlib.contextmanager
def _sigint_ends_process():
    """While a long C call runs, Ctrl-C ends the process (as it ends the
    tool) instead of waiting, unseen, for the call to return. Only where
    Python's default handler is installed, in the main thread."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _load_c_library():
    """(library, None), or (None, why it cannot be loaded)."""
    from . import runtime
    try:
        return runtime.load_library(), None
    except runtime.QfuseError as e:
        return None, str(e)


def run_c_api(lib, options):
    """qfuse_quantize through `lib`: the report, or QuantizeError with the C
    library's message."""
    from . import runtime
    try:
        with _sigint_ends_process():
            return runtime.quantize_model(options, library=lib)
    except runtime.QfuseError as e:
        raise QuantizeError(str(e)) from None


def quantize(model=None, encoding="int4-g128", calibration=None, out=None, *,
             config=None, format="qfuse", seq_len=None, fp16_artifact=None,
             gptq_artifact=None, decode_artifact=None, act_order=False,
             static_groups=False, damp=None, json_path=None, overwrite=False, seed=None,
             device=None, chip=None, resume=False):
    """GPTQ-quantizes `model` into `out` on the GPU.

    `model`: a Hugging Face model directory, or a torch module / state dict
    (saved to a temporary directory first, with `config` or its
    `model.config`; torch_import.save_checkpoint). The arguments are checked
    first; then the fp16 calibration, GPTQ and (format "qfuse") decode
    artifacts are compiled into the model directory when they are missing
    (for a temporary directory: each time). The quantization runs in this
    process through the C API's qfuse_quantize (libqfuse_c.so), or, only
    where that library cannot be loaded, as the qfuse-quantize tool; either
    needs a GPU (QuantizeError saying so before anything runs). The other
    arguments are the pipeline's options (qfuse-quantize's flags).

    Returns {"out", "via", "options", "command", "report"}: "via" is
    "c-api" or "tool"; "options" the qfuse_quantize options (the same
    settings either way); "command" the tool's command line (None through
    the C API, whose report records the options as its "command"); the
    report is the pipeline's JSON report (also written to `json_path` when
    given), or None if the tool wrote none.

    Each layer's progress is kept in OUT/.qfuse-progress; `resume=True`
    continues an interrupted run from it (with the results the whole run
    would have given; refused if the inputs differ).
    """
    if model is None:
        raise QuantizeError("quantize: expected model= (a model directory or a torch "
                            "module)")
    if not isinstance(model, (str, os.PathLike)):
        from .torch_import import saved_model
        with saved_model(model, config) as model_dir:
            return quantize(model_dir, encoding, calibration, out, format=format,
                            seq_len=seq_len, fp16_artifact=fp16_artifact,
                            gptq_artifact=gptq_artifact, decode_artifact=decode_artifact,
                            act_order=act_order, static_groups=static_groups, damp=damp,
                            json_path=json_path, overwrite=overwrite, seed=seed,
                            device=device, chip=chip, resume=resume)
    model = os.fspath(model)
    if config is not None:
        raise QuantizeError("quantize: config= is for a torch model; a model directory "
                            "has its config.json")
    try:
        config_path = model_config_path(model)
    except ArtifactError as e:
        raise QuantizeError(str(e)) from None
    cfg = ModelConfig.load(config_path)

    seq_len = _checked_arguments(cfg, config_path, model, encoding, calibration, out,
                                 format, seq_len, gptq_artifact, decode_artifact,
                                 act_order, static_groups, damp, seed, device)
    fp16_artifact, gptq_artifact, decode_artifact = _ready_artifacts(
        model, config_path, encoding, format, seq_len, chip, fp16_artifact,
        gptq_artifact, decode_artifact)
    artifacts = ", ".join(a for a in (fp16_artifact, gptq_artifact, decode_artifact) if a)

    options = c_options(model, encoding, calibration, out, format, seq_len,
                        fp16_artifact, gptq_artifact, decode_artifact, act_order,
                        static_groups, damp, overwrite, seed, device, resume)

    # The C library (else the tool), and a GPU to run it on.
    lib, no_library = _load_c_library()
    if lib is not None:
        _check_c_api_device(lib, device, artifacts)
        report = run_c_api(lib, options)
        if json_path:
            write_json(json_path, report, indent=2)
        return {"out": out, "via": VIA_C_API, "options": options, "command": None,
                "report": report}

    tool = _tool_with_gpu(no_library, artifacts)
    with tempfile.TemporaryDirectory(prefix="qfuse-quantize-") as tmp:
        report_path = json_path or os.path.join(tmp, "report.json")
        argv = tool_argv(tool, model, encoding, calibration, out, format, seq_len,
                         fp16_artifact, gptq_artifact, decode_artifact, act_order,
                         static_groups, damp, report_path, overwrite, seed, device,
                         resume)
        run_tool(argv)
        report = _read_tool_report(report_path)
    return {"out": out, "via": VIA_TOOL, "options": options, "command": argv,
            "report": report}


def _checked_arguments(cfg, config_path, model, encoding, calibration, out, format,
                       seq_len, gptq_artifact, decode_artifact, act_order, static_groups,
                       damp, seed, device):
    """The arguments checked before anything is compiled or run (QuantizeError
    naming the first that is wrong); returns seq_len, its default filled in."""
    text = encoding_text(encoding)
    grid = grid_for(encoding)
    if format not in FORMATS:
        raise QuantizeError(f"--format {format}: expected one of {', '.join(FORMATS)}")
    if os.sep in encoding and not (gptq_artifact and (decode_artifact or format != "qfuse")):
        raise QuantizeError(f"--encoding {encoding!r} cannot name an artifact file "
                            f"(DIR/{gptq_artifact_name('<encoding>')}, "
                            f"DIR/{decode_artifact_name('<encoding>')}); pass "
                            "--gptq-artifact FILE (and --decode-artifact FILE)")
    if decode_artifact and format != "qfuse":
        raise QuantizeError(f"--decode-artifact is for --format qfuse (the packed "
                            f"checkpoint of a decode artifact), not --format {format}")
    for name, value in (("--seed", seed), ("--device", device)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 0):
            raise QuantizeError(f"{name} {value!r}: expected a non-negative integer")
    if not out:
        raise QuantizeError("--out OUTDIR is required: the directory the quantized "
                            "checkpoint is written to")
    if os.path.abspath(out) == os.path.abspath(model):
        raise QuantizeError(f"--out {out} is the model directory; write the quantized "
                            "checkpoint to another directory")
    if os.path.exists(out) and not os.path.isdir(out):
        raise QuantizeError(f"--out {out} exists and is not a directory")
    limit = max_seq_for(cfg)
    if seq_len is None:
        seq_len = default_seq_len(cfg)
    elif isinstance(seq_len, bool) or not isinstance(seq_len, int) or seq_len <= 0:
        raise QuantizeError(f"--seq-len {seq_len!r}: expected a positive number of tokens")
    elif seq_len > limit:
        raise QuantizeError(f"--seq-len {seq_len} exceeds the model's {limit} positions "
                            f"(max_position_embeddings or sliding_window in {config_path})")
    if damp is not None:
        if isinstance(damp, bool) or not isinstance(damp, (int, float)) \
                or not math.isfinite(damp) or damp <= 0:
            raise QuantizeError(f"--damp {damp!r}: expected a positive fraction of the "
                                "mean Hessian diagonal, e.g. 0.01")
    if act_order and not static_groups and not grid.per_channel \
            and "act_order" not in text:
        raise QuantizeError(
            f"--act-order with dynamic groups stores a group index (g_idx), which "
            f"'{encoding}' has not: use an encoding with act_order (#qf.enc<{text}, "
            "act_order>) or add --static-groups")
    if static_groups and grid.per_channel:
        raise QuantizeError(f"--static-groups: '{encoding}' has per-channel scales, not "
                            "groups")
    check_calibration(calibration, cfg.vocab_size)
    return seq_len


def _ready_artifacts(model, config_path, encoding, format, seq_len, chip, fp16_artifact,
                     gptq_artifact, decode_artifact):
    """The artifacts: given, or beside the model (compiled when missing).
    Returns (fp16, GPTQ, decode or None)."""
    chunk = calibration_chunk(seq_len)
    if fp16_artifact:
        fp16_artifact = _existing(fp16_artifact, "--fp16-artifact")
    else:
        fp16_artifact = ensure_artifact(
            os.path.join(model, FP16_ARTIFACT),
            model_compile_argv(config_path, "fp16", f"1,{chunk}"),
            prog="quantize", what="fp16 calibration artifact", flag="--fp16-artifact",
            model_dir=model, chip=chip, describe=f"--encoding fp16, --batch-sizes 1,{chunk}")
    _check_calibration_model(fp16_artifact, seq_len, chunk)
    if gptq_artifact:
        gptq_artifact = _existing(gptq_artifact, "--gptq-artifact")
    else:
        gptq_artifact = ensure_artifact(
            os.path.join(model, gptq_artifact_name(encoding)),
            gptq_compile_argv(config_path, encoding), prog="quantize",
            what=f"GPTQ artifact for --encoding {encoding}", flag="--gptq-artifact",
            model_dir=model, chip=chip, describe=f"--encoding {encoding}")
    if decode_artifact:
        decode_artifact = _existing(decode_artifact, "--decode-artifact")
    elif format == "qfuse":
        # The packed checkpoint holds exactly what the decode artifact binds.
        decode_artifact = ensure_artifact(
            os.path.join(model, decode_artifact_name(encoding)),
            model_compile_argv(config_path, encoding, DECODE_BATCH_SIZES),
            prog="quantize", what=f"decode artifact for --encoding {encoding} (--format "
                                  "qfuse)", flag="--decode-artifact", model_dir=model,
            chip=chip, describe=f"--encoding {encoding}, --batch-sizes {DECODE_BATCH_SIZES}")
    return fp16_artifact, gptq_artifact, decode_artifact


def _check_c_api_device(lib, device, artifacts):
    """A GPU for qfuse_quantize, and --device one of its devices."""
    from .runtime import NoDeviceError, require_gpu
    try:
        count = require_gpu(lib)
    except NoDeviceError as e:
        raise QuantizeError(f"qfuse_quantize needs a GPU: {e}. The artifacts are "
                            f"ready: {artifacts}") from None
    if device is not None and device >= count:
        raise QuantizeError(f"--device {device}: there {'is' if count == 1 else 'are'}"
                            f" {count} CUDA device{'' if count == 1 else 's'} here "
                            f"(0 to {count - 1})")


def _tool_with_gpu(no_library, artifacts):
    """qfuse-quantize's path, where the tool and a GPU are here."""
    try:
        tool = find_tool(TOOL)
    except ToolError as e:
        raise QuantizeError(
            f"no libqfuse_c.so to run GPTQ in this process ({no_library}), and {e}\n"
            f"Both are runtime builds (they need the CUDA toolkit: cmake --build <dir> "
            f"--target qfuse_c, or --target {TOOL}). The artifacts are ready: "
            f"{artifacts}; run this command where the library or the tool and a GPU "
            "are") from None
    problem = gpu_problem()
    if problem:
        raise QuantizeError(f"{TOOL} needs a GPU: {problem}. The artifacts are ready: "
                            f"{artifacts}")
    return tool


def _read_tool_report(report_path):
    """The tool's JSON report, or None where it wrote none (or not JSON)."""
    report = None
    if os.path.isfile(report_path):
        with open(report_path) as f:
            try:
                report = json.load(f)
            except json.JSONDecodeError:
                report = None
    return report


__all__ = ["DEFAULT_SEQ_LEN", "FORMATS", "QuantizeError", "VIA_C_API", "VIA_TOOL",
           "c_options", "calibration_chunk", "check_calibration", "gpu_problem",
           "quantize", "run_c_api", "tool_argv"]
