"""Mutation fuzzing of the Python frontend's config.json reader.

libFuzzer does not apply to Python, so this is a deterministic mutation
test (docs/fuzzing.md): the config seeds (fuzz/config/corpus, shared with
the C++ harness) and the regression inputs of fuzz/python-config/crashes
are read with ModelConfig.load, then mutated from a fixed seed: fields set
to extreme values (2^31, 2^63, 10^30, 10^400, NaN, wrong types), deleted,
added, nested objects edited, and the JSON text itself flipped or cut.

Every input must load or raise ConfigError, within --timeout seconds; an
accepted config must keep every size and product within LIMITS and emit
one layer of IR (qfuse emit's path) or raise one of the frontend's errors.
Anything else is a finding: the input is written to QFUSE_FUZZ_FINDINGS.

    PYTHONPATH=python-frontend python3 -m unittest fuzz/python-config/test_config_mutations.py
    QFUSE_FUZZ_SECONDS=600 QFUSE_FUZZ_SEED=7 PYTHONPATH=python-frontend \\
        python3 -m unittest fuzz/python-config/test_config_mutations.py

QFUSE_FUZZ_SECONDS (default 10; 0 replays the seeds and crashes only),
QFUSE_FUZZ_SEED (default 1), QFUSE_FUZZ_FINDINGS (default
./fuzz-python-config-findings).
"""
import glob
import json
import math
import os
import random
import signal
import tempfile
import time
import unittest

from qfuse.config import LIMITS, ConfigError, ModelConfig
from qfuse.encodings import EncodingError, EncodingPlan
from qfuse.ir import IRError
from qfuse.model import emit_model

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEEDS = sorted(glob.glob(os.path.join(ROOT, "fuzz", "config", "corpus", "*")))
CRASHES = sorted(glob.glob(os.path.join(ROOT, "fuzz", "python-config", "crashes", "*")))
FRONTEND_ERRORS = (ConfigError, EncodingError, IRError)
PER_INPUT_SECONDS = 10

VALUES = [0, 1, -1, 2, 3, 7, 8, 64, 127, 4096, 2**31 - 1, 2**31, 2**62, 2**63,
          2**64, 10**30, 10**400, 0.5, 1.5, 1e30, 1e308, -0.0, math.nan, math.inf,
          -math.inf, "", "7", "llama", "llama3", "LlamaForCausalLM", [], [1],
          ["LlamaForCausalLM", "Qwen2ForCausalLM"], {}, None, True, False]
KEYS = ["architectures", "model_type", "hidden_size", "intermediate_size",
        "num_attention_heads", "num_key_value_heads", "num_hidden_layers",
        "vocab_size", "head_dim", "max_position_embeddings", "rms_norm_eps",
        "rope_theta", "rope_scaling", "tie_word_embeddings", "hidden_act",
        "attention_bias", "mlp_bias", "sliding_window", "use_sliding_window",
        "_name_or_path", "quantization_config"]
ROPE_KEYS = ["rope_type", "type", "factor", "low_freq_factor", "high_freq_factor",
             "original_max_position_embeddings"]


class Timeout(Exception):
    pass


def mutate(rng, config):
    """A mutated copy of `config` as JSON text."""
    config = json.loads(json.dumps(config))
    for _ in range(rng.randint(1, 3)):
        target = config
        if isinstance(config, dict) and isinstance(config.get("rope_scaling"), dict) \
                and rng.random() < 0.25:
            target, keys = config["rope_scaling"], ROPE_KEYS
        else:
            keys = KEYS
        if not isinstance(target, dict):
            break
        kind = rng.randrange(4)
        key = rng.choice(keys)
        if kind == 0 or (kind == 1 and not target):
            target[key] = rng.choice(VALUES)
        elif kind == 1:
            target.pop(rng.choice(sorted(target)), None)
        elif kind == 2:
            ints = [k for k, v in target.items() if isinstance(v, int) and not isinstance(v, bool)]
            if ints:
                k = rng.choice(ints)
                target[k] = rng.choice([target[k] * 2**rng.randint(1, 40), target[k] + 1,
                                        target[k] - 1, -target[k], target[k] // 3])
        else:
            target[key] = rng.choice([{"rope_type": "llama3"}, {"type": "linear"},
                                      {"factor": rng.choice(VALUES)}, [rng.choice(VALUES)]])
    text = json.dumps(config, allow_nan=True, indent=1)
    if rng.random() < 0.2:
        at = rng.randrange(len(text) + 1)
        text = rng.choice([text[:at], text[:at] + chr(rng.randrange(32, 127)) + text[at + 1:],
                           text[:at] + text[at + rng.randint(1, 20):]])
    return text


def check_accepted(cfg):
    """What an accepted config promises (config.py, testdata/model-configs)."""
    for field in ("hidden_size", "intermediate_size", "num_attention_heads",
                  "num_key_value_heads", "num_hidden_layers", "vocab_size", "head_dim",
                  "max_position_embeddings"):
        value = getattr(cfg, field)
        assert isinstance(value, int) and 1 <= value <= LIMITS[field], (field, value)
    assert cfg.q_width <= LIMITS["q_width"], cfg.q_width
    for name, n, k in ((p[0], p[1], p[2]) for p in cfg.projections()):
        assert 1 <= n * k <= LIMITS["weight_elements"], (name, n, k)
    assert cfg.head_dim % 2 == 0 and cfg.num_attention_heads % cfg.num_key_value_heads == 0
    assert math.isfinite(cfg.rms_norm_eps) and cfg.rms_norm_eps > 0
    assert math.isfinite(cfg.rope_theta) and cfg.rope_theta > 0


class ConfigMutations(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="qfuse-fuzz-config-")
        self.path = os.path.join(self.tmp.name, "config.json")
        self.findings = os.environ.get("QFUSE_FUZZ_FINDINGS", "fuzz-python-config-findings")
        signal.signal(signal.SIGALRM, self._timeout)

    def tearDown(self):
        signal.alarm(0)
        self.tmp.cleanup()

    @staticmethod
    def _timeout(signum, frame):
        raise Timeout()

    def run_one(self, text, name):
        """None, or why `text` is a finding (written to the findings folder)."""
        with open(self.path, "w") as f:
            f.write(text)
        signal.alarm(PER_INPUT_SECONDS)
        try:
            try:
                cfg = ModelConfig.load(self.path)
            except ConfigError:
                return None
            check_accepted(cfg)
            try:
                emit_model(cfg, EncodingPlan("int4-g128"), batch=1, layers=1)
            except FRONTEND_ERRORS:
                pass
            return None
        except Timeout:
            why = f"no answer within {PER_INPUT_SECONDS} s"
        except Exception as e:  # noqa: BLE001 - any other exception is the finding
            why = f"{type(e).__name__}: {str(e)[:300]}"
        finally:
            signal.alarm(0)
        os.makedirs(self.findings, exist_ok=True)
        out = os.path.join(self.findings, name)
        with open(out, "w") as f:
            f.write(text)
        return f"{name}: {why} (saved to {out})"

    def test_seeds_and_crashes(self):
        self.assertTrue(SEEDS, "fuzz/config/corpus is empty")
        failures = []
        for path in SEEDS + CRASHES:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                why = self.run_one(f.read(), "replay-" + os.path.basename(path))
            if why:
                failures.append(why)
        if failures:
            self.fail("\n".join(failures))

    def test_mutations(self):
        seconds = float(os.environ.get("QFUSE_FUZZ_SECONDS", "10"))
        seed = int(os.environ.get("QFUSE_FUZZ_SEED", "1"))
        configs = []
        for path in SEEDS:
            with open(path) as f:
                try:
                    configs.append(json.load(f))
                except ValueError:
                    pass
        deadline, failures, i = time.monotonic() + seconds, [], 0
        while time.monotonic() < deadline and len(failures) < 20:
            rng = random.Random(f"{seed}:{i}")
            why = self.run_one(mutate(rng, rng.choice(configs)), f"seed{seed}-{i}.json")
            if why:
                failures.append(why)
            i += 1
        print(f"\ntest_config_mutations: {i} mutations of {len(configs)} seeds, "
              f"seed {seed}, {len(failures)} findings")
        if failures:
            self.fail("findings:\n" + "\n".join(failures) + "\nonce fixed, copy the "
                      "files to fuzz/python-config/crashes/ (docs/fuzzing.md)")


if __name__ == "__main__":
    unittest.main()
