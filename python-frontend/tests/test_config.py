"""config.json validation: each bad config names its file and field."""
import copy
import json
import os
import unittest

from support import (LLAMA3_8B, MISTRAL_7B, QWEN25_1_5B, TempDirTestCase, run_cli,
                     transformers5)
from qfuse.model import ConfigError, ModelConfig, max_seq_for


class ReferenceConfigs(unittest.TestCase):
    def test_qwen(self):
        c = ModelConfig(QWEN25_1_5B)
        self.assertEqual((c.hidden_size, c.intermediate_size, c.head_dim, c.kv_width,
                          c.num_hidden_layers, c.vocab_size), (1536, 8960, 128, 256, 28, 151936))
        self.assertTrue(c.tie_word_embeddings)
        self.assertEqual(c.bias, {"q_proj", "k_proj", "v_proj"})
        self.assertIsNone(c.rope_llama3)
        self.assertIsNone(c.sliding_window)  # use_sliding_window is false

    def test_llama3(self):
        c = ModelConfig(LLAMA3_8B)
        self.assertEqual((c.q_width, c.kv_width, c.rope_theta), (4096, 1024, 500000.0))
        self.assertEqual(c.rope_llama3["factor"], 8.0)
        self.assertEqual(c.rope_llama3["original_max_position_embeddings"], 8192)
        self.assertEqual(c.bias, set())
        self.assertEqual([p[0] for p in c.projections()][-1], "lm_head")

    def test_mistral_defaults_and_window(self):
        c = ModelConfig(MISTRAL_7B)
        self.assertEqual(c.head_dim, 128)
        self.assertEqual(max_seq_for(c), 32768)
        windowed = dict(MISTRAL_7B, sliding_window=4096)
        c = ModelConfig(windowed)
        self.assertEqual(max_seq_for(c), 4096)
        with self.assertRaises(ConfigError) as ctx:
            max_seq_for(c, 8192)
        self.assertIn("sliding_window", str(ctx.exception))

    def test_model_type_without_architectures(self):
        raw = dict(LLAMA3_8B)
        del raw["architectures"]
        self.assertEqual(ModelConfig(raw).architecture, "LlamaForCausalLM")


class BadConfigs(unittest.TestCase):
    def assertConfigError(self, raw, *needles):
        with self.assertRaises(ConfigError) as ctx:
            ModelConfig(raw, "x/config.json")
        msg = str(ctx.exception)
        self.assertIn("x/config.json", msg)
        for needle in needles:
            self.assertIn(needle, msg)

    def test_unsupported_architecture(self):
        self.assertConfigError(dict(LLAMA3_8B, architectures=["GPT2LMHeadModel"]),
                               "'architectures'", "GPT2LMHeadModel", "LlamaForCausalLM",
                               "Qwen2ForCausalLM", "MistralForCausalLM")
        raw = dict(LLAMA3_8B, model_type="gpt2")
        del raw["architectures"]
        self.assertConfigError(raw, "'architectures'", "missing")

    def test_missing_fields(self):
        for field in ("hidden_size", "intermediate_size", "num_attention_heads",
                      "num_hidden_layers", "vocab_size"):
            with self.subTest(field=field):
                raw = dict(QWEN25_1_5B)
                del raw[field]
                self.assertConfigError(raw, f"'{field}'", "missing")

    def test_bad_values(self):
        cases = [
            ({"hidden_size": "1536"}, "'hidden_size'"),
            ({"hidden_size": -1}, "'hidden_size'"),
            ({"num_key_value_heads": 5}, "'num_key_value_heads'", "does not divide"),
            ({"hidden_size": 1000}, "'hidden_size'", "multiple of num_attention_heads"),
            ({"rms_norm_eps": "small"}, "'rms_norm_eps'"),
            ({"tie_word_embeddings": "yes"}, "'tie_word_embeddings'"),
            ({"hidden_act": "gelu"}, "'hidden_act'", "silu"),
            ({"head_dim": 127}, "'head_dim'", "even"),
        ]
        for changes, *needles in cases:
            with self.subTest(changes=changes):
                self.assertConfigError(dict(QWEN25_1_5B, **changes), *needles)

    def test_bad_rope_scaling(self):
        def with_scaling(**changes):
            raw = copy.deepcopy(LLAMA3_8B)
            raw["rope_scaling"].update(changes)
            return raw
        self.assertConfigError(with_scaling(rope_type="yarn"), "'rope_scaling'", "yarn",
                               "llama3")
        raw = with_scaling()
        del raw["rope_scaling"]["low_freq_factor"]
        self.assertConfigError(raw, "'rope_scaling.low_freq_factor'")
        self.assertConfigError(with_scaling(factor="8"), "'rope_scaling.factor'")
        self.assertConfigError(with_scaling(high_freq_factor=0.5),
                               "'rope_scaling.high_freq_factor'")
        self.assertConfigError(dict(LLAMA3_8B, rope_scaling=[1, 2]), "'rope_scaling'")
        # "type" is the older spelling of "rope_type"; "default" is no scaling.
        raw = copy.deepcopy(LLAMA3_8B)
        raw["rope_scaling"] = {"type": "default"}
        self.assertIsNone(ModelConfig(raw).rope_llama3)


class FromFiles(TempDirTestCase):
    def test_unreadable_and_malformed(self):
        with self.assertRaises(ConfigError) as ctx:
            ModelConfig.load(os.path.join(self.tmp, "missing.json"))
        self.assertIn("cannot read", str(ctx.exception))
        path = os.path.join(self.tmp, "bad.json")
        with open(path, "w") as f:
            f.write('{"hidden_size": 1536,\n  oops}')
        with self.assertRaises(ConfigError) as ctx:
            ModelConfig.load(path)
        self.assertIn(f"{path}:2:", str(ctx.exception))

    def test_non_finite_numbers(self):
        # Python reads 1e999 as inf (the shared table cannot hold it: nlohmann
        # writes inf back as null).
        path = os.path.join(self.tmp, "inf.json")
        with open(path, "w") as f:
            f.write(json.dumps(dict(LLAMA3_8B, rope_theta=1.0)).replace(
                '"rope_theta": 1.0', '"rope_theta": 1e999'))
        with self.assertRaises(ConfigError) as ctx:
            ModelConfig.load(path)
        self.assertIn("field 'rope_theta' is Infinity; expected a positive number",
                      str(ctx.exception))

    def test_integers_past_float(self):
        # Found by fuzz/python-config (fuzz/python-config/crashes): an integer
        # past float's range raised OverflowError, and one of more than 4300
        # digits Python's ValueError, instead of ConfigError.
        path = os.path.join(self.tmp, "huge.json")
        with open(path, "w") as f:
            f.write(json.dumps(dict(LLAMA3_8B, rms_norm_eps=10**400)))
        with self.assertRaises(ConfigError) as ctx:
            ModelConfig.load(path)
        self.assertIn("field 'rms_norm_eps' is 1000", str(ctx.exception))
        self.assertIn("; expected a positive number", str(ctx.exception))
        with open(path, "w") as f:
            f.write('{"hidden_size": ' + "1" * 5000 + "}")
        with self.assertRaises(ConfigError) as ctx:
            ModelConfig.load(path)
        self.assertIn(f"{path}: not JSON: Exceeds the limit", str(ctx.exception))

    def test_cli_reports_the_field(self):
        raw = dict(LLAMA3_8B)
        del raw["vocab_size"]
        path = self.write_config(raw)
        proc = run_cli("emit", "--config", path, "-o", os.path.join(self.tmp, "x.mlir"))
        self.assertEqual(proc.returncode, 1)
        self.assertIn("qfuse emit: error:", proc.stderr)
        self.assertIn("'vocab_size' is missing", proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)


    def test_cli_reads_and_checks_rope_parameters(self):
        # A transformers 5 config file: its rotary, not theta 1e4 unscaled.
        path = self.write_config(transformers5(LLAMA3_8B), "tf5.json")
        cfg = ModelConfig.load(path)
        self.assertEqual((cfg.rope_theta, cfg.rope_llama3["factor"]), (500000.0, 8.0))
        out = os.path.join(self.tmp, "x.mlir")
        proc = run_cli("emit", "--config", path, "--layers", "1", "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            self.assertIn("theta = 500000.0 : f64", f.read())
        # An unknown rope_type, and two spellings that disagree, name the
        # file and the field.
        raw = transformers5(QWEN25_1_5B)
        raw["rope_parameters"].update(rope_type="yarn", factor=4.0)
        path = self.write_config(raw, "yarn.json")
        proc = run_cli("emit", "--config", path, "-o", out)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(f"{path}: field 'rope_parameters' has rope_type \"yarn\"", proc.stderr)
        raw = dict(transformers5(QWEN25_1_5B), rope_theta=10000.0)
        path = self.write_config(raw, "both.json")
        proc = run_cli("emit", "--config", path, "-o", out)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(f"{path}: field 'rope_parameters' has rope_theta 1000000.0, but "
                      "field 'rope_theta' is 10000.0", proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)

if __name__ == "__main__":
    unittest.main()
