"""qfuse.safetensors (the format with the standard library) and
qfuse.torch_import.save_checkpoint: a model directory from a state dict,
an object with state_dict()/config, or a torch module (skipped without torch)."""
import json
import os
import struct
import unittest

from support import TINY_LLAMA, TempDirTestCase, run_cli
from qfuse import safetensors
from qfuse.model import ConfigError
from qfuse.safetensors import SafetensorsError, read_header, read_tensor
from qfuse.torch_import import TorchImportError, save_checkpoint

try:
    import numpy
except ImportError:
    numpy = None


class FakeConfig:
    def to_dict(self):
        return dict(TINY_LLAMA)


class FakeModel:
    """What save_checkpoint uses of a Hugging Face model."""
    config = FakeConfig()

    def state_dict(self):
        return {"model.norm.weight": ("F16", [256], bytes(range(256)) * 2),
                "lm_head.weight": ("BF16", [2, 3], b"\x01\x02" * 6)}


class Safetensors(TempDirTestCase):
    def test_layout(self):
        path = os.path.join(self.tmp, "t.safetensors")
        safetensors.write(path, {"a": ("F32", [2], struct.pack("<2f", 1.5, -2.0)),
                                 "b": ("I8", [3, 1], b"\x01\x02\x03"),
                                 "c": ("F16", [0, 4], b""),
                                 "d": ("U8", [2], lambda: b"\x07\x08")},
                          metadata={"format": "pt"})
        with open(path, "rb") as f:
            data = f.read()
        (n,) = struct.unpack("<Q", data[:8])
        self.assertEqual((8 + n) % 8, 0)  # the data starts 8-byte aligned
        header = json.loads(data[8:8 + n])
        self.assertEqual(header, {
            "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
            "b": {"dtype": "I8", "shape": [3, 1], "data_offsets": [8, 11]},
            "c": {"dtype": "F16", "shape": [0, 4], "data_offsets": [11, 11]},
            "d": {"dtype": "U8", "shape": [2], "data_offsets": [11, 13]},
            "__metadata__": {"format": "pt"}})
        self.assertEqual(data[8 + n:], struct.pack("<2f", 1.5, -2.0) + b"\x01\x02\x03\x07\x08")
        self.assertEqual(read_header(path), header)
        self.assertEqual(read_tensor(path, "b"), ("I8", [3, 1], b"\x01\x02\x03"))

    def test_errors(self):
        path = os.path.join(self.tmp, "t.safetensors")
        cases = [
            ({"a": ("F32", [3], bytes(8))}, "tensor 'a': 8 bytes given, but shape \\[3\\] "
                                            "of F32 needs 12"),
            ({"a": ("F12", [1], bytes(2))}, "tensor 'a': dtype 'F12' is not one of"),
            ({"__metadata__": ("U8", [1], b"x")}, "reserved"),
            ({"a": ("U8", [2], lambda: b"x")}, "1 bytes given"),
        ]
        for tensors, pattern in cases:
            with self.subTest(tensors=list(tensors)):
                with self.assertRaisesRegex(SafetensorsError, pattern):
                    safetensors.write(path, tensors)
                self.assertEqual(os.listdir(self.tmp), [])  # no partial file left


class SaveCheckpoint(TempDirTestCase):
    def test_object_with_config_and_state_dict(self):
        out = os.path.join(self.tmp, "model")
        self.assertEqual(save_checkpoint(FakeModel(), None, out), out)
        self.assertEqual(sorted(os.listdir(out)), ["config.json", "model.safetensors"])
        with open(os.path.join(out, "config.json")) as f:
            self.assertEqual(json.load(f), TINY_LLAMA)
        st = os.path.join(out, "model.safetensors")
        self.assertEqual(read_header(st)["__metadata__"], {"format": "pt"})
        self.assertEqual(read_tensor(st, "lm_head.weight"), ("BF16", [2, 3], b"\x01\x02" * 6))

    def test_state_dict_and_config(self):
        out = os.path.join(self.tmp, "m")
        config = self.write_config(TINY_LLAMA)
        state = {"model.norm.weight": ("F16", [256], bytes(512))}
        if numpy is not None:
            state["model.embed_tokens.weight"] = numpy.arange(12, dtype=numpy.float16
                                                              ).reshape(3, 4).T
        save_checkpoint(state, config, out)
        st = os.path.join(out, "model.safetensors")
        if numpy is not None:
            dtype, shape, data = read_tensor(st, "model.embed_tokens.weight")
            self.assertEqual((dtype, shape), ("F16", [4, 3]))
            self.assertEqual(data, numpy.arange(12, dtype=numpy.float16).reshape(3, 4)
                             .T.copy().tobytes())  # C order, not the strided view
        # emit (and so compile) reads the written config.
        proc = run_cli("emit", "--config", os.path.join(out, "config.json"), "--layers", "1")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_errors(self):
        out = os.path.join(self.tmp, "m")
        state = {"w": ("F16", [1], bytes(2))}
        with self.assertRaisesRegex(TorchImportError, "no config: pass config="):
            save_checkpoint(state, None, out)
        with self.assertRaisesRegex(ConfigError,
                                    'field \'hidden_act\' is "gelu", which is not supported'):
            save_checkpoint(state, dict(TINY_LLAMA, hidden_act="gelu"), out)
        with self.assertRaisesRegex(TorchImportError, "tensor 'w': list is not a torch "
                                    "tensor, a numpy array or"):
            save_checkpoint({"w": [1, 2]}, TINY_LLAMA, out)
        with self.assertRaisesRegex(TorchImportError, "has no tensors"):
            save_checkpoint({}, TINY_LLAMA, out)
        self.assertFalse(os.path.exists(out))  # nothing written for any of them


class TorchModule(TempDirTestCase):
    def setUp(self):
        super().setUp()
        try:
            import torch
        except ImportError as e:
            self.skipTest(f"torch is not importable here ({e}): the torch module import "
                          "is tested where it is installed")
        self.torch = torch

    def test_module_with_tied_lm_head(self):
        torch = self.torch
        nn = torch.nn

        class Tiny(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = nn.Module()
                self.model.embed_tokens = nn.Embedding(1024, 256)
                self.model.norm = nn.Module()
                self.model.norm.weight = nn.Parameter(torch.ones(256, dtype=torch.bfloat16))
                self.lm_head = nn.Linear(256, 1024, bias=False)
                self.lm_head.weight = self.model.embed_tokens.weight  # tied
                self.model.embed_tokens.half()

        module = Tiny()
        out = os.path.join(self.tmp, "m")
        save_checkpoint(module, dict(TINY_LLAMA, tie_word_embeddings=True), out)
        st = os.path.join(out, "model.safetensors")
        header = read_header(st)
        self.assertEqual(sorted(k for k in header if k != "__metadata__"),
                         ["model.embed_tokens.weight", "model.norm.weight"])
        dtype, shape, data = read_tensor(st, "model.embed_tokens.weight")
        self.assertEqual((dtype, shape), ("F16", [1024, 256]))
        self.assertEqual(data, module.model.embed_tokens.weight.detach().numpy().tobytes())
        dtype, shape, data = read_tensor(st, "model.norm.weight")
        self.assertEqual((dtype, shape, data), ("BF16", [256], b"\x80\x3f" * 256))


if __name__ == "__main__":
    unittest.main()
