"""A torch model as a Hugging Face model directory the qfuse tools read.

    from qfuse.torch_import import save_checkpoint
    save_checkpoint(hf_model, None, "out")      # config from hf_model.config
    save_checkpoint(model.state_dict(), config_dict, "out")
    # python3 -m qfuse compile --config out/config.json ..., generate --model out, ...

Writes DIR/model.safetensors (qfuse.safetensors, no safetensors package)
and DIR/config.json. torch itself is never imported: its tensors are read
through their own methods (to("cpu"), data_ptr()), one at a time as they
are written. A state dict of numpy arrays, or of (dtype, shape, bytes)
entries, needs neither torch nor numpy.
"""
import contextlib
import ctypes
import json
import os
import tempfile

from . import safetensors
from .atomic import write_json
from .model import ModelConfig

# str(torch dtype) and numpy dtype names -> safetensors dtype.
_TORCH_DTYPES = {
    "torch.float16": "F16", "torch.bfloat16": "BF16", "torch.float32": "F32",
    "torch.float64": "F64", "torch.int8": "I8", "torch.uint8": "U8",
    "torch.int16": "I16", "torch.int32": "I32", "torch.int64": "I64",
    "torch.bool": "BOOL", "torch.float8_e4m3fn": "F8_E4M3",
    "torch.float8_e5m2": "F8_E5M2", "torch.uint16": "U16", "torch.uint32": "U32",
    "torch.uint64": "U64",
}
_NUMPY_DTYPES = {"float16": "F16", "float32": "F32", "float64": "F64", "int8": "I8",
                 "uint8": "U8", "int16": "I16", "uint16": "U16", "int32": "I32",
                 "uint32": "U32", "int64": "I64", "uint64": "U64", "bool": "BOOL"}


class TorchImportError(ValueError):
    """A model, state dict or config that cannot be written as a checkpoint."""


def _is_torch_tensor(value):
    return type(value).__module__.startswith("torch") and hasattr(value, "data_ptr")


def _torch_entry(name, t):
    dtype = _TORCH_DTYPES.get(str(t.dtype))
    if dtype is None:
        raise TorchImportError(f"tensor '{name}': dtype {t.dtype} has no safetensors "
                               "equivalent qfuse reads")
    shape = list(t.shape)

    def data():
        # One tensor at a time on the host; the view keeps `host` alive.
        host = t.detach().to("cpu").contiguous()
        n = host.numel() * host.element_size()
        if n == 0:
            return b""
        return ctypes.string_at(host.data_ptr(), n)

    return dtype, shape, data


def _numpy_entry(name, a):
    dtype = _NUMPY_DTYPES.get(str(a.dtype))
    if dtype is None:
        raise TorchImportError(f"tensor '{name}': numpy dtype {a.dtype} has no "
                               "safetensors equivalent qfuse reads")
    return dtype, list(a.shape), lambda: a.copy(order="C").tobytes()


def state_entries(state):
    """{name: (dtype, shape, data)} from a state dict of torch tensors, numpy
    arrays or (dtype, shape, bytes) tuples. Tensors that share storage with
    an earlier one (a tied lm_head) are left out, as Hugging Face saves them."""
    entries, seen = {}, {}
    for name, value in state.items():
        if not isinstance(name, str):
            raise TorchImportError(f"state dict key {name!r} is not a string")
        if _is_torch_tensor(value):
            key = (value.device.type, value.data_ptr(), tuple(value.shape),
                   tuple(value.stride()), str(value.dtype))
            if value.numel() and key in seen:
                continue  # tied: the runtime reads it under seen[key]
            seen[key] = name
            entries[name] = _torch_entry(name, value)
        elif hasattr(value, "__array_interface__") and hasattr(value, "dtype"):
            entries[name] = _numpy_entry(name, value)
        elif isinstance(value, tuple) and len(value) == 3:
            entries[name] = value
        else:
            raise TorchImportError(f"tensor '{name}': {type(value).__name__} is not a "
                                   "torch tensor, a numpy array or (dtype, shape, bytes)")
    return entries


def _config_dict(model, config):
    """The config.json contents: `config` (dict, path, or an object with
    to_dict()), else model.config.to_dict()."""
    if config is None:
        config = getattr(model, "config", None)
        if config is None:
            raise TorchImportError(
                "no config: pass config= (a config.json dict or path) for a model "
                "without .config (a state dict or a plain nn.Module)")
    if hasattr(config, "to_dict"):
        config = config.to_dict()
    elif isinstance(config, (str, os.PathLike)):
        with open(config) as f:
            config = json.load(f)
    if not isinstance(config, dict):
        raise TorchImportError(f"config is a {type(config).__name__}; expected a dict, "
                               "a config.json path or an object with to_dict()")
    return config


def save_checkpoint(module_or_state_dict, config, out_dir):
    """Writes out_dir/model.safetensors and out_dir/config.json from a torch
    nn.Module (its state_dict()), a Hugging Face model (config from
    model.config when `config` is None) or a state dict. The config is
    checked as `compile` reads it (qfuse.model.ModelConfig) before anything
    is written. Returns out_dir."""
    model = module_or_state_dict
    raw = _config_dict(model, config)
    ModelConfig(raw, source=os.path.join(out_dir, "config.json"))
    if hasattr(model, "state_dict") and callable(model.state_dict):
        state = model.state_dict()
    elif isinstance(model, dict):
        state = model
    else:
        raise TorchImportError(f"{type(model).__name__} is neither a torch module nor a "
                               "state dict")
    entries = state_entries(state)
    if not entries:
        raise TorchImportError("the state dict has no tensors")
    os.makedirs(out_dir, exist_ok=True)
    safetensors.write(os.path.join(out_dir, "model.safetensors"), entries,
                      metadata={"format": "pt"})
    write_json(os.path.join(out_dir, "config.json"), raw, indent=2, default=str)
    return out_dir


@contextlib.contextmanager
def saved_model(model, config=None):
    """A temporary model directory holding `model` (removed afterwards)."""
    with tempfile.TemporaryDirectory(prefix="qfuse-model-") as tmp:
        yield save_checkpoint(model, config, tmp)


__all__ = ["TorchImportError", "save_checkpoint", "saved_model", "state_entries"]
