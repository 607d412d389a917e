"""libqfuse_c.so loaded with its prototypes (runtime/include/qfuse/runtime/qfuse.h):
the binding's errors and C structures, the host-only calls, qfuse_quantize,
and the base of the objects the C API owns through a handle.

The library is libqfuse_c.so: $QFUSE_C_LIBRARY, else $QFUSE_BUILD_DIR/lib, else
the repository's build*/lib. Where no CUDA driver is installed, the CUDA
toolkit's stub is loaded in its place for the host-only calls.
"""
import ctypes
import json
from collections.abc import Mapping
import os
import sys
import threading

from .tools import build_dirs

LIBRARY = "libqfuse_c.so"
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



_HANDLE_LOCK = threading.Lock()


class Handle:
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


__all__ = ["GenerateStats", "Handle", "LIBRARY", "Library", "LibraryNotFoundError",
           "NoDeviceError", "NotAvailableError", "QfuseError", "REPORT_CAPACITY",
           "Sampling", "TOKEN_CALLBACK", "load_library", "quantize_model", "require_gpu"]
