"""Hugging Face config.json -> the qf IR of a whole decode step.

Supported architectures: LlamaForCausalLM, MistralForCausalLM,
Qwen2ForCausalLM (rotate-half rotary, GQA, RMSNorm, SiLU-gated MLP).

    cfg = ModelConfig.load("config.json")
    text = emit_model(cfg, EncodingPlan("int4-g128"), batch=1, layers=2)
"""
import json
import os

from . import decode_step
from .encodings import EncodingPlan, is_quantized
from .ir import attribute_text, Module, tensor

ARCHITECTURES = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "Qwen2ForCausalLM": "qwen2",
}
MODEL_TYPES = {v: k for k, v in ARCHITECTURES.items()}

# Hugging Face's defaults where a config may leave a field out.
_DEFAULTS = {
    "llama": {"rope_theta": 10000.0, "max_position_embeddings": 2048,
              "tie_word_embeddings": False, "rms_norm_eps": 1e-6},
    "mistral": {"rope_theta": 10000.0, "max_position_embeddings": 4096 * 32,
                "tie_word_embeddings": False, "rms_norm_eps": 1e-6},
    "qwen2": {"rope_theta": 10000.0, "max_position_embeddings": 32768,
              "tie_word_embeddings": False, "rms_norm_eps": 1e-6},
}
_LLAMA3_FIELDS = ("factor", "low_freq_factor", "high_freq_factor",
                  "original_max_position_embeddings")


class ConfigError(ValueError):
    """A config.json this frontend cannot build: names the file and field."""


class ModelConfig:
    """The fields of a config.json that shape the IR, validated."""

    def __init__(self, raw, source="config.json"):
        self.raw = raw
        self.source = source
        if not isinstance(raw, dict):
            self._fail(None, "is not a JSON object")
        archs = raw.get("architectures")
        if archs is None and raw.get("model_type") in MODEL_TYPES:
            archs = [MODEL_TYPES[raw["model_type"]]]
        if archs is None:
            self._fail("architectures", "is missing; expected one of "
                       + ", ".join(sorted(ARCHITECTURES)))
        if isinstance(archs, str):
            archs = [archs]
        if (not isinstance(archs, list) or len(archs) != 1
                or archs[0] not in ARCHITECTURES):
            self._fail("architectures", f"{archs!r} is not supported; expected "
                       "one of " + ", ".join(sorted(ARCHITECTURES)))
        self.architecture = archs[0]
        self.family = ARCHITECTURES[self.architecture]
        defaults = _DEFAULTS[self.family]

        self.hidden_size = self._int("hidden_size")
        self.intermediate_size = self._int("intermediate_size")
        self.num_attention_heads = self._int("num_attention_heads")
        self.num_hidden_layers = self._int("num_hidden_layers")
        self.vocab_size = self._int("vocab_size")
        self.num_key_value_heads = self._int("num_key_value_heads",
                                             self.num_attention_heads)
        if self.num_attention_heads % self.num_key_value_heads:
            self._fail("num_key_value_heads",
                       f"{self.num_key_value_heads} does not divide "
                       f"num_attention_heads = {self.num_attention_heads}")
        if raw.get("head_dim") is not None:
            self.head_dim = self._int("head_dim")
        else:
            if self.hidden_size % self.num_attention_heads:
                self._fail("hidden_size", f"{self.hidden_size} is not a multiple of "
                           f"num_attention_heads = {self.num_attention_heads} "
                           "(and head_dim is not given)")
            self.head_dim = self.hidden_size // self.num_attention_heads
        if self.head_dim % 2:
            self._fail("head_dim", f"{self.head_dim} is odd; rotary needs an even head_dim")
        self.rms_norm_eps = self._float("rms_norm_eps", defaults["rms_norm_eps"])
        self.rope_theta = self._float("rope_theta", defaults["rope_theta"])
        self.max_position_embeddings = self._int("max_position_embeddings",
                                                 defaults["max_position_embeddings"])
        tie = raw.get("tie_word_embeddings", defaults["tie_word_embeddings"])
        if not isinstance(tie, bool):
            self._fail("tie_word_embeddings", f"{tie!r} is not true or false")
        self.tie_word_embeddings = tie
        act = raw.get("hidden_act", "silu")
        if act != "silu":
            self._fail("hidden_act", f"'{act}' is not supported; expected 'silu'")
        self.rope_llama3 = self._rope_scaling()
        # Qwen2 always has q/k/v biases; Llama/Mistral on attention_bias (q, k,
        # v and o), Llama on mlp_bias (gate, up, down).
        if self.family == "qwen2":
            self.bias = {"q_proj", "k_proj", "v_proj"}
        else:
            self.bias = set()
            if self._bool("attention_bias"):
                self.bias |= {"q_proj", "k_proj", "v_proj", "o_proj"}
            if self._bool("mlp_bias"):
                self.bias |= {"gate_proj", "up_proj", "down_proj"}
        self.sliding_window = None
        if self.family == "mistral" or (self.family == "qwen2" and raw.get("use_sliding_window")):
            sw = raw.get("sliding_window")
            if sw is not None:
                self.sliding_window = self._int("sliding_window")
        self.name = (raw.get("_name_or_path") or
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
        return cls(raw, path)

    # -- field readers --------------------------------------------------------
    def _fail(self, field, what):
        where = f"field '{field}' " if field else ""
        raise ConfigError(f"{self.source}: {where}{what}")

    def _int(self, field, default=None):
        value = self.raw.get(field)
        if value is None:
            if default is None:
                self._fail(field, "is missing; expected a positive integer")
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            self._fail(field, f"is {value!r}; expected a positive integer")
        return value

    def _float(self, field, default):
        value = self.raw.get(field, default)
        if value is None:
            value = default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            self._fail(field, f"is {value!r}; expected a positive number")
        return float(value)

    def _bool(self, field):
        value = self.raw.get(field, False)
        if not isinstance(value, bool):
            self._fail(field, f"is {value!r}; expected true or false")
        return value

    def _rope_scaling(self):
        rs = self.raw.get("rope_scaling")
        if rs is None:
            return None
        if not isinstance(rs, dict):
            self._fail("rope_scaling", f"is {rs!r}; expected an object or null")
        kind = rs.get("rope_type", rs.get("type"))
        if kind in (None, "default"):
            return None
        if kind != "llama3":
            self._fail("rope_scaling", f"has rope_type {kind!r}, which qf.rotary does "
                       "not implement; expected 'llama3' (or null)")
        out = {}
        for key in _LLAMA3_FIELDS:
            value = rs.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                self._fail(f"rope_scaling.{key}", f"is {value!r}; the llama3 rope "
                           "scaling needs a positive number")
            out[key] = value
        if out["high_freq_factor"] <= out["low_freq_factor"]:
            self._fail("rope_scaling.high_freq_factor",
                       f"{out['high_freq_factor']} must exceed low_freq_factor "
                       f"{out['low_freq_factor']}")
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


def _layer_count(cfg, layers):
    if layers is None:
        return cfg.num_hidden_layers
    if layers <= 0 or layers > cfg.num_hidden_layers:
        raise ConfigError(f"--layers {layers}: expected 1..{cfg.num_hidden_layers} "
                          f"(num_hidden_layers in {cfg.source})")
    return layers


def max_seq_for(cfg, max_seq=None):
    """KV cache rows: --max-seq, else max_position_embeddings, capped at a
    sliding window (qf.attention has none, so it is exact only up to it)."""
    limit = cfg.max_position_embeddings
    if cfg.sliding_window:
        limit = min(limit, cfg.sliding_window)
    if max_seq is None:
        return limit
    if max_seq <= 0:
        raise ConfigError(f"--max-seq {max_seq}: expected a positive number of positions")
    if cfg.sliding_window and max_seq > cfg.sliding_window:
        raise ConfigError(
            f"--max-seq {max_seq} exceeds field 'sliding_window' = {cfg.sliding_window} "
            f"of {cfg.source}: qf.attention attends to the whole cache, so the model "
            "is exact only up to the window")
    return max_seq


def emit_decode_step_only(cfg, plan, batch=1, layers=None, progress=None):
    """The linear layers only, every layer with its own weights + lm_head."""
    n = _layer_count(cfg, layers)
    if progress:
        progress.total = n
    return decode_step.emit_full_step(
        cfg.name, cfg.projections(), n, plan.describe(), batch,
        enc_for=plan.text_for, weight_name=decode_step.hf_weight_name,
        progress=progress)


def emit_model(cfg, plan, batch=1, layers=None, max_seq=None, dtype="f16",
               progress=None):
    """The whole decode step of `cfg` as qf IR text.

    @decode_step(input_ids [M], positions [M], per layer key/value caches
    [max_seq, kv_heads * head_dim]) -> (next token ids [M], logits [M, vocab],
    updated caches). The M rows are M consecutive positions of one sequence,
    as qf.attention defines them. `batch=None` leaves M dynamic (`?`): one
    artifact then holds a plan per compiled batch size (decode and prefill
    chunks; docs/decode-model.md). The module's `qf.model` attribute tells
    the runtime the model's shape and cache length.
    """
    n_layers = _layer_count(cfg, layers)
    seq = max_seq_for(cfg, max_seq)
    if batch is not None and batch <= 0:
        raise ConfigError(f"--batch {batch}: expected a positive number of rows")
    if dtype not in ("f16", "bf16"):
        raise ConfigError(f"--dtype {dtype}: expected f16 or bf16")
    H, M, D = cfg.hidden_size, batch, cfg.head_dim
    rope = f"rope theta {cfg.rope_theta:g}" + (", llama3 scaling" if cfg.rope_llama3 else "")
    module = Module([
        f"{cfg.name}: whole decode step, {n_layers} of {cfg.num_hidden_layers} layers, "
        f"{plan.describe()}, batch {'M (dynamic)' if batch is None else batch}, {dtype}.",
        f"{cfg.summary()}; {rope}; KV cache of {seq} positions"
        + (f" (sliding_window {cfg.sliding_window})" if cfg.sliding_window else "") + ".",
        "Generated by python-frontend (qfuse emit).",
    ])
    module.attributes["qf.model"] = attribute_text({
        "architecture": cfg.architecture,
        "vocab_size": cfg.vocab_size,
        "hidden_size": H,
        "intermediate_size": cfg.intermediate_size,
        "num_layers": n_layers,
        "num_heads": cfg.num_attention_heads,
        "num_kv_heads": cfg.num_key_value_heads,
        "head_dim": D,
        "max_seq": seq,
        "tie_word_embeddings": bool(cfg.tie_word_embeddings),
        "encoding": plan.describe(),
    })
    f = module.func("decode_step")
    ids = f.arg("ids", tensor(M, elt="i32"), "input_ids")
    pos = f.arg("pos", tensor(M, elt="i32"), "positions")
    caches = []
    for i in range(n_layers):
        kc = f.arg(f"kc{i}", tensor(seq, cfg.kv_width, elt=dtype),
                   f"model.layers.{i}.self_attn.key_cache")
        vc = f.arg(f"vc{i}", tensor(seq, cfg.kv_width, elt=dtype),
                   f"model.layers.{i}.self_attn.value_cache")
        caches.append((kc, vc))

    widths = {kind: n for kind, n, _ in cfg.projections()}

    def linear(x, weight, kind, hint):
        bias = f"{weight}.bias" if kind in cfg.bias else None
        return f.linear(x, weight, widths[kind], plan.text_for(weight, kind), bias, hint)

    embed = f.tensor_ref("model.embed_tokens.weight", tensor(cfg.vocab_size, H, elt=dtype),
                         "embed")
    h = f.embedding(embed, ids, "h")
    if progress:
        progress.total = n_layers
    new_caches = []
    for i in range(n_layers):
        p = f"model.layers.{i}"
        f.comment(f"layer {i}")
        g = f.tensor_ref(f"{p}.input_layernorm.weight", tensor(H, elt=dtype), f"g{i}")
        x = f.rms_norm(h, g, cfg.rms_norm_eps, f"x{i}")
        q = linear(x, f"{p}.self_attn.q_proj", "q_proj", f"q{i}")
        k = linear(x, f"{p}.self_attn.k_proj", "k_proj", f"k{i}")
        v = linear(x, f"{p}.self_attn.v_proj", "v_proj", f"v{i}")
        q = f.rotary(q, pos, D, cfg.rope_theta, cfg.rope_llama3, f"qr{i}")
        k = f.rotary(k, pos, D, cfg.rope_theta, cfg.rope_llama3, f"kr{i}")
        o, kc, vc = f.attention(q, k, v, caches[i][0], caches[i][1], pos,
                                cfg.num_attention_heads, cfg.num_key_value_heads, D,
                                f"attn{i}")
        new_caches += [kc, vc]
        o = linear(o, f"{p}.self_attn.o_proj", "o_proj", f"o{i}")
        h = f.add(h, o, f"h{i}a")
        g2 = f.tensor_ref(f"{p}.post_attention_layernorm.weight", tensor(H, elt=dtype),
                          f"g{i}m")
        x2 = f.rms_norm(h, g2, cfg.rms_norm_eps, f"x{i}m")
        gate = linear(x2, f"{p}.mlp.gate_proj", "gate_proj", f"gate{i}")
        up = linear(x2, f"{p}.mlp.up_proj", "up_proj", f"up{i}")
        act = f.silu_mul(gate, up, f"act{i}")
        down = linear(act, f"{p}.mlp.down_proj", "down_proj", f"down{i}")
        h = f.add(h, down, f"h{i}")
        if progress:
            progress.update(i + 1)
    f.comment("final norm, lm_head, greedy token")
    gn = f.tensor_ref("model.norm.weight", tensor(H, elt=dtype), "gnorm")
    xn = f.rms_norm(h, gn, cfg.rms_norm_eps, "xnorm")
    lm_text = plan.text_for("lm_head", "lm_head")
    if cfg.tie_word_embeddings and not is_quantized(lm_text) and lm_text.strip() != "f16":
        # Tied, dense, no cuBLAS lowering: lm_head is the embedding table itself.
        logits = f.matmul(xn, embed, "logits")
    elif cfg.tie_word_embeddings:
        # Tied: a (packed, or dense f16) copy of the embedding table.
        w = f.weight_ref("lm_head", cfg.vocab_size, H, lm_text, hint="wlm",
                         attrs='qf.tied = "model.embed_tokens.weight"')
        logits = f.matmul(xn, w, "logits")
    else:
        logits = linear(xn, "lm_head", "lm_head", "logits")
    nxt = f.argmax(logits, "next")
    f.ret([nxt, logits] + new_caches, ["next_token", "logits"])
    return module.text()


__all__ = ["ARCHITECTURES", "ConfigError", "EncodingPlan", "ModelConfig",
           "emit_decode_step_only", "emit_model", "max_seq_for"]
