"""IR emitted for the reference configs parses and verifies with qfuse-opt and
goes through qfuse-compile."""
import os
import re
import subprocess
import unittest

from support import (LLAMA3_8B, MISTRAL_7B, QWEN25_1_5B, REFERENCE_CONFIGS, TINY_LLAMA,
                     TempDirTestCase, run_cli, tool_or_skip, transformers5)
from qfuse import artifact_set
from qfuse.encodings import EncodingPlan
from qfuse.ir import IRError, Module, fmt_float, tensor
from qfuse.model import ModelConfig, emit_decode_step_only, emit_model


def emit(config, encoding="int4-g128", overrides=(), **kw):
    kw.setdefault("layers", 2)
    return emit_model(ModelConfig(config), EncodingPlan(encoding, overrides), **kw)


class EmittedText(unittest.TestCase):
    """What the IR says, without the tools."""

    def test_sampling_replaces_the_argmax(self):
        text = emit(QWEN25_1_5B, max_seq=1024, batch=None, sampling=True)
        self.assertNotIn("qf.argmax", text)
        self.assertIn('%sparams: tensor<1x8xi32> {qf.name = "sampling_params"}', text)
        self.assertIn('%smask: tensor<1x151936xi8> {qf.name = "penalty_mask"}', text)
        self.assertIn("qf.sample %logits, %sparams, %smask, %pos : tensor<?x151936xf16>, "
                      "tensor<1x8xi32>, tensor<1x151936xi8>, tensor<?xi32> -> tensor<?xi32>",
                      text)
        self.assertIn("qf.argmax", emit(QWEN25_1_5B, max_seq=1024))

    def test_qwen(self):
        text = emit(QWEN25_1_5B, max_seq=1024)
        self.assertIn("#int4_g128 = #qf.enc<int4, group = 128, scale = f16>", text)
        # q/k/v biases as fused epilogues, none on o_proj.
        self.assertEqual(len(re.findall(r"qf.fused_matmul .* bias\(", text)), 6)
        self.assertIn('qf.tensor_ref "model.layers.1.self_attn.v_proj.bias" : tensor<256xf16>',
                      text)
        self.assertNotIn("o_proj.bias", text)
        self.assertIn("{num_heads = 12 : i64, num_kv_heads = 2 : i64, head_dim = 128 : i64}",
                      text)
        self.assertIn("tensor<1024x256xf16>", text)  # the KV cache
        self.assertIn("theta = 1000000.0 : f64", text)
        self.assertNotIn("scaling_factor", text)
        self.assertIn("{eps = 1.0e-06 : f32}", text)
        # Tied embeddings, quantized lm_head: a packed copy marked as tied.
        self.assertIn('qf.weight_ref "lm_head" {qf.tied = "model.embed_tokens.weight"} : '
                      "!qf.weight<151936x1536, #int4_g128>", text)
        self.assertIn("qf.argmax %logits : tensor<1x151936xf16> -> tensor<1xi32>", text)
        self.assertEqual(text.count("qf.rms_norm"), 5)  # 2 per layer + final
        self.assertEqual(text.count("qf.silu_mul"), 2)

    def test_qwen_tied_fp16_lm_head_reuses_the_embedding(self):
        text = emit(QWEN25_1_5B, overrides=["lm_head=fp16"], max_seq=64)
        # A dense f16 copy of the table, run by cuBLAS; the runtime binds the
        # embedding to it.
        self.assertIn('qf.weight_ref "lm_head" {qf.tied = "model.embed_tokens.weight"} : '
                      "!qf.weight<151936x1536, #f16>", text)
        self.assertIn("#f16 = #qf.enc<f16>", text)

    def test_llama3_rope_scaling_and_overrides(self):
        text = emit(LLAMA3_8B, "nf4", ["lm_head=fp16,down_proj=int8"], batch=4,
                    max_seq=512)
        self.assertIn("scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, "
                      "high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64",
                      text)
        self.assertIn("theta = 500000.0 : f64", text)
        self.assertIn("#nf4_g64 = #qf.enc<nf4, group = 64, scale = f32>", text)
        self.assertIn("!qf.weight<4096x14336, #int8_pc>", text)
        self.assertIn('qf.weight_ref "lm_head" : !qf.weight<128256x4096, #f16>', text)
        self.assertIn("tensor<4xi32> {qf.name = \"positions\"}", text)
        self.assertNotIn("bias", text)

    def test_transformers5_rope_parameters(self):
        # transformers 5 writes rope_parameters instead of rope_theta and
        # rope_scaling: the same model, so the same IR (theta and scaling too).
        for name, config in REFERENCE_CONFIGS.items():
            with self.subTest(config=name):
                self.assertIn("rope_parameters", transformers5(config))
                self.assertEqual(emit(transformers5(config), layers=1, max_seq=64),
                                 emit(config, layers=1, max_seq=64))
        text = emit(transformers5(LLAMA3_8B), layers=1, max_seq=64)
        self.assertIn("theta = 500000.0 : f64", text)
        self.assertIn("scaling_factor = 8.0 : f64", text)

    def test_layers_limit_and_names(self):
        text = emit(MISTRAL_7B, layers=3, max_seq=256)
        self.assertIn('"model.layers.2.mlp.down_proj"', text)
        self.assertNotIn("model.layers.3.", text)
        self.assertIn('{qf.name = "model.layers.2.self_attn.value_cache"}', text)

    def test_decode_step_only(self):
        text = emit_decode_step_only(ModelConfig(LLAMA3_8B), EncodingPlan("int4-g128"),
                                     batch=2, layers=2)
        self.assertEqual(text.count("qf.matmul"), 2 * 7 + 1)
        self.assertNotIn("qf.attention", text)
        self.assertIn('qf.weight_ref "model.layers.1.mlp.gate_proj" : '
                      "!qf.weight<14336x4096, #enc>", text)

    def test_bf16(self):
        text = emit(LLAMA3_8B, max_seq=64, layers=1, dtype="bf16")
        self.assertIn("tensor<1x4096xbf16>", text)
        self.assertNotIn("xf16>", text)

    def test_builder_checks_shapes(self):
        m = Module()
        f = m.func("bad")
        x = f.arg("x", tensor(1, 64))
        w = f.weight_ref("w", 32, 128, "int4, group = 32, scale = f16")
        with self.assertRaisesRegex(IRError, "K = 64 .* K = 128"):
            f.matmul(x, w)
        with self.assertRaisesRegex(IRError, "dense tensors"):
            f.weight_ref("d", 32, 64, "bf16")
        with self.assertRaisesRegex(IRError, "num_kv_heads"):
            f.attention(x, x, x, x, x, x, 3, 2, 32)
        self.assertEqual(fmt_float(1e-5), "1.0e-05")
        self.assertEqual(fmt_float(500000), "500000.0")
        self.assertEqual(fmt_float(1.5e-06), "1.5e-06")


class VerifiesWithTools(TempDirTestCase):
    """qfuse-opt parses and verifies; qfuse-compile takes the IR through its
    pipeline (--emit=mlir: fusion, tiling, layout, kernels), and compiles the
    linear layers into an artifact. The whole model's other ops (rms_norm,
    rotary, attention, ...) have no GPU lowering yet: checked to be said so."""

    def setUp(self):
        super().setUp()
        self.opt = tool_or_skip(self, "qfuse-opt")

    def check(self, cmd):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, f"{' '.join(cmd)}\n{proc.stderr}")
        return proc

    def test_reference_models_verify_and_compile(self):
        compiler = tool_or_skip(self, "qfuse-compile")
        for name, config in REFERENCE_CONFIGS.items():
            with self.subTest(model=name):
                ir = os.path.join(self.tmp, f"{name}.mlir")
                with open(ir, "w") as f:
                    f.write(emit(config, "int4-g128", layers=2, max_seq=2048))
                self.check([self.opt, ir, "-o", os.devnull])
                out = os.path.join(self.tmp, f"{name}.after.mlir")
                self.check([compiler, ir, "--emit=mlir", "-o", out])
                with open(out) as f:
                    after = f.read()
                # Per layer: q/k/v, o_proj, gate+up as one gated matmul
                # (qf-fuse-gated-mlp), down_proj; then lm_head.
                self.assertEqual(after.count("qf.fused_matmul"), 2 * 6 + 1)
                self.assertIn("gpu.binary @qf_kernels", after)

    def test_encodings_and_overrides_verify(self):
        """Every named encoding in one module (one per projection kind)."""
        compiler = tool_or_skip(self, "qfuse-compile")
        overrides = ["q_proj=nvfp4,k_proj=mxfp4,v_proj=fp8,o_proj=int8",
                     "model.layers.1.mlp.gate_proj=uint4-g128-asym,up_proj=2:4",
                     "down_proj=int4-g64",
                     "lm_head=fp16"]
        ir = os.path.join(self.tmp, "m.mlir")
        with open(ir, "w") as f:
            f.write(emit(TINY_LLAMA, "nf4", overrides, layers=2))
        self.check([self.opt, ir, "-o", os.devnull])
        out = os.path.join(self.tmp, "after.mlir")
        self.check([compiler, ir, "--emit=mlir", "-o", out])
        with open(out) as f:
            after = f.read()
        for alias in ("#fp4e2m1_g16", "#fp4e2m1_g32", "#fp8e4m3_pc", "#int8_pc",
                      "#uint4_g128", "#f16_2of4", "#int4_g64", "#nf4_g64"):
            self.assertIn(alias, after)
        self.assertIn('"model.layers.0.mlp.gate_proj" : !qf.weight<512x256, #nf4_g64', after)
        # 7 per layer (gate and up differ in encoding, so they are not one
        # gated matmul), and lm_head: dense f16, a cuBLAS step.
        self.assertEqual(after.count("qf.fused_matmul"), 2 * 7 + 1)

    def test_sparse_int4(self):
        """2:4+int4 verifies; qfuse-compile lowers it, or says it does not yet."""
        compiler = tool_or_skip(self, "qfuse-compile")
        ir = os.path.join(self.tmp, "m.mlir")
        with open(ir, "w") as f:
            f.write(emit(TINY_LLAMA, "2:4+int4", layers=1))
        self.check([self.opt, ir, "-o", os.devnull])
        proc = subprocess.run([compiler, ir, "--emit=mlir", "-o", os.devnull],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            self.assertIn("not lowered yet", proc.stderr)

    def test_decode_step_only_compiles_to_an_artifact(self):
        self.compiler = tool_or_skip(self, "qfuse-compile")
        path = self.write_config(dict(TINY_LLAMA, tie_word_embeddings=True))
        out = os.path.join(self.tmp, "tiny.qfa")
        proc = run_cli("compile", "--config", path, "--decode-step-only",
                       "--override", "lm_head=int8", "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        import json
        with open(out) as f:
            meta = json.load(f)
        # The default: one artifact per chip (sm_80, sm_90, sm_90a).
        self.assertEqual(len(artifact_set.variants(meta)), 3)
        for artifact in artifact_set.variants(meta):
            self.assertEqual(artifact["inputs"], ["hidden", "act"])
            self.assertIn("model.layers.1.self_attn.q_proj.out", artifact["outputs"])
            self.assertIn("lm_head.out", artifact["outputs"])

    def test_whole_model_artifact(self):
        """An artifact of the whole model (docs/decode-model.md): every op has
        a GPU kernel, a plan per batch size, the caches are state buffers and
        the model's shape travels in "model"."""
        tool_or_skip(self, "qfuse-compile")
        path = self.write_config(TINY_LLAMA)
        out = os.path.join(self.tmp, "m.qfa")
        proc = run_cli("compile", "--config", path, "--layers", "1", "--max-seq", "64",
                       "--batch-sizes", "1,8", "--chip", "sm_90", "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        import json
        with open(out) as f:
            artifact = json.load(f)
        # One chip: a plain artifact, as qfuse-compile writes it.
        self.assertEqual(artifact["format"], "qfuse-artifact")
        self.assertEqual(artifact["target"]["chip"], "sm_90")
        # Batch 8 runs the tensor-core kernel (the matvec / mma crossover),
        # batch 1 the matvec: the weights are listed in both layouts (v3).
        self.assertEqual(artifact["version"], 3)
        self.assertEqual([p["batch"] for p in artifact["plans"]], [1, 8])
        self.assertEqual(artifact["model"]["max_seq"], 64)
        self.assertEqual(artifact["model"]["num_layers"], 1)
        buffers = {b["name"]: b for b in artifact["buffers"]}
        self.assertEqual(buffers["input_ids"]["shape"], ["M"])
        self.assertEqual(buffers["logits"]["shape"], ["M", 1024])
        self.assertEqual(buffers["next_token"]["dtype"], "i32")
        self.assertTrue(buffers["model.layers.0.self_attn.key_cache"]["state"])
        kernels = {k["name"] for k in artifact["kernels"]}
        for prefix in ("qf_embedding", "qf_rms_norm", "qf_rotary_attention",
                       "qf_argmax", "qf_matvec", "qf_mma"):
            self.assertTrue(any(k.startswith(prefix) for k in kernels), prefix)

    def test_compile_errors(self):
        tool_or_skip(self, "qfuse-compile")
        proc = run_cli("compile", os.path.join(self.tmp, "none.mlir"), "-o", "x.qfa")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("none.mlir: no such file", proc.stderr)
        ir = os.path.join(self.tmp, "m.mlir")
        with open(ir, "w") as f:
            f.write(emit(QWEN25_1_5B, layers=1, max_seq=16))
        proc = run_cli("compile", ir, "--chip", "sm_70", "-o", "x.qfa")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("target 'sm_70' is not supported", proc.stderr)
        proc = run_cli("compile", ir, "-o", "x.qfa",
                       env={"QFUSE_COMPILE": os.path.join(self.tmp, "nope")})
        self.assertEqual(proc.returncode, 1)
        self.assertIn("QFUSE_COMPILE=", proc.stderr)
        self.assertIn("is not an executable qfuse-compile", proc.stderr)


if __name__ == "__main__":
    unittest.main()
