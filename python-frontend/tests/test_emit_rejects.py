"""python3 -m qfuse emit refuses, before writing anything, configs past the
size limits and encodings that do not parse or verify; each error names the
field or the option."""
import os
import unittest

from support import LLAMA3_8B, TINY_LLAMA, TempDirTestCase, run_cli
from qfuse.encoding_check import _checker, check_brackets
from qfuse.encodings import NAMED_ENCODINGS, encoding_text

ABSENT = "/nonexistent/qfuse-test"
# No qfuse-opt (QFUSE_OPT names a missing file) and no libqfuse_c.
NEITHER = {"QFUSE_OPT": ABSENT, "QFUSE_C_LIBRARY": ABSENT}


class EmitRejects(TempDirTestCase):
    def emit(self, config, *args, env=None):
        out = os.path.join(self.tmp, "x.mlir")
        proc = run_cli("emit", "--config", self.write_config(config), "-o", out, *args,
                       env=env)
        return proc, out

    def assertRejected(self, proc, out, *needles):
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("qfuse emit: error:", proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        for needle in needles:
            self.assertIn(needle, proc.stderr)
        self.assertFalse(os.path.exists(out), "nothing is written on an error")

    def test_layer_counts_that_used_to_hang(self):
        for layers in (2 ** 31, 2 ** 62, 10 ** 30):
            with self.subTest(layers=layers):
                proc, out = self.emit(dict(TINY_LLAMA, num_hidden_layers=layers),
                                      "--encoding", "int4-g128")
                self.assertRejected(proc, out, "field 'num_hidden_layers'",
                                    "expected an integer from 1 to 1024")

    def test_head_dim_that_used_to_be_written(self):
        proc, out = self.emit(dict(LLAMA3_8B, head_dim=2 ** 63))
        self.assertRejected(proc, out, "field 'head_dim' is 9223372036854775808")
        self.assertNotIn("18446744073709551616", proc.stdout + proc.stderr)

    def test_heads_and_head_dim_of_2_pow_40(self):
        proc, out = self.emit(dict(LLAMA3_8B, num_attention_heads=2 ** 40,
                                   num_key_value_heads=2 ** 40, head_dim=2 ** 40))
        self.assertRejected(proc, out, "field 'num_attention_heads' is 1099511627776")

    def test_max_seq_past_the_limit(self):
        proc, out = self.emit(TINY_LLAMA, "--max-seq", str(2 ** 40))
        self.assertRejected(proc, out, "--max-seq 1099511627776", "from 1 to 16777216")


class EmitChecksEncodings(TempDirTestCase):
    """Each invalid encoding through each checker that is present here."""
    INVALID = [
        (("--encoding", "#qf.enc<bogus>"), "--encoding '#qf.enc<bogus>'"),
        (("--encoding", "#qf.enc<int4, group = 0, scale = f16>"),
         "--encoding '#qf.enc<int4, group = 0, scale = f16>'"),
        (("--encoding", "int4-g1"), "--encoding 'int4-g1'"),
        (("--override", "down_proj=#qf.enc<bogus>"), "--override 'down_proj=#qf.enc<bogus>'"),
        (("--override", "lm_head=uint8-g1-asym"), "--override 'lm_head=uint8-g1-asym'"),
    ]

    def emit(self, *args, env=None):
        out = os.path.join(self.tmp, "x.mlir")
        proc = run_cli("emit", "--config", self.write_config(TINY_LLAMA), "--layers", "1",
                       "-o", out, *args, env=env)
        return proc, out

    def check_each_invalid(self, env, checker):
        for args, label in self.INVALID:
            with self.subTest(args=args):
                proc, out = self.emit(*args, env=env)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn(f"qfuse emit: error: {label} is not a valid encoding: "
                              f"{checker}: ", proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
                self.assertFalse(os.path.exists(out))
        proc, out = self.emit("--encoding", "#qf.enc<int4, group = 32, scale = f16>",
                              env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")
        with open(out) as f:
            self.assertIn("#qf.enc<int4, group = 32, scale = f16>", f.read())

    def test_with_qfuse_opt(self):
        name, _ = _checker()
        if name != "qfuse-opt":
            self.skipTest("qfuse-opt not built")
        self.check_each_invalid({}, "qfuse-opt")

    def test_with_the_c_library(self):
        from test_runtime import library_or_skip
        library_or_skip(self)
        self.check_each_invalid({"QFUSE_OPT": ABSENT}, "libqfuse_c")

    def test_without_either_brackets_are_checked_and_a_note_says_so(self):
        proc, out = self.emit("--encoding", "#qf.enc<int4, group = 128>, x = #qf.enc<f16>",
                              env=NEITHER)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("is not a valid encoding: unmatched '>'", proc.stderr)
        proc, out = self.emit("--encoding", "#qf.enc<int4, group = 32, scale = f16>",
                              env=NEITHER)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("not verified: neither qfuse-opt nor libqfuse_c", proc.stderr)
        # Fixed names need no checker and print nothing.
        proc, out = self.emit("--encoding", "nvfp4", env=NEITHER)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""))


class CheckersAcceptValidTexts(unittest.TestCase):
    """No valid text is refused: the fixed names (which skip the check) and
    family names pass whichever checker is present."""
    TEXTS = sorted({encoding_text(n) for n in list(NAMED_ENCODINGS) +
                    ["int4-g64", "int8-g32", "uint8-g32-asym", "int8-pc", "uint4-pc-asym"]})

    def test_through_the_checker_present(self):
        name, check = _checker()
        if check is None:
            self.skipTest("neither qfuse-opt nor libqfuse_c is built")
        self.assertEqual(check(self.TEXTS), {}, name)
        self.assertEqual(len(check(self.TEXTS + ["int4, group = 0, scale = f16"])), 1, name)


class Brackets(unittest.TestCase):
    def test_nesting(self):
        self.assertIsNone(check_brackets(
            'codebook, bits = 2, table = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf16>'))
        self.assertIsNone(check_brackets('codebook, bits = 4, table = "a>b\\"<" : f16'))
        self.assertEqual(check_brackets("int4>, x = #qf.enc<f16"),
                         "unmatched '>' at offset 4")
        self.assertEqual(check_brackets("int4, table = dense<[1.0"), "']' missing at the end")
        self.assertEqual(check_brackets('codebook, table = "abc'), "unterminated string")
        self.assertEqual(check_brackets("f16)"), "unmatched ')' at offset 3")


if __name__ == "__main__":
    unittest.main()
