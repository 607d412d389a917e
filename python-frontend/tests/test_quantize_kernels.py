"""`python3 -m qfuse compile` writes the round-to-nearest kernels of
quantize-at-load beside the model artifact (m.qfa -> m.quantize.qfa): one
qf.quantize launch per (encoding, K, input dtype) of its quantized weights
(docs/quantize-at-load.md)."""
import json
import os
import unittest

from support import TINY_LLAMA, TempDirTestCase, run_cli, tool_or_skip

from qfuse.quantize_kernels import quantize_artifact_path, quantize_ir, quantize_keys

ARTIFACT = {"weights": [
    {"name": "a", "shape": [512, 256], "encoding": "int4, group = 128, scale = f16"},
    {"name": "b", "shape": [256, 512], "encoding": "int4, group = 128, scale = f16"},
    {"name": "c", "shape": [768, 256], "encoding": "int4, group = 128, scale = f16"},
    {"name": "lm_head", "shape": [1024, 256], "encoding": "f16"},
]}


class QuantizeKernelsTest(unittest.TestCase):
    def test_path_beside_the_artifact(self):
        self.assertEqual(quantize_artifact_path("d/m.qfa"), "d/m.quantize.qfa")
        self.assertEqual(quantize_artifact_path("d/m"), "d/m.quantize.qfa")

    def test_one_kernel_per_encoding_k_and_dtype(self):
        self.assertEqual(quantize_keys(ARTIFACT),
                         [("int4, group = 128, scale = f16", 256),
                          ("int4, group = 128, scale = f16", 512)])
        ir = quantize_ir(ARTIFACT)
        self.assertEqual(ir.count("qf.quantize"), 4)  # 2 K x (f16, bf16)
        self.assertIn("tensor<1x512xbf16> -> !qf.weight<1x512, "
                      "#qf.enc<int4, group = 128, scale = f16>>", ir)

    def test_act_order_and_2of4_get_their_qf_quantize(self):
        # Their kernels are generated too (g_idx, meta): nothing is left out.
        encodings = ["int4, group = 128, scale = f16, act_order",
                     "int4, group = 128, scale = f16, sparse = 2:4"]
        artifact = {"weights": [{"name": f"w{i}", "shape": [64, 256], "encoding": e}
                                for i, e in enumerate(encodings)]}
        self.assertEqual(quantize_keys(artifact), [(e, 256) for e in encodings])
        ir = quantize_ir(artifact)
        for e in encodings:
            self.assertIn(f"tensor<1x256xf16> -> !qf.weight<1x256, #qf.enc<{e}>>", ir)

    def test_unquantized_only_needs_none(self):
        self.assertIsNone(quantize_ir({"weights": [ARTIFACT["weights"][3]]}))

    def test_unquantized_2of4_gets_its_qf_quantize(self):
        # Dense f16/bf16 2:4: the kernel keeps two of each quad.
        encodings = ["f16, sparse = 2:4", "bf16, sparse = 2:4"]
        artifact = {"weights": [{"name": f"w{i}", "shape": [64, 256], "encoding": e}
                                for i, e in enumerate(encodings)]
                    + [ARTIFACT["weights"][3]]}
        self.assertEqual(quantize_keys(artifact), [(e, 256) for e in encodings])


class CompileWritesTheQuantizeArtifact(TempDirTestCase):
    def compile_tiny(self, encoding, name="m", *extra):
        """`qfuse compile` of the tiny Llama into NAME.qfa (sm_90, batch 1);
        the run and its quantize artifact's JSON (None when not written)."""
        tool_or_skip(self, "qfuse-compile")
        config = self.write_config(TINY_LLAMA)
        out = os.path.join(self.tmp, name + ".qfa")
        r = run_cli("compile", "--config", config, "--encoding", encoding,
                    "--batch-sizes", "1", "--chip", "sm_90", *extra, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        if not os.path.exists(quantize_artifact_path(out)):
            return r, None
        with open(quantize_artifact_path(out)) as f:
            return r, json.load(f)

    def test_compile_writes_both(self):
        r, kernels = self.compile_tiny("int4-g128")
        self.assertIn("m.quantize.qfa (round-to-nearest kernels", r.stderr)
        ops = [(s["op"], s["encoding"]) for p in kernels["plans"] for s in p["steps"]]
        self.assertTrue(ops)
        self.assertTrue(all(op == "qf.quantize" for op, _ in ops))
        self.assertEqual(kernels["version"], 6)
        # The bf16 inputs' ops also carry the bf16 -> f16 rounding, once.
        names = [k["name"] for k in kernels["kernels"]]
        self.assertEqual(names.count("qf_round_bf16_to_f16"), 1)

    def test_nvfp4_gets_kernels_that_read_the_amax(self):
        # NVFP4's global scale needs the tensor's largest magnitude: its
        # kernels take it as the "amax" input and write "global_scale".
        _, kernels = self.compile_tiny("nvfp4")
        steps = [s for p in kernels["plans"] for s in p["steps"]
                 if s["launch"].startswith("qf_quantize_")]
        self.assertTrue(steps)
        for step in steps:
            self.assertIn("global_scale", step["encoding"])
            args = [a["buffer"] for a in step["args"]]
            self.assertEqual(args[1], "qf_quantize_amax")
            self.assertTrue(args[4].endswith(".global_scale"), args)
        amax = [b for b in kernels["buffers"] if b["name"] == "qf_quantize_amax"]
        self.assertEqual(amax, [{"name": "qf_quantize_amax", "dtype": "f32",
                                 "shape": [1]}])

    def test_act_order_and_2of4_kernels_write_g_idx_and_meta(self):
        # act_order at load (no g_idx: consecutive groups) writes the g_idx
        # component; 2:4 writes the kept codes and their positions (meta),
        # unquantized 2:4 ("2:4": f16 kept values) too.
        cases = (("#qf.enc<int4, group = 128, scale = f16, act_order>", "g_idx"),
                 ("2:4+int4", "meta"), ("2:4", "meta"))
        for i, (encoding, extra) in enumerate(cases):
            r, kernels = self.compile_tiny(encoding, f"m-{i}")
            self.assertNotIn("has no GPU kernel", r.stderr)
            steps = [s for p in kernels["plans"] for s in p["steps"]
                     if s["launch"].startswith("qf_quantize_")]
            self.assertTrue(steps, encoding)
            for step in steps:
                args = [a["buffer"] for a in step["args"]]
                self.assertTrue(args[-2].endswith("." + extra), args)

    def test_no_quantize_kernels(self):
        _, kernels = self.compile_tiny("int4-g128", "m", "--no-quantize-kernels")
        self.assertIsNone(kernels)


if __name__ == "__main__":
    unittest.main()
