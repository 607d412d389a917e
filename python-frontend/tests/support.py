"""Shared by the tests: reference configs, the tools under test, the CLI.

The tools come from QFUSE_OPT / QFUSE_COMPILE / QFUSE_C_LIBRARY (set by
`make test`'s check-qfuse-python to the build under test), else from
QFUSE_BUILD_DIR, PATH or the repository's build*/ directories.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
FRONTEND = os.path.dirname(HERE)
REPO = os.path.dirname(FRONTEND)
sys.path.insert(0, FRONTEND)

from qfuse.tools import ToolError, find_tool  # noqa: E402

QWEN25_1_5B = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
    "hidden_size": 1536, "intermediate_size": 8960, "num_attention_heads": 12,
    "num_key_value_heads": 2, "num_hidden_layers": 28, "vocab_size": 151936,
    "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "max_position_embeddings": 32768,
    "sliding_window": 32768, "use_sliding_window": False, "tie_word_embeddings": True,
    "hidden_act": "silu", "rope_scaling": None, "torch_dtype": "bfloat16",
}
LLAMA3_8B = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama",
    "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256,
    "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "max_position_embeddings": 8192,
    "tie_word_embeddings": False, "hidden_act": "silu", "attention_bias": False,
    "mlp_bias": False, "torch_dtype": "bfloat16",
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
}
MISTRAL_7B = {
    "architectures": ["MistralForCausalLM"], "model_type": "mistral",
    "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 32768,
    "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "max_position_embeddings": 32768,
    "sliding_window": None, "tie_word_embeddings": False, "hidden_act": "silu",
    "head_dim": 128, "torch_dtype": "bfloat16",
}
# A small Llama for the slower tool runs (kernel generation per shape).
TINY_LLAMA = dict(LLAMA3_8B, hidden_size=256, intermediate_size=512,
                  num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2,
                  vocab_size=1024, max_position_embeddings=128)
REFERENCE_CONFIGS = {"qwen2.5-1.5b": QWEN25_1_5B, "llama3-8b": LLAMA3_8B,
                     "mistral-7b": MISTRAL_7B}


def transformers5(config):
    """`config` as transformers 5 writes it: rope_theta and rope_scaling
    folded into one rope_parameters object."""
    out = {k: v for k, v in config.items() if k not in ("rope_theta", "rope_scaling")}
    params = {"rope_type": "default"}
    if config.get("rope_theta") is not None:
        params["rope_theta"] = config["rope_theta"]
    params.update(config.get("rope_scaling") or {})
    out["rope_parameters"] = params
    return out


class TempDirTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="qfuse-test-")
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def write_config(self, config, name="config.json"):
        d = os.path.join(self.tmp, name.replace(".json", ""))
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        return path


def tool_or_skip(test, tool):
    try:
        return find_tool(tool)
    except ToolError as e:
        test.skipTest(f"{tool} not built: {e}")


def run_cli(*args, env=None):
    """python3 -m qfuse ARGS in a fresh process (the interpreter running the tests)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = FRONTEND + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "qfuse"] + list(args), cwd=REPO,
                          env=full_env, capture_output=True, text=True)
