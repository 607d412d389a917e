"""The shared config.json table (testdata/model-configs/cases.json), run
through the frontend's ModelConfig; the C++ reference reader runs the same
table (unittests/Reference/ConfigCasesTest.cpp), so the rules cannot drift."""
import copy
import json
import os
import unittest

from support import REPO
from qfuse.config import LIMITS, ConfigError, ModelConfig

CASES = os.path.join(REPO, "testdata", "model-configs", "cases.json")


def load_table():
    with open(CASES) as f:
        return json.load(f)


def _walk(config, dotted):
    """(object, key) that a dotted path such as "rope_scaling.factor" names."""
    *parents, key = dotted.split(".")
    for name in parents:
        config = config[name]
    return config, key


def build_config(case, bases):
    """The case's config: its base, minus `remove`, plus `set`."""
    config = copy.deepcopy(bases[case["base"]])
    for dotted in case.get("remove", []):
        obj, key = _walk(config, dotted)
        del obj[key]
    for dotted, value in case.get("set", {}).items():
        obj, key = _walk(config, dotted)
        obj[key] = copy.deepcopy(value)
    return config


def observed(cfg):
    """The values a `valid` case may name, read from a parsed config."""
    return {
        "architecture": cfg.architecture,
        "hidden_size": cfg.hidden_size,
        "intermediate_size": cfg.intermediate_size,
        "num_attention_heads": cfg.num_attention_heads,
        "num_key_value_heads": cfg.num_key_value_heads,
        "head_dim": cfg.head_dim,
        "num_hidden_layers": cfg.num_hidden_layers,
        "vocab_size": cfg.vocab_size,
        "max_position_embeddings": cfg.max_position_embeddings,
        "q_width": cfg.q_width,
        "kv_width": cfg.kv_width,
        "rms_norm_eps": cfg.rms_norm_eps,
        "rope_theta": cfg.rope_theta,
        "rope_scaling_factor": cfg.rope_llama3["factor"] if cfg.rope_llama3 else None,
        "tie_word_embeddings": cfg.tie_word_embeddings,
        "sliding_window": cfg.sliding_window,
        "biases": sorted(cfg.bias),
    }


class SharedConfigCases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.table = load_table()

    def test_limits_are_the_tables(self):
        self.assertEqual(LIMITS, self.table["limits"])

    def test_every_case(self):
        bases = self.table["bases"]
        for case in self.table["cases"]:
            with self.subTest(case=case["name"]):
                self.assertEqual(("valid" in case) + ("error" in case), 1,
                                 "a case has exactly one of 'valid' and 'error'")
                source = f"cases/{case['name']}/config.json"
                config = build_config(case, bases)
                if "valid" in case:
                    try:
                        got = observed(ModelConfig(config, source))
                    except ConfigError as e:
                        self.fail(f"rejected: {e}")
                    for key, want in case["valid"].items():
                        self.assertIn(key, got, f"unknown key '{key}' in 'valid'")
                        if key == "biases":
                            want = sorted(want)
                        self.assertEqual(got[key], want, key)
                    continue
                with self.assertRaises(ConfigError) as ctx:
                    ModelConfig(config, source)
                message = str(ctx.exception)
                self.assertTrue(message.startswith(source + ": field '"), message)
                for needle in case["error"]:
                    self.assertIn(needle, message)

    def test_every_limit_is_exercised(self):
        """Each size limit has a case just past it that names the field."""
        errors = [" ".join(c["error"]) for c in self.table["cases"] if "error" in c]
        for field, limit in LIMITS.items():
            if field in ("q_width", "weight_elements"):
                needle = f"expected at most {limit}"
            else:
                needle = f"field '{field}' is {limit + 1}; expected an integer from 1 to {limit}"
            with self.subTest(field=field):
                self.assertTrue(any(needle in e for e in errors),
                                f"no case's error says: {needle}")


if __name__ == "__main__":
    unittest.main()
