"""python3 -m qfuse: the commands end to end, and their errors."""
import os
import unittest

from support import QWEN25_1_5B, TINY_LLAMA, TempDirTestCase, run_cli, tool_or_skip


class Cli(TempDirTestCase):
    def test_help_lists_the_commands(self):
        proc = run_cli("--help")
        self.assertEqual(proc.returncode, 0)
        for cmd in ("emit", "compile", "compile-gptq", "report", "run", "bench", "generate",
                    "quantize", "tune"):
            self.assertIn(cmd, proc.stdout)

    def test_emit_to_stdout_and_file(self):
        path = self.write_config(TINY_LLAMA)
        proc = run_cli("emit", "--config", path, "--layers", "1", "--batch", "2")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("func.func @decode_step(%ids: tensor<2xi32>", proc.stdout)
        self.assertEqual(proc.stderr, "")  # no progress bar without a terminal
        out = os.path.join(self.tmp, "m.mlir")
        proc = run_cli("emit", "--config", path, "--encoding", "nf4", "--override",
                       "lm_head=fp16", "--override", "down_proj=int8", "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            text = f.read()
        self.assertIn("#nf4_g64", text)
        self.assertIn("#int8_pc", text)
        self.assertIn('qf.weight_ref "lm_head" : !qf.weight<1024x256, #f16>', text)

    def test_emit_verify(self):
        tool_or_skip(self, "qfuse-opt")
        out = os.path.join(self.tmp, "m.mlir")
        proc = run_cli("emit", "--config", self.write_config(QWEN25_1_5B), "--layers", "2",
                       "--max-seq", "256", "-o", out, "--verify")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("verifies with qfuse-opt", proc.stderr)

    def test_errors(self):
        path = self.write_config(TINY_LLAMA)
        cases = [
            (["emit", "--config", path, "--encoding", "int3"], "unknown encoding 'int3'"),
            (["emit", "--config", path, "--override", "lm_hed=fp16"], "'lm_hed'"),
            (["emit", "--config", path, "--layers", "9"], "--layers 9: expected 1..2"),
            (["emit", "--config", os.path.join(self.tmp, "no.json")], "cannot read"),
            (["report"], "expected an input .mlir or --config"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                proc = run_cli(*args)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn(needle, proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)

    def test_encodings_command(self):
        proc = run_cli("encodings")
        self.assertEqual(proc.returncode, 0)
        self.assertIn("nvfp4            #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, "
                      "global_scale>", proc.stdout)


if __name__ == "__main__":
    unittest.main()
