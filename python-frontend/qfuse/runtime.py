"""ctypes bindings over the runtime's C API (runtime/include/qfuse/runtime/qfuse.h).

    from qfuse.runtime import Runtime
    with Runtime("model.qfa") as rt:
        rt.bind_random_weights(1234)          # or rt.load_weights("w.safetensors")
        rt.set_input(1, "hidden", x)          # numpy array (or bytes)
        rt.run(1)
        y = rt.get_output(1, "model.layers.0.q_proj.out")
        print(rt.benchmark(1, iterations=50))

    # A whole model (docs/decode-model.md) from a Hugging Face checkpoint:
    with Runtime("DIR/qfuse-int4-g128.qfa") as rt:
        rt.load_checkpoint("DIR")             # quantized at load
        # (or rt.load_checkpoint(hf_model): a torch model, saved to a temp dir)
        tokens, stats = rt.generate([128000, 791, 6864], 64)

    # Text (docs/text-generation.md): the model's tokenizer, host only.
    from qfuse.runtime import Tokenizer
    tok = Tokenizer("DIR")
    ids = tok.encode(tok.chat("Hi"), add_special=False)
    stream = tok.stream()
    tokens, stats = rt.generate_stream(ids, 64, {"temperature": 0.7, "seed": 1},
                                       tok.stop_ids(chat=True),
                                       lambda t: print(stream.push(t), end=""))

    # GPTQ of a whole model on the GPU (docs/gptq.md; no Runtime needed):
    from qfuse.runtime import quantize_model
    report = quantize_model({"model": "DIR", "encoding": "int4-g128",
                             "calibration": "random:128", "out": "DIR-int4"})

The library is libqfuse_c.so: $QFUSE_C_LIBRARY, else $QFUSE_BUILD_DIR/lib, else
the repository's build*/lib. It links the CUDA driver (libcuda.so.1); where
no driver is installed, the CUDA toolkit's stub is loaded in its place so
that the host-only calls (artifact_version, validate_artifact,
canonical_encoding, device_count = 0) still work, and opening a runtime
says that no GPU is there.

Threads (runtime/include/qfuse/runtime/qfuse.h, "Threads"; docs/threads.md):
ctypes releases the GIL during each C call, so objects on different threads
run at once. Calls on one Runtime, Tokenizer or TextStream are serialized by
the C library; a sequence of them (set_input, run, get_output) is not, so
threads sharing a Runtime hold a lock around theirs or use a Runtime each.
Errors are per thread; close() may race with itself, not with other calls.
"""
import ctypes
import json
import os
import statistics
import time

from .artifact_set import variant_for_chip
from .c_library import (LIBRARY, REPORT_CAPACITY, TOKEN_CALLBACK, GenerateStats,  # noqa: F401
                        Handle, Library, LibraryNotFoundError, NoDeviceError,
                        NotAvailableError, QfuseError, Sampling, load_library,
                        quantize_model, require_gpu)
from .tokenizer import TextStream, Tokenizer  # noqa: F401
from .tools import REPO_ROOT  # noqa: F401

try:
    import numpy
except ImportError:  # numpy is optional: bytes in and out without it
    numpy = None

_DTYPES = {"f16": "float16", "f32": "float32", "i32": "int32", "bf16": None}
_DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4}


class Runtime(Handle):
    """An artifact loaded on a device, with its weights and buffers. Of an
    artifact set it runs the device's variant: `chip` says which, `meta` is
    that variant."""

    _close = "qfuse_close"

    def __init__(self, artifact, device=0, library=None):
        self.lib = library or load_library()
        self.artifact_path = os.fspath(artifact)
        self.meta = _read_artifact(self.artifact_path)
        self.lib.validate_artifact(self.artifact_path)
        require_gpu(self.lib)
        self.handle = self.lib.lib.qfuse_open(os.fsencode(self.artifact_path), device)
        if not self.handle:
            raise QfuseError(f"open {self.artifact_path}: {self.lib.error()}")
        chip = ctypes.create_string_buffer(64)
        self.lib.check(self.lib.lib.qfuse_target_chip(self.handle, chip, len(chip)),
                       "target_chip")
        self.chip = chip.value.decode()
        self.meta = variant_for_chip(self.meta, self.chip)


    # -- weights --------------------------------------------------------------
    def load_weights(self, safetensors_path):
        self.lib.check(self.lib.lib.qfuse_load_weights(self.handle,
                                                       os.fsencode(safetensors_path)),
                       "load_weights")

    def bind_random_weights(self, seed=1234):
        self.lib.check(self.lib.lib.qfuse_bind_random_weights(self.handle, seed),
                       "bind_random_weights")

    def load_checkpoint(self, model_dir, threads=0, config=None):
        """Binds every weight from a Hugging Face checkpoint directory
        (config.json, model.safetensors or an index and its shards),
        quantized with round-to-nearest into the artifact's encodings (or
        converted from AutoGPTQ / compressed-tensors). threads=0: every core.
        `model_dir` may also be a torch module or state dict (with `config`
        or its model.config), saved to a temporary directory first."""
        if not isinstance(threads, int) or threads < 0:
            raise QfuseError(f"load_checkpoint: threads is {threads!r}, expected 0 "
                             "(every core) or more")
        if not isinstance(model_dir, (str, bytes, os.PathLike)):
            from .torch_import import saved_model
            with saved_model(model_dir, config) as path:
                return self.load_checkpoint(path, threads)
        self.lib.check(self.lib.lib.qfuse_load_checkpoint(self.handle,
                                                          os.fsencode(model_dir), threads),
                       "load_checkpoint")

    def generate(self, prompt_ids, max_new_tokens):
        """Greedy generation of `max_new_tokens` after `prompt_ids` (a new
        sequence at position 0) on a whole-model artifact. Returns (tokens,
        stats): the new ids as a list of ints, and {"ttft_ms", "decode_ms",
        "decode_tokens_per_s"} (CUDA event times; decode_tokens_per_s is 0
        when max_new_tokens is 1)."""
        prompt = [int(t) for t in prompt_ids]
        if not isinstance(max_new_tokens, int) or max_new_tokens < 0:
            raise QfuseError(f"generate: max_new_tokens is {max_new_tokens!r}, expected "
                             "0 or more")
        for t in prompt:
            if not -2**31 <= t < 2**31:
                raise QfuseError(f"generate: prompt id {t} does not fit in an int32")
        prompt_array = (ctypes.c_int32 * max(len(prompt), 1))(*prompt)
        out = (ctypes.c_int32 * max(max_new_tokens, 1))()
        stats = GenerateStats()
        self.lib.check(self.lib.lib.qfuse_generate(self.handle, prompt_array, len(prompt),
                                                   max_new_tokens, out,
                                                   ctypes.byref(stats)),
                       "generate")
        return (list(out[:max_new_tokens]),
                {"ttft_ms": stats.ttft_ms, "decode_ms": stats.decode_ms,
                 "decode_tokens_per_s": stats.decode_tokens_per_s})

    def generate_stream(self, prompt_ids, max_new_tokens, sampling=None, stop_ids=(),
                        on_token=None):
        """Generation with sampling (a dict of temperature, top_k, top_p,
        min_p, repetition_penalty, seed; None: greedy), stop ids (generation
        ends after one, which is kept) and on_token(id) called as each token
        arrives (return False to stop). Returns (tokens, stats)."""
        prompt = [int(t) for t in prompt_ids]
        if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise QfuseError(f"generate: max_new_tokens is {max_new_tokens!r}, expected "
                             "1 or more")
        s = None
        if sampling:
            known = {"temperature", "top_k", "top_p", "min_p", "repetition_penalty",
                     "seed"}
            unknown = set(sampling) - known
            if unknown:
                raise QfuseError(f"generate: unknown sampling option {sorted(unknown)[0]!r} "
                                 f"({', '.join(sorted(known))})")
            s = Sampling(0.0, 0, 1.0, 0.0, 1.0, 0)
            for k, v in sampling.items():
                setattr(s, k, v)
        stops = [int(t) for t in stop_ids]
        prompt_array = (ctypes.c_int32 * max(len(prompt), 1))(*prompt)
        stop_array = (ctypes.c_int32 * max(len(stops), 1))(*stops)
        out = (ctypes.c_int32 * max_new_tokens)()
        n_out = ctypes.c_int64()
        stats = GenerateStats()
        error = []

        def call(token, _user):
            try:
                return 0 if on_token(token) is False else 1
            except BaseException as e:  # surfaces after the C call returns
                error.append(e)
                return 0

        callback = TOKEN_CALLBACK(call) if on_token else TOKEN_CALLBACK()
        rc = self.lib.lib.qfuse_generate_ex(
            self.handle, prompt_array, len(prompt), max_new_tokens,
            ctypes.byref(s) if s else None, stop_array, len(stops), callback, None,
            out, ctypes.byref(n_out), ctypes.byref(stats))
        if error:
            raise error[0]
        self.lib.check(rc, "generate")
        return (list(out[:n_out.value]),
                {"ttft_ms": stats.ttft_ms, "decode_ms": stats.decode_ms,
                 "decode_tokens_per_s": stats.decode_tokens_per_s})

    def teacher_forced_logits(self, token_ids, chunks):
        """The logits at every position of one sequence fed as given (teacher
        forcing), on a whole-model artifact (docs/decode-model.md): chunk i
        = (batch, rows) runs the next `rows` ids through the plan for
        `batch` rows (rows <= batch; the rest are padding rows of token 0 at
        the positions after them, as the Generator pads a prompt's last
        chunk: a later chunk rewrites their cache rows before anything reads
        them), from position 0. Prefill chunks then (1, 1) decode steps.
        Returns a float32 array [len(token_ids), vocab] of the real rows.
        Plans run one by one (qfuse_run, no graphs); the caches carry over
        from chunk to chunk, so a new sequence starts at position 0."""
        if numpy is None:
            raise NotAvailableError("teacher_forced_logits needs numpy")
        ids = numpy.asarray(token_ids, dtype=numpy.int64).ravel()
        plan = [(int(b), int(r)) for b, r in chunks]
        batches = set(self.plan_batches())
        if sum(r for _, r in plan) != len(ids):
            raise QfuseError(f"teacher_forced_logits: the chunks cover "
                             f"{sum(r for _, r in plan)} rows, the sequence has "
                             f"{len(ids)} tokens")
        model = self.meta.get("model") or {}
        vocab, max_seq = model.get("vocab_size"), model.get("max_seq")
        if not vocab or not max_seq:
            raise QfuseError(f"teacher_forced_logits: {self.artifact_path} has no "
                             "\"model\" object (a whole-model artifact has one)")
        if len(ids) and (ids.min() < 0 or ids.max() >= vocab):
            raise QfuseError(f"teacher_forced_logits: token ids must be in [0, {vocab})")
        out, position = [], 0
        for batch, rows in plan:
            if batch not in batches:
                raise QfuseError(f"teacher_forced_logits: no plan for batch {batch} "
                                 f"(the artifact has {sorted(batches)})")
            if not 1 <= rows <= batch:
                raise QfuseError(f"teacher_forced_logits: chunk ({batch}, {rows}): "
                                 "expected 1 <= rows <= batch")
            if position + batch > max_seq:
                raise QfuseError(f"teacher_forced_logits: positions {position}.."
                                 f"{position + batch - 1} exceed max_seq {max_seq}")
            chunk = numpy.zeros(batch, dtype=numpy.int32)
            chunk[:rows] = ids[position:position + rows]
            self.set_input(batch, "input_ids", chunk)
            self.set_input(batch, "positions",
                           numpy.arange(position, position + batch, dtype=numpy.int32))
            self.run(batch)
            logits = self.get_output(batch, "logits")
            out.append(numpy.asarray(logits, dtype=numpy.float32)
                       .reshape(batch, vocab)[:rows])
            position += rows
        return numpy.concatenate(out) if out else numpy.zeros((0, vocab), numpy.float32)

    # -- buffers --------------------------------------------------------------
    def plan_batches(self):
        out = (ctypes.c_int64 * 64)()
        n = self.lib.lib.qfuse_plan_batches(self.handle, out, 64)
        if n < 0:
            raise QfuseError(f"plan_batches: {self.lib.error()}")
        return list(out[:min(n, 64)])

    def buffer_bytes(self, batch, name):
        n = self.lib.lib.qfuse_buffer_bytes(self.handle, batch, name.encode())
        if n < 0:
            raise QfuseError(f"buffer_bytes: {self.lib.error()}")
        return n

    @property
    def inputs(self):
        return list(self.meta.get("inputs", []))

    @property
    def outputs(self):
        return list(self.meta.get("outputs", []))

    def buffer_spec(self, name):
        for b in self.meta.get("buffers", []):
            if b.get("name") == name:
                return b
        raise QfuseError(f"no buffer '{name}' in {self.artifact_path}; it has "
                         + ", ".join(b.get("name", "?") for b in self.meta.get("buffers", [])))

    def set_input(self, batch, name, data):
        """`data`: a numpy array (converted to the buffer's dtype) or bytes."""
        if numpy is not None and isinstance(data, numpy.ndarray):
            np_dtype = _DTYPES.get(self.buffer_spec(name).get("dtype"))
            if np_dtype:
                data = data.astype(np_dtype, copy=False)
            data = numpy.ascontiguousarray(data).tobytes()
        data = bytes(data)
        self.lib.check(self.lib.lib.qfuse_set_input(self.handle, batch, name.encode(),
                                                    data, len(data)),
                       f"set_input '{name}'")

    def run(self, batch):
        self.lib.check(self.lib.lib.qfuse_run(self.handle, batch), f"run batch {batch}")

    def get_output(self, batch, name, raw=False):
        """A numpy array shaped as the artifact says (bytes without numpy,
        with raw=True, or for bf16)."""
        size = self.buffer_bytes(batch, name)
        out = ctypes.create_string_buffer(size)
        self.lib.check(self.lib.lib.qfuse_get_output(self.handle, batch, name.encode(),
                                                     out, size),
                       f"get_output '{name}'")
        data = out.raw
        if raw or numpy is None:
            return data
        spec = self.buffer_spec(name)
        np_dtype = _DTYPES.get(spec.get("dtype"))
        if not np_dtype:
            return data
        shape = [batch if d == "M" else d for d in spec.get("shape", [])]
        array = numpy.frombuffer(data, dtype=np_dtype)
        return array.reshape(shape) if shape and all(isinstance(d, int) for d in shape) \
            else array

    def benchmark(self, batch, iterations=20, warmup=3):
        """Host-timed qfuse_run (each call synchronizes): median and spread in
        microseconds. Includes launch and synchronization overhead; the
        rotating-weights, CUDA-graph timing of the benchmarks is qfuse-bench's."""
        for _ in range(warmup):
            self.run(batch)
        samples = []
        for _ in range(iterations):
            start = time.perf_counter()
            self.run(batch)
            samples.append((time.perf_counter() - start) * 1e6)
        return {"batch": batch, "iterations": iterations,
                "median_us": statistics.median(samples), "min_us": min(samples),
                "max_us": max(samples), "samples_us": samples,
                "timing": "host wall clock around qfuse_run (synchronous)"}


def random_inputs(runtime, batch, seed=0):
    """Random values in [-1, 1) for every input buffer (numpy needed)."""
    if numpy is None:
        raise NotAvailableError("random inputs need numpy (python3-numpy)")
    rng = numpy.random.default_rng(seed)
    for name in runtime.inputs:
        spec = runtime.buffer_spec(name)
        dtype = spec.get("dtype")
        n = runtime.buffer_bytes(batch, name) // _DTYPE_BYTES.get(dtype, 2)
        if dtype == "i32":
            runtime.set_input(batch, name, rng.integers(0, 100, n, dtype=numpy.int32))
        elif dtype in ("f16", "f32"):
            runtime.set_input(batch, name, rng.uniform(-1, 1, n).astype(_DTYPES[dtype]))
        else:
            raise NotAvailableError(f"random input for dtype {dtype} ('{name}')")


def _read_artifact(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise QfuseError(f"artifact '{path}': cannot open: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise QfuseError(f"artifact '{path}':{e.lineno}:{e.colno}: not JSON: {e.msg}") from None


__all__ = ["GenerateStats", "Library", "Sampling", "TextStream", "Tokenizer", "LibraryNotFoundError", "NoDeviceError",
           "NotAvailableError", "QfuseError", "REPORT_CAPACITY", "Runtime",
           "load_library", "quantize_model", "random_inputs", "require_gpu",
           "REPO_ROOT"]
