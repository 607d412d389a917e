"""bench/decode_step_ir.py is a wrapper over qfuse.decode_step whose output
has not changed (bench/make-artifacts.sh depends on it byte for byte)."""
import hashlib
import os
import subprocess
import sys
import unittest

from support import REPO
from qfuse import decode_step

SCRIPT = os.path.join(REPO, "bench", "decode_step_ir.py")

# sha256 of the script's output before it became a wrapper.
GOLDEN = {
    ("--model", "llama3-8b", "--encoding", "int4-g128", "--batch", "1"):
        "0bdb8541d4f1f4216401328243a3fecd161177dfac4da4e84a7ec978f4bc50ed",
    ("--model", "qwen2.5-1.5b", "--encoding", "nf4", "--batch", "4", "--full-step"):
        "eb3065726b8aef5c30474d6ceb3a7e1ad123a5e6d1265ab00471b9d57e0aa35e",
    ("--model", "llama3-8b", "--encoding", "sparse24-f16", "--batch", "1", "--only",
     "lm_head"): "7dbb85be78ffb02490e04f79894f49354db87824cdc8ed3546e4f3626de5f88c",
    ("--model", "qwen2.5-1.5b", "--list-shapes"):
        "745dee027dcc41cfa5d1243cdd09d46adf23044211deac4cb1ae3215680a1306",
    ("--model", "llama3-8b", "--encoding", "mxfp4", "--batch", "4", "--full-step"):
        "d5b27765dfa1115bc4507c49897cb55d6eb6ab543a45fc5631bff4220edcb60e",
}


def run(*args):
    proc = subprocess.run([sys.executable, SCRIPT] + list(args), capture_output=True)
    return proc


@unittest.skipUnless(os.path.exists(SCRIPT), "bench/decode_step_ir.py not in this checkout")
class DecodeStepIR(unittest.TestCase):
    def test_output_unchanged(self):
        for args, digest in GOLDEN.items():
            with self.subTest(args=" ".join(args)):
                proc = run(*args)
                self.assertEqual(proc.returncode, 0, proc.stderr.decode())
                self.assertEqual(hashlib.sha256(proc.stdout).hexdigest(), digest)

    def test_same_text_as_the_package(self):
        proc = run("--model", "llama3-8b", "--encoding", "nvfp4", "--batch", "2")
        projs = decode_step.reference_projections("llama3-8b")
        self.assertEqual(proc.stdout.decode(),
                         decode_step.emit_shapes("llama3-8b", projs, "nvfp4", 2))
        self.assertIn(b"#enc = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>",
                      proc.stdout)

    def test_as_model_wires_each_layer_as_a_model(self):
        proc = run("--model", "qwen2.5-1.5b", "--encoding", "int4-g128", "--batch", "3",
                   "--full-step", "--as-model")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        text = proc.stdout.decode()
        layers = decode_step.MODELS["qwen2.5-1.5b"][4]
        self.assertEqual(text.count("qf.silu_mul"), layers)
        self.assertIn("%y0 = qf.matmul %x0, %w0", text)             # q
        self.assertIn("%y3 = qf.matmul %o0, %w3", text)             # o
        self.assertIn("%y4 = qf.matmul %p0, %w4", text)             # gate
        self.assertIn("%act0 = qf.silu_mul %y4, %y5 : tensor<3x8960xf16>", text)
        self.assertIn("%y6 = qf.matmul %act0, %w6", text)           # down
        self.assertIn("%y7 = qf.matmul %x1, %w7", text)             # next layer's q
        self.assertIn("qf.matmul %h, %wl", text)                    # lm_head
        # gate and up feed silu_mul only; down and the others are returned.
        ret = text.splitlines()[-2]
        self.assertNotIn("%y4,", ret)
        self.assertIn("%y6,", ret)

    def test_as_model_needs_the_full_step(self):
        proc = run("--model", "llama3-8b", "--encoding", "int4-g128", "--as-model")
        self.assertEqual(proc.returncode, 2)
        self.assertIn(b"--as-model goes with --full-step", proc.stderr)

    def test_bad_encoding_lists_the_names(self):
        proc = run("--model", "llama3-8b", "--encoding", "int3")
        self.assertEqual(proc.returncode, 2)
        self.assertIn(b"unknown encoding 'int3'", proc.stderr)
        self.assertIn(b"int4-g128", proc.stderr)


if __name__ == "__main__":
    unittest.main()
