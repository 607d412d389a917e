"""Compiles use the shipped tuning database unless told otherwise."""
import os
import unittest

from support import TempDirTestCase, run_cli, tool_or_skip

from qfuse import tools
from qfuse.cli import build_parser


class TuningDatabaseDefault(TempDirTestCase):
    def test_shipped_is_the_default_and_exists(self):
        # 'auto': the shipped database, under the model's own where it has one
        # (test_tune.py).
        args = build_parser().parse_args(["compile", "x.mlir", "-o", "x.qfa"])
        self.assertEqual(args.tuning_db, "auto")
        self.assertTrue(os.path.isfile(tools.SHIPPED_TUNING_DB))
        self.assertEqual(tools.resolve_tuning_db("auto"), tools.SHIPPED_TUNING_DB)
        self.assertEqual(tools.resolve_tuning_db("shipped"), tools.SHIPPED_TUNING_DB)

    def test_none_means_the_cost_model_alone(self):
        self.assertIsNone(tools.resolve_tuning_db("none"))

    def test_a_missing_database_is_an_error_naming_it(self):
        missing = os.path.join(self.tmp, "mine.json")
        with self.assertRaises(tools.ToolError) as e:
            tools.resolve_tuning_db(missing)
        self.assertIn(missing, str(e.exception))

    def test_the_chip_list_is_the_compilers(self):
        tool_or_skip(self, "qfuse-compile")
        for chip in tools.CHIPS:
            args = build_parser().parse_args(["compile", "x.mlir", "-o", "x", "--chip", chip])
            self.assertEqual(args.chip, chip)
        ir = os.path.join(self.tmp, "empty.mlir")
        with open(ir, "w") as f:
            f.write("func.func @f() {\n  return\n}\n")
        proc = run_cli("compile", ir, "-o", os.path.join(self.tmp, "x"), "--chip", "sm_75")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("sm_90a", proc.stderr)

    def test_compile_passes_the_shipped_database(self):
        tool_or_skip(self, "qfuse-compile")
        ir = os.path.join(self.tmp, "q.mlir")
        with open(ir, "w") as f:
            f.write(
                "func.func @q(%x: tensor<1x4096xf16>) -> tensor<1x4096xf16> {\n"
                '  %w = qf.weight_ref "q" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>\n'
                "  %y = qf.matmul %x, %w : tensor<1x4096xf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>> -> tensor<1x4096xf16>\n"
                "  return %y : tensor<1x4096xf16>\n}\n")
        shipped = os.path.join(self.tmp, "shipped.mlir")
        alone = os.path.join(self.tmp, "alone.mlir")
        proc = run_cli("compile", ir, "-o", shipped, "--emit", "mlir")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        proc = run_cli("compile", ir, "-o", alone, "--emit", "mlir", "--tuning-db", "none")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(shipped) as f, open(alone) as g:
            shipped_ir, alone_ir = f.read(), g.read()
        # Llama-3-8B's q_proj at batch 1 is in the shipped database, whose
        # measured tiling differs from the cost model's.
        self.assertIn("#qf.tiling<matvec", shipped_ir)
        self.assertNotEqual(shipped_ir, alone_ir)


if __name__ == "__main__":
    unittest.main()
