"""The safetensors format with the standard library: write and read the header.

    write("model.safetensors", {"w": ("F16", [2, 3], raw_bytes)},
          metadata={"format": "pt"})
    header = read_header("model.safetensors")   # {"w": {"dtype", "shape", ...}}

Layout (as runtime/src/checkpoint/Safetensors.cpp reads it): an 8-byte little-endian
header length, the header JSON (name -> dtype, shape, data_offsets
[begin, end) relative to the data, and "__metadata__": string -> string),
padded with spaces to 8 bytes, then the tensors' bytes back to back.
"""
import json
import struct

from .atomic import atomic_open

# Bytes per element of each safetensors dtype (F4: two per byte).
DTYPE_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1,
               "F8_E8M0": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4,
               "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}
METADATA = "__metadata__"


class SafetensorsError(ValueError):
    """A tensor whose dtype, shape and bytes disagree, or a malformed file."""


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _check_size(name, dtype, shape, data, expected):
    size = memoryview(data).nbytes
    if size != expected:
        raise SafetensorsError(f"tensor '{name}': {size} bytes given, but shape "
                               f"{list(shape)} of {dtype} needs {expected}")


def write(path, tensors, metadata=None):
    """Writes `tensors` ({name: (dtype, shape, data)}, in order) to `path`.
    `data` is bytes-like, or a callable returning it when the tensor is
    written (so that a model is not copied to host memory all at once). Each
    tensor's byte count must match its dtype and shape."""
    header, offset = {}, 0
    items = list(tensors.items())
    for name, (dtype, shape, data) in items:
        if name == METADATA:
            raise SafetensorsError(f"'{METADATA}' is a reserved name")
        if dtype not in DTYPE_BYTES:
            raise SafetensorsError(f"tensor '{name}': dtype {dtype!r} is not one of "
                                   + " ".join(sorted(DTYPE_BYTES)))
        shape = [int(d) for d in shape]
        if any(d < 0 for d in shape):
            raise SafetensorsError(f"tensor '{name}': shape {shape} has a negative extent")
        size = _count(shape) * DTYPE_BYTES[dtype]
        if not callable(data):
            _check_size(name, dtype, shape, data, size)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + size]}
        offset += size
    if metadata:
        header[METADATA] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    # Written beside it and renamed (qfuse.atomic): a failure leaves no
    # partial file at `path`, and an earlier one unchanged.
    with atomic_open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for name, (dtype, shape, data) in items:
            if callable(data):
                begin, end = header[name]["data_offsets"]
                data = data()
                _check_size(name, dtype, shape, data, end - begin)
            try:
                f.write(data)
            except OSError as e:  # names the path (qfuse.atomic)
                raise SafetensorsError(f"tensor '{name}': {e.strerror}") from None


def read_header(path):
    """The header of a safetensors file as a dict (tensors and __metadata__)."""
    with open(path, "rb") as f:
        prefix = f.read(8)
        if len(prefix) != 8:
            raise SafetensorsError(f"{path}: shorter than the 8-byte header length")
        (n,) = struct.unpack("<Q", prefix)
        text = f.read(n)
    if len(text) != n:
        raise SafetensorsError(f"{path}: header of {n} bytes is cut short")
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SafetensorsError(f"{path}: header is not JSON: {e}") from None


def read_tensor(path, name):
    """(dtype, shape, bytes) of one tensor."""
    header = read_header(path)
    if name not in header or name == METADATA:
        raise SafetensorsError(f"{path}: no tensor '{name}'")
    entry = header[name]
    begin, end = entry["data_offsets"]
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        f.seek(8 + n + begin)
        return entry["dtype"], entry["shape"], f.read(end - begin)


__all__ = ["DTYPE_BYTES", "SafetensorsError", "read_header", "read_tensor", "write"]
