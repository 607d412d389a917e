"""qfuse.gptq and python3 -m qfuse compile-gptq: the GPTQ block kernels of a
model's shapes (qf.gptq_block_update with dynamic rows, a plan per stacked
row count)."""
import json
import os
import re
import unittest

from support import (LLAMA3_8B, QWEN25_1_5B, REFERENCE_CONFIGS, TINY_LLAMA,
                     TempDirTestCase, run_cli, tool_or_skip)
from qfuse import artifact_set
from qfuse.encodings import encoding_text
from qfuse.gptq import GptqError, block_ops, gptq_ir, input_widths, row_counts
from qfuse.model import ModelConfig
from qfuse.tools import verify

# hidden 320 and intermediate 704 leave last blocks of 64 columns.
ODD = dict(TINY_LLAMA, hidden_size=320, intermediate_size=704, num_attention_heads=5,
           num_key_value_heads=1)

_OP = re.compile(r'qf\.name = "w:(.*) \((dynamic|static) b(\d+)\)"')


def named_ops(text):
    """[(grid, mode, width)] from the weight operands' names."""
    return [(g, m, int(w)) for g, m, w in _OP.findall(text)]


class RowsAndWidths(unittest.TestCase):
    def test_stacked_rows(self):
        # q+k+v = (32 + 2*8) * 128, o/down = 4096, gate+up = 2 * 14336.
        self.assertEqual(row_counts(LLAMA3_8B), [4096, 6144, 28672])
        # (12 + 2*2) * 128 = 2048, 1536, 2 * 8960.
        self.assertEqual(row_counts(QWEN25_1_5B), [1536, 2048, 17920])
        self.assertEqual(row_counts(TINY_LLAMA), [256, 512, 1024])
        self.assertEqual(row_counts(ODD), [320, 448, 1408])

    def test_input_widths(self):
        self.assertEqual(input_widths(LLAMA3_8B), [4096, 14336])
        self.assertEqual(input_widths(ODD), [320, 704])
        # o_proj reads num_heads * head_dim, which may differ from hidden_size.
        self.assertEqual(input_widths(dict(TINY_LLAMA, head_dim=128)), [256, 512])


class Ops(TempDirTestCase):
    CASES = {
        "int4-g128": [("dynamic", 128), ("static", 128), ("static", 1)],
        "uint4-g128-asym": [("dynamic", 128), ("static", 128), ("static", 1)],
        "int8": [("static", 128), ("static", 1)],   # per channel: static only
        "fp8": [("static", 128), ("static", 1)],
        "nf4": [("dynamic", 128), ("dynamic", 64), ("static", 128), ("static", 1)],
        "int4-g32": [("dynamic", 128), ("dynamic", 32), ("static", 128), ("static", 1)],
        "mxfp4": [("dynamic", 128), ("dynamic", 32), ("static", 128), ("static", 1)],
    }

    def test_modes_and_widths(self):
        for encoding, expected in self.CASES.items():
            with self.subTest(encoding=encoding):
                self.assertEqual(block_ops(LLAMA3_8B, encoding), expected)
                text = gptq_ir(LLAMA3_8B, encoding)
                body = encoding_text(encoding)
                # The runtime reads the grid between "w:" and " (".
                self.assertEqual(named_ops(text), [(body, m, w) for m, w in expected])
                self.assertEqual(text.count("qf.gptq_block_update %"), len(expected))
                names = re.findall(r'qf\.name = "([^"]*)"', text)
                self.assertEqual(len(names), len(set(names)), "qf.name must be unique")
                self.assertNotIn("column_offset", text)

    def test_row_min_max_per_channel(self):
        # Per channel: one qf.row_min_max per input width K; grouped
        # encodings fit on the device with their dynamic kernel instead.
        text = gptq_ir(ODD, "int8")
        for k in input_widths(ODD):
            # A tile of 256 rows, not [rows, K] buffers in every plan.
            self.assertIn(f"%mm{k} = qf.row_min_max %rw{k} : tensor<256x{k}xf32> -> "
                          "tensor<256x2xf32>", text)
            self.assertIn(f'%rw{k}: tensor<256x{k}xf32> {{qf.name = "rows k{k}"}}', text)
            self.assertIn(f'tensor<256x2xf32> {{qf.name = "min_max k{k}"}}', text)
        self.assertEqual(text.count("qf.row_min_max"), len(input_widths(ODD)))
        self.assertNotIn("qf.row_min_max", gptq_ir(TINY_LLAMA, "int4-g128"))

    def test_operands_and_results(self):
        text = gptq_ir(TINY_LLAMA, "uint4-g128-asym")
        # Dynamic: codes, err, values (f16 [?, W]), scales and zeros [?, W/G];
        # static: scales and zeros operands [?, W], codes, err and values
        # results. The values' type comes after the others'.
        self.assertIn("%c0, %e0, %v0, %s0, %z0 = qf.gptq_block_update %w0, %u0 "
                      "{grid = #grid_uint4_g128_asym}\n    : (tensor<?x128xf32>, "
                      "tensor<128x128xf32>) -> (tensor<?x128xi8>, tensor<?x128xf32>, "
                      "tensor<?x1xf32>, tensor<?x1xf32>) values tensor<?x128xf16>", text)
        self.assertIn("%c2, %e2, %v2 = qf.gptq_block_update %w2, %u2 scales(%s2 : "
                      "tensor<?x1xf32>) zeros(%z2 : tensor<?x1xf32>) {grid = "
                      "#grid_uint4_g128_asym}\n    : (tensor<?x1xf32>, tensor<1x1xf32>) "
                      "-> (tensor<?x1xi8>, tensor<?x1xf32>) values tensor<?x1xf16>", text)
        self.assertIn('%u1: tensor<128x128xf32> {qf.name = "u (static b128)"}', text)
        self.assertIn('tensor<?x1xf32> {qf.name = "zeros_out (dynamic b128)"}', text)
        self.assertIn('tensor<?x128xf16> {qf.name = "values (dynamic b128)"}', text)
        text = gptq_ir(TINY_LLAMA, "int4-g32")
        self.assertIn("-> (tensor<?x32xi8>, tensor<?x32xf32>, tensor<?x1xf32>) "
                      "values tensor<?x32xf16>", text)
        self.assertIn("-> (tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x4xf32>) "
                      "values tensor<?x128xf16>", text)
        self.assertNotIn("zeros", text)

    def test_nvfp4_global_scale_per_row(self):
        # NVFP4 (group 16): every op takes one global scale per row.
        text = gptq_ir(TINY_LLAMA, "nvfp4")
        self.assertEqual(block_ops(TINY_LLAMA, "nvfp4"),
                         [("dynamic", 128), ("dynamic", 16), ("static", 128),
                          ("static", 1)])
        for i in range(4):
            self.assertIn(f"global_scale(%g{i} : tensor<?xf32>)", text)
        self.assertIn('%g0: tensor<?xf32> {qf.name = "global_scale (dynamic b128)"}',
                      text)

    def test_last_block_of_each_width(self):
        self.assertEqual(block_ops(ODD, "int4-g32"),
                         [("dynamic", 128), ("dynamic", 32), ("static", 128),
                          ("static", 1), ("dynamic", 64), ("static", 64)])
        # 64 = G: one dynamic op serves both.
        self.assertEqual(block_ops(ODD, "nf4"),
                         [("dynamic", 128), ("dynamic", 64), ("static", 128),
                          ("static", 1), ("static", 64)])
        self.assertEqual(block_ops(ODD, "int8"),
                         [("static", 128), ("static", 1), ("static", 64)])
        with self.assertRaisesRegex(GptqError, r"K = 320 leaves a last block of 64 "
                                    r"columns .* whole groups of 128 \('int4-g128'\)"):
            block_ops(ODD, "int4-g128")

    def test_unsupported_encodings(self):
        cases = {
            '#qf.enc<codebook, bits = 4, table = "lut.layer0" : f32, per_channel, '
            'scale = f16>': "GPTQ on the GPU does not support codebooks with a named "
                            "table .*table \"lut.layer0\"",
            "fp16": "GPTQ on the GPU does not support unquantized weights",
            "2:4+int4": "does not support 2:4 sparse encodings",
            "int4-g256": "group 256 of 'int4-g256' does not divide 128",
        }
        for encoding, pattern in cases.items():
            with self.subTest(encoding=encoding):
                with self.assertRaisesRegex(GptqError, pattern):
                    gptq_ir(TINY_LLAMA, encoding)

    def test_inline_codebook(self):
        enc = ("#qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, 0.0, 0.25, "
               "0.5, 0.75, 1.0]> : tensor<8xf16>, group = 128, scale = f16>")
        self.assertEqual(block_ops(TINY_LLAMA, enc),
                         [("dynamic", 128), ("static", 128), ("static", 1)])

    def test_parses_with_qfuse_opt(self):
        tool_or_skip(self, "qfuse-opt")
        configs = dict(REFERENCE_CONFIGS, odd=ODD)
        for name, config in configs.items():
            for encoding in ("int4-g128", "uint4-g128-asym", "int8", "nf4", "int4-g32",
                             "mxfp4", "fp8", "nvfp4"):
                if name == "odd" and "g128" in encoding:
                    continue  # K % 128 = 64 is not whole groups of 128
                with self.subTest(config=name, encoding=encoding):
                    path = os.path.join(self.tmp, f"{name}-{encoding}.mlir")
                    with open(path, "w") as f:
                        f.write(gptq_ir(ModelConfig(config), encoding))
                    verify(path)


class CompileGptq(TempDirTestCase):
    def test_a_plan_per_row_count(self):
        tool_or_skip(self, "qfuse-compile")
        config = self.write_config(ODD)
        out = os.path.join(self.tmp, "g.qfa")
        ir = os.path.join(self.tmp, "g.mlir")
        proc = run_cli("compile-gptq", "--config", config, "--encoding", "int4-g32",
                       "-o", out, "--emit-only", ir)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"qfuse compile-gptq: wrote {out} (qf.gptq_block_update: dynamic "
                      "b128, dynamic b32, static b128, static b1, dynamic b64, static "
                      "b64; rows 320, 448, 1408)", proc.stderr)
        self.assertNotIn("note:", proc.stderr)
        with open(ir) as f:
            self.assertEqual(f.read(), gptq_ir(ModelConfig.load(config), "int4-g32"))
        with open(out) as f:
            meta = json.load(f)
        # The default set of three chips; the block kernels of each are checked.
        self.assertEqual(artifact_set.chips(meta), ["sm_80", "sm_90", "sm_90a"])
        for artifact in artifact_set.variants(meta):
            self.check_blocks(artifact)

    def check_blocks(self, artifact):
        """One variant: a plan per row count, its block launches and buffers."""
        ops = block_ops(ODD, "int4-g32")
        plans = {p["batch"]: p["steps"] for p in artifact["plans"]}
        self.assertEqual(sorted(plans), [320, 448, 1408])
        for rows, steps in plans.items():
            expected = [f"qf_gptq_block_int4_sf16_{'g32' if m == 'dynamic' else 'static'}"
                        f"_r{rows}_b{w}_v" for m, w in ops]
            self.assertEqual([s["launch"] for s in steps], expected)
            for step, (mode, width) in zip(steps, ops):
                self.assertEqual(step["args"][0]["buffer"],
                                 f"w:int4, group = 32, scale = f16 ({mode} b{width})")
                self.assertEqual(step["grid"], [(rows + 3) // 4, 1, 1])
        self.assertEqual(len(artifact["kernels"]), 3 * len(ops))
        shapes = {b["name"]: b["shape"] for b in artifact["buffers"]}
        self.assertEqual(shapes["w:int4, group = 32, scale = f16 (static b64)"], ["M", 64])
        self.assertEqual(shapes["u (static b64)"], [64, 64])
        self.assertEqual(shapes["scales_out (dynamic b32)"], ["M", 1])
        self.assertEqual(shapes["values (dynamic b32)"], ["M", 32])

    def test_emit_only_and_errors(self):
        config = self.write_config(TINY_LLAMA)
        proc = run_cli("compile-gptq", "--config", config, "--encoding", "nf4",
                       "--emit-only", "-")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, gptq_ir(ModelConfig.load(config), "nf4"))
        cases = [
            (["--encoding", "int4-g256", "-o", "x.qfa"], "GPTQ on the GPU fits groups inside a block of 128 columns"),
            ([], "expected -o ARTIFACT (or --emit-only FILE"),
            (["--encoding", "int3", "--emit-only", "-"], "unknown encoding 'int3'"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                proc = run_cli("compile-gptq", "--config", config, *args)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn(f"qfuse compile-gptq: error: {needle}", proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
        proc = run_cli("compile-gptq", "--config", self.write_config(ODD, "odd.json"),
                       "--emit-only", "-")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("K = 320", proc.stderr)


if __name__ == "__main__":
    unittest.main()
