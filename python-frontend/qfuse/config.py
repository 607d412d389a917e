"""A Hugging Face config.json, validated: the fields that shape the IR.

The rules (and their messages) are the C++ reference reader's
(runtime/reference/src/ModelConfig.cpp); both are tested against one table,
testdata/model-configs/cases.json, whose README lists the size limits.

    cfg = ModelConfig.load("config.json")   # ConfigError names file and field
"""
import json
import math
import os

from . import decode_step

ARCHITECTURES = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "Qwen2ForCausalLM": "qwen2",
}
MODEL_TYPES = {v: k for k, v in ARCHITECTURES.items()}

# Upper bounds, so that every size and every product of sizes stays far from
# int64 and every weight fits one GPU. Each is several times the largest
# real model's (Llama-3.1-405B: 126 layers, hidden 16384, intermediate
# 53248, 128 heads; vocabularies of 256k; contexts of 10M).
LIMITS = {
    "num_hidden_layers": 1 << 10,
    "hidden_size": 1 << 17,
    "intermediate_size": 1 << 20,
    "num_attention_heads": 1 << 12,
    "num_key_value_heads": 1 << 12,
    "head_dim": 1 << 12,
    "vocab_size": 1 << 22,
    "max_position_embeddings": 1 << 24,
    "sliding_window": 1 << 24,
    # num_attention_heads * head_dim: the q_proj output and o_proj input.
    "q_width": 1 << 17,
    # N * K of one weight matrix: 32 GiB in f16.
    "weight_elements": 1 << 34,
}

# Hugging Face's defaults where a config may leave a field out (or write null).
_MAX_POSITIONS = {"llama": 2048, "mistral": 4096 * 32, "qwen2": 32768}
_LLAMA3_FIELDS = ("factor", "low_freq_factor", "high_freq_factor",
                  "original_max_position_embeddings")


class ConfigError(ValueError):
    """A config.json this frontend cannot build: names the file and field."""


def _text(value):
    """A value as compact JSON (as the C++ reader's messages show it)."""
    try:
        return json.dumps(value, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def _scaling_text(llama3):
    """A rope scaling in a message, as the C++ reader writes it."""
    if llama3 is None:
        return "no scaling"
    return "llama3 scaling (" + ", ".join(f"{key} {_text(llama3[key])}"
                                          for key in _LLAMA3_FIELDS) + ")"


def _is_number(value):
    """A finite JSON number: not a bool, and not an integer past float's
    range (10**400 is valid JSON, but no float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


class ModelConfig:
    """The fields of a config.json that shape the IR, validated."""

    def __init__(self, raw, source="config.json"):
        self.raw = raw
        self.source = source
        if not isinstance(raw, dict):
            raise ConfigError(f"{source}: is {type(raw).__name__}, expected a JSON object")
        self.architecture = self._architecture()
        self.family = ARCHITECTURES[self.architecture]

        self.hidden_size = self._int("hidden_size")
        self.intermediate_size = self._int("intermediate_size")
        self.num_attention_heads = self._int("num_attention_heads")
        self.num_hidden_layers = self._int("num_hidden_layers")
        self.vocab_size = self._int("vocab_size")
        self.num_key_value_heads = self._int("num_key_value_heads",
                                             self.num_attention_heads)
        if self.num_attention_heads % self.num_key_value_heads:
            self._fail("num_key_value_heads",
                       f"is {self.num_key_value_heads}, which does not divide "
                       f"num_attention_heads = {self.num_attention_heads}")
        if self._get("head_dim") is not None:
            self.head_dim = self._int("head_dim")
        else:
            if self.hidden_size % self.num_attention_heads:
                self._fail("hidden_size", f"is {self.hidden_size}, not a multiple of "
                           f"num_attention_heads = {self.num_attention_heads} "
                           "(and head_dim is not given)")
            self.head_dim = self.hidden_size // self.num_attention_heads
            # The limit holds for head_dim however it is set.
            if self.head_dim > LIMITS["head_dim"]:
                self._fail("hidden_size", f"is {self.hidden_size}; hidden_size / "
                           f"num_attention_heads = {self.head_dim} (head_dim is not "
                           f"given), expected at most {LIMITS['head_dim']}")
        if self.head_dim % 2:
            self._fail("head_dim", f"is {self.head_dim}; rotate-half rotary needs an "
                       "even head_dim")
        self._check_products()

        self.max_position_embeddings = self._int("max_position_embeddings",
                                                 _MAX_POSITIONS[self.family])
        self.rms_norm_eps = self._float("rms_norm_eps", 1e-6)
        self.rope_theta, self.rope_llama3 = self._rope()
        self.tie_word_embeddings = self._bool("tie_word_embeddings")
        act = self._get("hidden_act")
        if act is not None and act != "silu":
            self._fail("hidden_act", f"is {_text(act)}, which is not supported; "
                       "expected \"silu\"")
        # Qwen2 always has q/k/v biases; Llama/Mistral on attention_bias (q, k,
        # v and o) and mlp_bias (gate, up, down).
        if self.family == "qwen2":
            self.bias = {"q_proj", "k_proj", "v_proj"}
        else:
            self.bias = set()
            if self._bool("attention_bias"):
                self.bias |= {"q_proj", "k_proj", "v_proj", "o_proj"}
            if self._bool("mlp_bias"):
                self.bias |= {"gate_proj", "up_proj", "down_proj"}
        # Mistral applies sliding_window whenever it is set; Qwen2 only under
        # use_sliding_window; Llama has none.
        self.sliding_window = None
        windowed = self.family == "mistral" or (
            self.family == "qwen2" and self._bool("use_sliding_window"))
        if windowed and self._get("sliding_window") is not None:
            self.sliding_window = self._int("sliding_window")
        name = self.raw.get("_name_or_path")
        self.name = ((name if isinstance(name, str) else None) or
                     os.path.basename(os.path.dirname(os.path.abspath(source))) or
                     self.family)

    @classmethod
    def load(cls, path):
        try:
            with open(path) as f:
                raw = json.load(f)
        except OSError as e:
            raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None
        except ValueError as e:
            # An integer of more than sys.get_int_max_str_digits() digits.
            raise ConfigError(f"{path}: not JSON: {e}") from None
        except RecursionError:
            raise ConfigError(f"{path}: not JSON: nested too deeply") from None
        return cls(raw, path)

    # -- field readers --------------------------------------------------------
    def _fail(self, field, what):
        raise ConfigError(f"{self.source}: field '{field}' {what}")

    def _get(self, field, obj=None):
        """The value of `field`, None when absent or null (Hugging Face
        writes null for "use the default")."""
        return (self.raw if obj is None else obj).get(field)

    def _architecture(self):
        expected = "; expected one of " + ", ".join(sorted(ARCHITECTURES))
        archs = self._get("architectures")
        if archs is None:
            # Older configs name only the model type.
            model_type = self._get("model_type")
            if isinstance(model_type, str) and model_type in MODEL_TYPES:
                return MODEL_TYPES[model_type]
            self._fail("architectures", "is missing" + expected)
        listed = [archs] if isinstance(archs, str) else archs
        if (not isinstance(listed, list) or len(listed) != 1
                or not isinstance(listed[0], str) or listed[0] not in ARCHITECTURES):
            self._fail("architectures",
                       f"is {_text(archs)}, which is not supported" + expected)
        return listed[0]

    def _int(self, field, default=None):
        """A positive integer no larger than LIMITS[field]."""
        limit = LIMITS[field]
        expected = f"expected an integer from 1 to {limit}"
        value = self._get(field)
        if value is None:
            if default is None:
                self._fail(field, "is missing; " + expected)
            return default
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
            self._fail(field, f"is {_text(value)}; " + expected)
        return value

    def _float(self, field, default, obj=None, name=None):
        value = self._get(field, obj)
        if value is None:
            if default is None:
                self._fail(name or field, "is missing; expected a positive number")
            return default
        if not _is_number(value) or value <= 0:
            self._fail(name or field, f"is {_text(value)}; expected a positive number")
        return float(value)

    def _bool(self, field):
        value = self._get(field)
        if value is None:
            return False
        if not isinstance(value, bool):
            self._fail(field, f"is {_text(value)}; expected true or false")
        return value

    def _check_products(self):
        """Products of the sizes against LIMITS (each factor is bounded, so
        no product can overflow)."""
        q = self.num_attention_heads * self.head_dim
        if q > LIMITS["q_width"]:
            self._fail("head_dim", f"is {self.head_dim}; num_attention_heads * head_dim "
                       f"= {q}, expected at most {LIMITS['q_width']} (the q_proj width)")
        most = LIMITS["weight_elements"]
        for field, size, weights in (
                ("intermediate_size", self.intermediate_size,
                 "gate_proj, up_proj and down_proj"),
                ("vocab_size", self.vocab_size, "lm_head and embed_tokens")):
            if size * self.hidden_size > most:
                self._fail(field, f"is {size}; {field} * hidden_size = "
                           f"{size * self.hidden_size} elements in {weights}, expected "
                           f"at most {most} per weight")

    # -- the rotary -----------------------------------------------------------
    # Two spellings: transformers 5 writes `rope_parameters` ({"rope_type",
    # "rope_theta", and the type's fields}; per layer type in some models),
    # older versions a top-level `rope_theta` and `rope_scaling`. Either is
    # read; when both are given they must agree.
    def _rope(self):
        """(theta, llama3 scaling dict or None)."""
        # Some configs give a partial rotary at the top level rather than in
        # rope_parameters.
        partial = self._float("partial_rotary_factor", 1.0)
        if partial != 1.0:
            self._fail("partial_rotary_factor",
                       f"is {_text(partial)}; qfuse rotates the whole head (expected 1.0)")
        theta = self._float("rope_theta", 10000.0)
        scaling = self._get("rope_scaling")
        llama3 = None
        if scaling is not None:
            if not isinstance(scaling, dict):
                self._fail("rope_scaling", f"is {_text(scaling)}; expected an object or null")
            llama3 = self._rope_type(scaling, "rope_scaling")
        params = self._get("rope_parameters")
        if params is None:
            return theta, llama3
        new_theta, new_llama3 = self._rope_parameters(params, theta)
        disagree = "; the two spellings of the rotary disagree (keep one)"
        if self._get("rope_theta") is not None and new_theta != theta:
            self._fail("rope_parameters", f"has rope_theta {_text(new_theta)}, but field "
                       f"'rope_theta' is {_text(theta)}" + disagree)
        if scaling is not None and new_llama3 != llama3:
            self._fail("rope_parameters", f"has {_scaling_text(new_llama3)}, but field "
                       f"'rope_scaling' has {_scaling_text(llama3)}" + disagree)
        return new_theta, new_llama3

    def _rope_parameters(self, params, theta):
        """(theta, llama3) of `rope_parameters`; `theta` (the top-level
        rope_theta, or its default) where it names none, as transformers does."""
        if not isinstance(params, dict):
            self._fail("rope_parameters", f"is {_text(params)}; expected an object or null")
        layer_types = sorted(k for k, v in params.items() if isinstance(v, dict))
        if not layer_types:
            return self._rope_object(params, "rope_parameters", theta)
        # One object per layer type ({"full_attention": {...}, ...}).
        for key in sorted(params):
            if not isinstance(params[key], dict):
                self._fail(f"rope_parameters.{key}",
                           f"is {_text(params[key])}; expected an object, as "
                           f"rope_parameters.{layer_types[0]} is (rope_parameters holds "
                           "either one rotary or one object per layer type)")
        rotaries = [(key, self._rope_object(params[key], f"rope_parameters.{key}", theta))
                    for key in layer_types]
        if any(r != rotaries[0][1] for _, r in rotaries):
            listed = "; ".join(f"{key}: rope_theta {_text(t)}, {_scaling_text(s)}"
                               for key, (t, s) in rotaries)
            self._fail("rope_parameters", f"gives the layer types different rotaries "
                       f"({listed}); qfuse applies one rotary to every layer")
        return rotaries[0][1]

    def _rope_object(self, obj, name, theta):
        """(theta, llama3) of one rope_parameters object named `name`."""
        theta = self._float("rope_theta", theta, obj, f"{name}.rope_theta")
        partial = self._float("partial_rotary_factor", 1.0, obj,
                              f"{name}.partial_rotary_factor")
        if partial != 1.0:
            self._fail(f"{name}.partial_rotary_factor",
                       f"is {_text(partial)}; qfuse rotates the whole head (expected 1.0)")
        return theta, self._rope_type(obj, name)

    def _rope_type(self, obj, name):
        """The llama3 scaling of a rope_scaling / rope_parameters object, or
        None for none ("default", or no type)."""
        # transformers reads "rope_type", falling back to the older "type".
        kind = self._get("rope_type", obj)
        if kind is None:
            kind = self._get("type", obj)
        if kind is None or kind == "default":
            return None
        if kind != "llama3":
            self._fail(name, f"has rope_type {_text(kind)}, which the reference (and "
                       "qf.rotary) does not implement; expected \"llama3\", \"default\" "
                       "or null")
        out = {key: self._float(key, None, obj, f"{name}.{key}") for key in _LLAMA3_FIELDS}
        original = out["original_max_position_embeddings"]
        if original > LIMITS["max_position_embeddings"]:
            self._fail(f"{name}.original_max_position_embeddings",
                       f"is {_text(original)}; expected at most "
                       f"{LIMITS['max_position_embeddings']}")
        # The smoothing between the two wavelengths divides by their difference.
        if not out["high_freq_factor"] > out["low_freq_factor"]:
            self._fail(f"{name}.high_freq_factor",
                       f"is {_text(out['high_freq_factor'])}; expected more than "
                       f"low_freq_factor = {_text(out['low_freq_factor'])}")
        return out

    # -- shapes ---------------------------------------------------------------
    @property
    def q_width(self):
        return self.num_attention_heads * self.head_dim

    @property
    def kv_width(self):
        return self.num_key_value_heads * self.head_dim

    def projections(self):
        return decode_step.projections(self.hidden_size, self.kv_width,
                                       self.intermediate_size, self.vocab_size,
                                       self.q_width)

    def summary(self):
        return (f"{self.architecture}: hidden {self.hidden_size}, intermediate "
                f"{self.intermediate_size}, {self.num_attention_heads} heads / "
                f"{self.num_key_value_heads} kv heads of {self.head_dim}, "
                f"{self.num_hidden_layers} layers, vocab {self.vocab_size}")


__all__ = ["ARCHITECTURES", "ConfigError", "LIMITS", "ModelConfig"]
