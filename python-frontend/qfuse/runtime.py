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
from collections.abc import Mapping
import os
import statistics
import sys
import threading
import time

from .artifact_set import variant_for_chip
from .tools import REPO_ROOT, build_dirs

try:
    import numpy
except ImportError:  # numpy is optional: bytes in and out without it
    numpy = None

LIBRARY = "libqfuse_c.so"
_DTYPES = {"f16": "float16", "f32": "float32", "i32": "int32", "bf16": None}
_DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4}
# qfuse_quantize's report buffer: per layer and module a few hundred bytes,
# so megabytes only for models of thousands of layers.
REPORT_CAPACITY = 16 << 20


class QfuseError(RuntimeError):
    """Base of the binding's errors; the message is the C API's."""


class LibraryNotFoundError(QfuseError):
    """libqfuse_c.so is not built or cannot be loaded."""


class NoDeviceError(QfuseError):
    """No CUDA device (or no driver): the call needs a GPU."""


class NotAvailableError(QfuseError):
    """The runtime does not offer this feature yet."""


class Sampling(ctypes.Structure):
    """qfuse_sampling (qfuse.h): temperature 0 is greedy."""
    _fields_ = [("temperature", ctypes.c_float),
                ("top_k", ctypes.c_int32),
                ("top_p", ctypes.c_float),
                ("min_p", ctypes.c_float),
                ("repetition_penalty", ctypes.c_float),
                ("seed", ctypes.c_uint64)]


TOKEN_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_void_p)


class GenerateStats(ctypes.Structure):
    """qfuse_generate_stats (qfuse.h)."""
    _fields_ = [("ttft_ms", ctypes.c_double),
                ("decode_ms", ctypes.c_double),
                ("decode_tokens_per_s", ctypes.c_double)]


def _candidates():
    if os.environ.get("QFUSE_C_LIBRARY"):
        return [os.environ["QFUSE_C_LIBRARY"]]  # explicit: nothing else
    paths = []
    for d in build_dirs():
        paths.append(os.path.join(d, "lib", LIBRARY))
    paths.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY))
    return paths


def _cuda_stub():
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")]
    for root in [r for r in roots if r] + ["/usr/local/cuda"]:
        for sub in ("lib64/stubs", "targets/x86_64-linux/lib/stubs", "lib/stubs"):
            path = os.path.join(root, sub, "libcuda.so")
            if os.path.exists(path):
                return path
    return None


class Library:
    """The loaded C API with its prototypes. `driver` is False when the CUDA
    toolkit's stub stands in for a missing driver. Candidates, in order:
    `path`, else $QFUSE_C_LIBRARY alone, else <build dir>/lib/libqfuse_c.so
    for $QFUSE_BUILD_DIR and the repository's build*/, else beside the package."""

    def __init__(self, path=None):
        tried = []
        candidates = [path] if path else _candidates()
        self.driver = True
        self.path = None
        for candidate in candidates:
            if not os.path.exists(candidate):
                tried.append(f"{candidate} (absent)")
                continue
            try:
                self.lib = ctypes.CDLL(candidate)
            except OSError as e:
                if "libcuda.so" not in str(e):
                    raise LibraryNotFoundError(f"{candidate} exists but cannot be "
                                               f"loaded: {e}") from None
                stub = _cuda_stub()
                if not stub:
                    raise LibraryNotFoundError(
                        f"{candidate} needs the NVIDIA driver (libcuda.so.1), which is "
                        "not installed here, and no CUDA toolkit stub was found to load "
                        "it for host-only use; run on a machine with a GPU") from None
                ctypes.CDLL(stub, mode=ctypes.RTLD_GLOBAL)
                self.lib = ctypes.CDLL(candidate)
                self.driver = False
            self.path = candidate
            break
        if self.path is None:
            raise LibraryNotFoundError(
                f"{LIBRARY} not found; tried {', '.join(tried)}. Build it (the runtime "
                "needs the CUDA toolkit: cmake --build <dir> --target qfuse_c) and set "
                "QFUSE_BUILD_DIR=<dir> or QFUSE_C_LIBRARY=<path>")
        self._prototypes()

    def _prototypes(self):
        L = self.lib
        c = ctypes
        sig = {
            "qfuse_artifact_version": (c.c_int, []),
            "qfuse_last_error": (c.c_char_p, []),
            "qfuse_validate_artifact": (c.c_int, [c.c_char_p]),
            "qfuse_canonical_encoding": (c.c_int, [c.c_char_p, c.c_char_p, c.c_size_t]),
            "qfuse_device_count": (c.c_int, []),
            "qfuse_open": (c.c_void_p, [c.c_char_p, c.c_int]),
            "qfuse_close": (None, [c.c_void_p]),
            "qfuse_target_chip": (c.c_int, [c.c_void_p, c.c_char_p, c.c_size_t]),
            "qfuse_load_weights": (c.c_int, [c.c_void_p, c.c_char_p]),
            "qfuse_bind_random_weights": (c.c_int, [c.c_void_p, c.c_uint64]),
            "qfuse_plan_batches": (c.c_int, [c.c_void_p, c.POINTER(c.c_int64), c.c_int]),
            "qfuse_buffer_bytes": (c.c_int64, [c.c_void_p, c.c_int64, c.c_char_p]),
            "qfuse_set_input": (c.c_int, [c.c_void_p, c.c_int64, c.c_char_p,
                                          c.c_void_p, c.c_size_t]),
            "qfuse_run": (c.c_int, [c.c_void_p, c.c_int64]),
            "qfuse_get_output": (c.c_int, [c.c_void_p, c.c_int64, c.c_char_p,
                                           c.c_void_p, c.c_size_t]),
            "qfuse_load_checkpoint": (c.c_int, [c.c_void_p, c.c_char_p, c.c_int]),
            "qfuse_generate": (c.c_int, [c.c_void_p, c.POINTER(c.c_int32), c.c_int64,
                                         c.c_int64, c.POINTER(c.c_int32),
                                         c.POINTER(GenerateStats)]),
            "qfuse_quantize": (c.c_int64, [c.c_char_p, c.c_char_p, c.c_size_t]),
            "qfuse_generate_ex": (c.c_int, [c.c_void_p, c.POINTER(c.c_int32), c.c_int64,
                                            c.c_int64, c.POINTER(Sampling),
                                            c.POINTER(c.c_int32), c.c_int64,
                                            TOKEN_CALLBACK, c.c_void_p,
                                            c.POINTER(c.c_int32), c.POINTER(c.c_int64),
                                            c.POINTER(GenerateStats)]),
            "qfuse_tokenizer_open": (c.c_void_p, [c.c_char_p]),
            "qfuse_tokenizer_close": (None, [c.c_void_p]),
            "qfuse_tokenizer_encode": (c.c_int64, [c.c_void_p, c.c_char_p, c.c_size_t,
                                                   c.c_int, c.POINTER(c.c_int32),
                                                   c.c_size_t]),
            "qfuse_tokenizer_decode": (c.c_void_p, [c.c_void_p, c.POINTER(c.c_int32),
                                                    c.c_size_t, c.c_int,
                                                    c.POINTER(c.c_size_t)]),
            "qfuse_tokenizer_chat": (c.c_void_p, [c.c_void_p, c.c_char_p, c.c_char_p,
                                                  c.POINTER(c.c_size_t)]),
            "qfuse_tokenizer_stop_ids": (c.c_int64, [c.c_void_p, c.c_int,
                                                     c.POINTER(c.c_int32), c.c_size_t]),
            "qfuse_text_stream_open": (c.c_void_p, [c.c_void_p]),
            "qfuse_text_stream_push": (c.c_void_p, [c.c_void_p, c.c_int32,
                                                    c.POINTER(c.c_size_t)]),
            "qfuse_text_stream_finish": (c.c_void_p, [c.c_void_p, c.POINTER(c.c_size_t)]),
            "qfuse_text_stream_close": (None, [c.c_void_p]),
        }
        for name, (restype, argtypes) in sig.items():
            try:
                fn = getattr(L, name)
            except AttributeError:
                raise LibraryNotFoundError(
                    f"{self.path} has no {name}: it is older than these bindings "
                    "(runtime/include/qfuse/runtime/qfuse.h); rebuild it (cmake "
                    "--build <dir> --target qfuse_c)") from None
            fn.restype = restype
            fn.argtypes = argtypes

    def error(self):
        return self.lib.qfuse_last_error().decode(errors="replace")

    def check(self, rc, what):
        if rc != 0:
            raise QfuseError(f"{what}: {self.error()}")

    # -- host-only calls ------------------------------------------------------
    def artifact_version(self):
        return self.lib.qfuse_artifact_version()

    def device_count(self):
        return self.lib.qfuse_device_count() if self.driver else 0

    def validate_artifact(self, path):
        self.check(self.lib.qfuse_validate_artifact(os.fsencode(path)), "validate")

    def canonical_encoding(self, text):
        out = ctypes.create_string_buffer(4096)
        self.check(self.lib.qfuse_canonical_encoding(text.encode(), out, len(out)),
                   "canonical_encoding")
        return out.value.decode()

    # -- GPTQ -----------------------------------------------------------------
    def quantize(self, options, capacity=REPORT_CAPACITY):
        """qfuse_quantize(options as JSON): GPTQ of a whole Hugging Face model
        on the GPU. Returns the report parsed from its JSON. The C function
        checks the options (unknown keys, types, the artifacts and the
        model directory) before it needs a GPU; its progress lines go to the
        process's stdout. The call blocks until the model is written."""
        if not isinstance(options, Mapping):
            raise QfuseError(f"quantize: options is a {type(options).__name__}, "
                             "expected a dict such as {\"model\": DIR, \"encoding\": "
                             "\"int4-g128\", \"calibration\": \"random:128\", "
                             "\"out\": OUTDIR}")
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 2:
            raise QfuseError(f"quantize: capacity is {capacity!r}, expected a number "
                             "of bytes (2 or more)")
        values = {str(k): os.fspath(v) if isinstance(v, os.PathLike) else v
                  for k, v in options.items()}
        try:
            text = json.dumps(values, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise QfuseError(f"quantize: the options cannot be written as JSON: {e}") \
                from None
        report = ctypes.create_string_buffer(capacity)
        _flush_stdout()
        try:
            n = self.lib.qfuse_quantize(text.encode(), report, capacity)
        finally:
            _flush_stdout()
        if n < 0:
            raise QfuseError(f"quantize: {self.error()}")
        if n >= capacity:
            raise QfuseError(
                f"quantize: qfuse_quantize's report is {n} bytes, more than the "
                f"{capacity}-byte buffer holds (the quantized checkpoint was written; "
                "only the report is lost, and it cannot be fetched again without "
                f"quantizing again: pass capacity={n + 1} or more)")
        data = ctypes.string_at(report, n).decode(errors="replace")
        try:
            return json.loads(data)
        except json.JSONDecodeError as e:
            raise QfuseError(f"quantize: qfuse_quantize's report is not JSON "
                             f"({e.lineno}:{e.colno}: {e.msg})") from None


def _text(lib, pointer, length, what):
    """The UTF-8 text a C call returned (pointer, length), or its error."""
    if not pointer:
        raise QfuseError(f"{what}: {lib.error()}")
    return ctypes.string_at(pointer, length.value).decode("utf-8")


_HANDLE_LOCK = threading.Lock()


class _Handle:
    """An object of the C API owned through `self.handle`: closed by
    `close()`, on leaving a `with` block, or when collected (once, whichever
    thread gets there first)."""

    _close = None  # the C function that frees the handle

    def close(self):
        with _HANDLE_LOCK:
            handle = getattr(self, "handle", None)
            self.handle = None
        if handle:
            getattr(self.lib.lib, self._close)(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


class Tokenizer(_Handle):
    """A model directory's tokenizer.json through the C API (host only, no GPU).

        tok = Tokenizer("DIR")
        ids = tok.encode("Hello")                 # BOS as tokenizer_config.json says
        text = tok.decode(ids, skip_special=True)
        prompt = tok.chat("Hi", system="Be brief.")   # the model's chat format
        stops = tok.stop_ids(chat=True)
        stream = tok.stream()                     # stream.push(id) -> text
    """

    _close = "qfuse_tokenizer_close"

    def __init__(self, model_dir, library=None):
        self.lib = library or load_library()
        self.model_dir = os.fspath(model_dir)
        self.handle = self.lib.lib.qfuse_tokenizer_open(os.fsencode(self.model_dir))
        if not self.handle:
            raise QfuseError(f"tokenizer {self.model_dir}: {self.lib.error()}")


    def encode(self, text, add_special=True):
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        capacity = len(data) + 16
        while True:
            out = (ctypes.c_int32 * capacity)()
            n = self.lib.lib.qfuse_tokenizer_encode(self.handle, data, len(data),
                                                    int(add_special), out, capacity)
            if n < 0:
                raise QfuseError(f"encode: {self.lib.error()}")
            if n <= capacity:
                return list(out[:n])
            capacity = n

    def decode(self, ids, skip_special=False):
        ids = [int(i) for i in ids]
        array = (ctypes.c_int32 * max(len(ids), 1))(*ids)
        length = ctypes.c_size_t()
        return _text(self.lib, self.lib.lib.qfuse_tokenizer_decode(
            self.handle, array, len(ids), int(skip_special), ctypes.byref(length)),
            length, "decode")

    def chat(self, user, system=None):
        """The prompt text in the model's chat format (encode it with
        add_special=False: it holds BOS where the format has one)."""
        length = ctypes.c_size_t()
        return _text(self.lib, self.lib.lib.qfuse_tokenizer_chat(
            self.handle, system.encode("utf-8") if system is not None else None,
            user.encode("utf-8"), ctypes.byref(length)), length, "chat")

    def stop_ids(self, chat=False):
        out = (ctypes.c_int32 * 64)()
        n = self.lib.lib.qfuse_tokenizer_stop_ids(self.handle, int(chat), out, 64)
        if n < 0:
            raise QfuseError(f"stop_ids: {self.lib.error()}")
        if n > 64:
            out = (ctypes.c_int32 * n)()
            n = self.lib.lib.qfuse_tokenizer_stop_ids(self.handle, int(chat), out, n)
        return list(out[:n])

    def stream(self):
        return TextStream(self)


class TextStream(_Handle):
    """Streaming decode: push(id) returns the text that became complete."""

    _close = "qfuse_text_stream_close"

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer  # kept alive while the stream is
        self.lib = tokenizer.lib
        self.handle = self.lib.lib.qfuse_text_stream_open(tokenizer.handle)
        if not self.handle:
            raise QfuseError(f"stream: {self.lib.error()}")

    def push(self, token):
        length = ctypes.c_size_t()
        return _text(self.lib, self.lib.lib.qfuse_text_stream_push(
            self.handle, int(token), ctypes.byref(length)), length, "stream push")

    def finish(self):
        length = ctypes.c_size_t()
        return _text(self.lib, self.lib.lib.qfuse_text_stream_finish(
            self.handle, ctypes.byref(length)), length, "stream finish")


def _flush_stdout():
    """Python's and C's stdout flushed, so that the C library's progress
    lines and Python's own output come out in order."""
    try:
        sys.stdout.flush()
    except (AttributeError, OSError, ValueError):
        pass
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


_library = None
_library_lock = threading.Lock()


def load_library(path=None):
    """The process's Library (loaded once, by the first thread to ask,
    unless `path` is given)."""
    global _library
    if path:
        return Library(path)
    with _library_lock:
        if _library is None:
            _library = Library()
        return _library


def require_gpu(lib=None):
    lib = lib or load_library()
    if not lib.driver:
        raise NoDeviceError("no NVIDIA driver here (libcuda.so.1 is missing; "
                            f"{lib.path} was loaded against the CUDA stub for host-only "
                            "calls): running an artifact needs a GPU")
    count = lib.device_count()
    if count <= 0:
        raise NoDeviceError("no CUDA device: qfuse_device_count() = 0; running an "
                            "artifact needs a GPU")
    return count


def quantize_model(options, library=None, capacity=REPORT_CAPACITY):
    """GPTQ of a whole Hugging Face model on the GPU through the C API's
    qfuse_quantize (docs/gptq.md); no Runtime needed. `options` is a dict:
    "model", "encoding", "calibration" ("random:N" or a JSON file of token
    id lists) and "out" are required; "format" ("qfuse",
    "compressed-tensors", "auto-gptq"), "seq_len", "fp16_artifact",
    "gptq_artifact", "decode_artifact", "damp", "act_order",
    "static_groups", "overwrite", "seed", "device", "resume" and
    "save_progress" are optional; an
    unknown key is an error (QfuseError with the C library's message). The
    artifacts must exist (qfuse.quantize compiles them first; it also checks
    the arguments and that there is a GPU). Returns the report (a dict: per
    layer and module the times, loss, damping and fallbacks)."""
    return (library or load_library()).quantize(options, capacity)


class Runtime(_Handle):
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
