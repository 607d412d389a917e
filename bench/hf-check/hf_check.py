#!/usr/bin/env python3
"""qfuse's logits against transformers, teacher-forced (issue 21 part 5).

On the GPU machine (scripts/gpu-round.sh, ONLY=hf), for every config in
bench/hf-check/configs/ (Llama with Llama-3 rope scaling, Mistral with an
explicit head_dim, Qwen2 with q/k/v biases, Qwen2 with tied embeddings):

1. models: transformers builds the model from the config
   (AutoModelForCausalLM.from_config) with random weights from a fixed
   seed, rounds them to fp16 and writes a real checkpoint (save_pretrained,
   safetensors). On one token sequence it computes the logits at every
   position: in fp32 (the oracle), in fp16 (eager and sdpa attention: its
   own fp16 error), and both again with every linear weight qfuse quantizes
   replaced by its int4-g128 round-to-nearest value (rtn_int4_g128, the
   grid of format/src/Quantize.cpp).
2. qfuse: each checkpoint through the fp16 and the int4-g128 artifacts
   bench/make-gpu-checks.sh compiled from the same configs, with the
   Python bindings (Runtime.load_checkpoint, Runtime.teacher_forced_logits):
   the same tokens as prefill chunks of 32 and 8 rows, a chunk of 5 rows
   padded to 8, then single decode steps (graph-free plan runs).
3. compare: each build's logits against the fp32 oracle of the same weights
   (dense for fp16, RTN for int4), per kind of position; the tolerance is
   transformers' own fp16 error on those weights times MARGIN
   (docs/decode-model.md, section 6).

Each phase is its own process (torch and qfuse never share a CUDA context);
`all` (the default) runs the three. Writes WORK/<model>/ (checkpoints,
logits), OUT/hf-check.json and prints a table; exit 1 on any failure.

    bench/hf-check/hf_check.py [all|models|qfuse|compare]
        [--artifacts .devcarry/gpu-checks/hf] [--work /tmp/hf-check]
        [--out gpu-out/results] [--lib build-gpu/lib/libqfuse_c.so]
        [--only llama3,qwen2]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CONFIGS = os.path.join(HERE, "configs")
SEED = 20261202
# The sequence: prefill chunks (plan batch, real rows), then decode steps.
# The 5-row chunk runs padded through the 8-row plan, as the Generator pads
# a prompt's last chunk; its padding rows' logits are not compared.
CHUNKS = [(32, 32), (8, 8), (8, 5)] + [(1, 1)] * 19
BATCH_SIZES = "1,8,32"
MAX_SEQ = 128
BUILDS = ("fp16", "int4-g128")
# The tolerance: MARGIN x transformers' fp16 error (the larger of eager and
# sdpa attention) on the same weights, and never below FLOOR_ULPS fp16 ulps
# of the largest logit (the rounding of the f16 logits buffer itself).
MARGIN = 2.0
FLOOR_ULPS = 1.0
# Linear weights qfuse quantizes in an int4-g128 build (every projection and
# lm_head; python-frontend/qfuse/encodings.py PROJECTIONS). Embeddings,
# norms and biases stay dense.
QUANTIZED = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
             "down_proj")


def model_names(only=None):
    names = sorted(f[:-5] for f in os.listdir(CONFIGS) if f.endswith(".json"))
    if only:
        wanted = only.split(",")
        unknown = set(wanted) - set(names)
        if unknown:
            sys.exit(f"hf_check: unknown model {sorted(unknown)[0]!r} "
                     f"({', '.join(names)})")
        names = [n for n in names if n in wanted]
    return names


def load_config(name):
    with open(os.path.join(CONFIGS, name + ".json")) as f:
        return json.load(f)


def tokens_for(config):
    """The teacher-forced sequence: fixed random ids over the vocabulary."""
    rng = np.random.default_rng(SEED)
    total = sum(real for _, real in CHUNKS)
    return rng.integers(0, config["vocab_size"], size=total).astype(np.int32)


def position_kinds():
    """The kind of every position of the sequence, in order."""
    kinds = []
    for batch, real in CHUNKS:
        if batch == 1:
            kind = "decode"
        else:
            kind = f"prefill-{batch}" + ("-padded" if real < batch else "")
        kinds += [kind] * real
    return kinds


# -- int4-g128 round-to-nearest, as format/ defines it ------------------------
def ceil_f16(values):
    """The smallest f16 >= each (positive, finite) value: format::storeScale
    for an f16 scale (round to nearest, then one code up when below)."""
    h = values.astype(np.float16)
    below = h.astype(np.float64) < values
    bits = h.view(np.uint16).copy()
    bits[below] += 1  # positive: the next code is the next value up
    return bits.view(np.float16)


def rtn_int4_g128(w):
    """Round-to-nearest int4, group 128, f16 scale, symmetric (format/src/
    Quantize.cpp; format/include/qfuse/format/Packing.h quantizeRTN):
    per row and group of 128 columns, s = amax / 7 rounded UP to f16 (1 for
    an all-zero group), q = clamp(rint(w / s), -7, 7) with ties to even,
    value = q * s. `w`: [N, K] float array; returns float32 values."""
    w = np.asarray(w, dtype=np.float32)
    n, k = w.shape
    if k % 128:
        raise ValueError(f"rtn_int4_g128: K = {k} is not a multiple of 128 "
                         "(the configs keep every K whole groups)")
    g = w.astype(np.float64).reshape(n, k // 128, 128)
    amax = np.abs(g).max(axis=2, keepdims=True)
    exact = amax / 7.0
    scale = np.where(amax > 0, ceil_f16(np.where(amax > 0, exact, 1.0))
                     .astype(np.float64), 1.0)
    q = np.clip(np.rint(g / scale), -7, 7)
    return (q * scale).reshape(n, k).astype(np.float32)


# -- phase 1: transformers ----------------------------------------------------
def _init_weights(model, config, torch):
    """Deterministic random weights at scales that keep activations O(1)
    (attention is far from uniform, so rotary and positions matter): linear
    weights N(0, 1/K), embeddings N(0, 1), norm weights 1 + N(0, 0.1^2),
    biases N(0, 0.25^2) (from_config leaves biases 0 and norms 1, which would
    hide them)."""
    gen = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))
            elif name.endswith(".bias"):
                p.copy_(0.25 * torch.randn(p.shape, generator=gen))
            elif "embed_tokens" in name:
                p.copy_(torch.randn(p.shape, generator=gen))
            elif p.dim() == 2:
                p.copy_(torch.randn(p.shape, generator=gen) / p.shape[1] ** 0.5)
            else:
                raise RuntimeError(f"hf_check: no initialization rule for {name}")


def _effective_rope(hf_config):
    """What transformers will use for rotary (v5: rope_parameters; v4:
    rope_theta and rope_scaling), as plain JSON."""
    out = {}
    for key in ("rope_parameters", "rope_scaling", "rope_theta"):
        try:
            value = getattr(hf_config, key, None)
        except Exception:  # noqa: BLE001 (a deprecated alias that raises)
            value = None
        if value is not None:
            out[key] = value if not hasattr(value, "items") else dict(value)
    return json.loads(json.dumps(out, default=str))


def _check_rope(name, config, rope):
    """transformers must have taken the config's rotary settings (its config
    API changed across versions): theta and the Llama 3 scaling."""
    params = rope.get("rope_parameters") or {}
    if isinstance(params, dict) and params and all(isinstance(v, dict)
                                                   for v in params.values()):
        params = next(iter(params.values()))  # per attention type
    scaling = rope.get("rope_scaling") or {}
    theta = params.get("rope_theta", rope.get("rope_theta"))
    if theta is None or abs(float(theta) - float(config.get("rope_theta", 10000.0))) > 1e-6:
        raise RuntimeError(f"{name}: transformers' rope theta is {theta}, the config "
                           f"says {config.get('rope_theta')} (effective: {rope})")
    want = config.get("rope_scaling")
    if want:
        got = dict(scaling or {}, **params)
        kind = got.get("rope_type", got.get("type"))
        if kind != want["rope_type"]:
            raise RuntimeError(f"{name}: transformers' rope type is {kind!r}, the "
                               f"config says {want['rope_type']!r} ({rope})")
        for key in ("factor", "low_freq_factor", "high_freq_factor",
                    "original_max_position_embeddings"):
            if float(got.get(key, -1)) != float(want[key]):
                raise RuntimeError(f"{name}: transformers' rope {key} is "
                                   f"{got.get(key)}, the config says {want[key]}")


def _config_read_back(name, config, model_dir):
    """qfuse's config reader (python-frontend) on the config.json that
    transformers wrote, against the repository's: the fields that shape the
    IR. The artifacts here were compiled from the repository's config, so a
    difference does not change the numbers below, but it is what
    `qfuse generate --model DIR` would compile."""
    sys.path.insert(0, os.path.join(REPO, "python-frontend"))
    from qfuse.config import ModelConfig  # noqa: E402 (host-only module)
    ours = ModelConfig(config, f"bench/hf-check/configs/{name}.json")
    try:
        theirs = ModelConfig.load(os.path.join(model_dir, "config.json"))
    except Exception as e:  # noqa: BLE001 (recorded, not raised)
        return {"match": False, "error": str(e)}
    fields = ("architecture", "hidden_size", "intermediate_size",
              "num_attention_heads", "num_key_value_heads", "head_dim",
              "num_hidden_layers", "vocab_size", "rms_norm_eps", "rope_theta",
              "rope_llama3", "tie_word_embeddings", "bias", "sliding_window")
    diffs = {}
    for f in fields:
        a, b = getattr(ours, f), getattr(theirs, f)
        if isinstance(a, set):
            a, b = sorted(a), sorted(b)
        if a != b:
            diffs[f] = {"repository": a, "transformers": b}
    return {"match": not diffs, "differences": diffs}


def phase_models(args):
    import copy
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    device = "cuda" if torch.cuda.is_available() else "cpu"
    # fp32 means fp32: no TF32 in the oracle's matmuls.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        torch.set_float32_matmul_precision("highest")
    except Exception:  # noqa: BLE001
        pass
    info = {"transformers": transformers.__version__, "torch": torch.__version__,
            "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
            "models": {}}
    for name in model_names(args.only):
        t0 = time.monotonic()
        config = load_config(name)
        fields = {k: v for k, v in config.items() if k != "model_type"}
        hf_config = AutoConfig.for_model(config["model_type"], **fields)
        torch.manual_seed(SEED)
        model = AutoModelForCausalLM.from_config(hf_config, attn_implementation="eager")
        _init_weights(model, config, torch)
        model = model.half().eval()  # the checkpoint's weights are these fp16 values
        rope = _effective_rope(model.config)
        _check_rope(name, config, rope)
        tied = bool(config.get("tie_word_embeddings"))
        embed = model.get_input_embeddings().weight
        head = model.get_output_embeddings().weight
        if tied != (embed.data_ptr() == head.data_ptr()):
            raise RuntimeError(f"{name}: tie_word_embeddings is {tied} but transformers "
                               f"{'does not share' if tied else 'shares'} the tensors")
        model_dir = os.path.join(args.work, name)
        os.makedirs(model_dir, exist_ok=True)
        try:
            model.save_pretrained(model_dir, safe_serialization=True)
        except TypeError:  # a version without the argument: safetensors only
            model.save_pretrained(model_dir)
        saved = os.listdir(model_dir)
        if "model.safetensors" not in saved and "model.safetensors.index.json" not in saved:
            raise RuntimeError(f"{name}: save_pretrained wrote {sorted(saved)}, no "
                               "safetensors")
        ids = tokens_for(config)
        np.save(os.path.join(model_dir, "tokens.npy"), ids)
        input_ids = torch.tensor(ids[None, :].astype(np.int64), device=device)

        def logits(m, dtype, attn):
            m = copy.deepcopy(m).to(device=device, dtype=dtype)
            try:
                m.set_attn_implementation(attn)
            except Exception:  # noqa: BLE001 (older versions: the config says)
                m.config._attn_implementation = attn
            attention[f"{dtype}".replace("torch.", "") + "-" + attn] = str(
                getattr(m.config, "_attn_implementation", None))
            with torch.no_grad():
                out = m(input_ids=input_ids, use_cache=False).logits[0]
            result = out.float().cpu().numpy()
            del m
            return result

        def rtn_model(m):
            q = copy.deepcopy(m).float()
            with torch.no_grad():
                for pname, p in q.named_parameters():
                    kind = pname.split(".")[-2] if pname.endswith(".weight") else ""
                    if kind in QUANTIZED:
                        p.copy_(torch.from_numpy(rtn_int4_g128(p.detach().numpy())))
                # lm_head: quantized; when tied, a quantized copy of the
                # embedding table while the lookup keeps the dense one.
                dense = q.get_output_embeddings().weight.detach().numpy()
                q.get_output_embeddings().weight = torch.nn.Parameter(
                    torch.from_numpy(rtn_int4_g128(dense)))
            if q.get_output_embeddings().weight.data_ptr() == \
                    q.get_input_embeddings().weight.data_ptr():
                raise RuntimeError(f"{name}: lm_head still shares the embedding")
            # fp32: q * s needs up to 14 significant bits, more than f16 has;
            # the fp16 baselines round them as any fp16 run of it would.
            return q

        refs, attention = {}, {}
        dense32 = model.float()
        refs["hf-fp32"] = logits(dense32, torch.float32, "eager")
        refs["hf-fp16-eager"] = logits(dense32, torch.float16, "eager")
        refs["hf-fp16-sdpa"] = logits(dense32, torch.float16, "sdpa")
        quant = rtn_model(dense32)
        refs["hf-rtn-fp32"] = logits(quant, torch.float32, "eager")
        refs["hf-rtn-fp16-eager"] = logits(quant, torch.float16, "eager")
        refs["hf-rtn-fp16-sdpa"] = logits(quant, torch.float16, "sdpa")
        for key, value in refs.items():
            if not np.isfinite(value).all():
                raise RuntimeError(f"{name}: transformers' {key} logits are not finite")
            np.save(os.path.join(model_dir, f"{key}.npy"), value)
        info["models"][name] = {
            "config": f"bench/hf-check/configs/{name}.json",
            "architecture": config["architectures"][0],
            "transformers_rope": rope,
            "tied": tied,
            "attention_used": attention,
            "config_read_back": _config_read_back(name, config, model_dir),
            "checkpoint_files": sorted(saved),
            "seconds": round(time.monotonic() - t0, 1),
        }
        print(f"models: {name}: checkpoint and {len(refs)} transformers runs in "
              f"{time.monotonic() - t0:.1f} s", flush=True)
    with open(os.path.join(args.work, "models.json"), "w") as f:
        json.dump(info, f, indent=1)
    return 0


# -- phase 2: qfuse -----------------------------------------------------------
def phase_qfuse(args):
    if args.lib:
        os.environ["QFUSE_C_LIBRARY"] = os.path.abspath(args.lib)
    sys.path.insert(0, os.path.join(REPO, "python-frontend"))
    from qfuse.runtime import Runtime  # noqa: E402

    for name in model_names(args.only):
        model_dir = os.path.join(args.work, name)
        ids = np.load(os.path.join(model_dir, "tokens.npy"))
        for build in BUILDS:
            t0 = time.monotonic()
            artifact = os.path.join(args.artifacts, f"{name}-{build}.qfa")
            with Runtime(artifact) as rt:
                rt.load_checkpoint(model_dir)
                logits = rt.teacher_forced_logits(ids, CHUNKS)
            np.save(os.path.join(model_dir, f"qfuse-{build}.npy"), logits)
            print(f"qfuse: {name} {build}: {len(ids)} positions in "
                  f"{time.monotonic() - t0:.1f} s", flush=True)
    return 0


# -- phase 3: compare ---------------------------------------------------------
def _errors(x, ref):
    """Per position: max |x - ref|, ||x - ref||_2 / ||ref||_2."""
    d = x.astype(np.float64) - ref.astype(np.float64)
    max_abs = np.abs(d).max(axis=1)
    rel = np.linalg.norm(d, axis=1) / np.maximum(np.linalg.norm(ref, axis=1), 1e-30)
    return max_abs, rel


def _ulp_f16(x):
    """The f16 spacing at |x| (x within f16's normal range)."""
    x = np.float16(abs(x))
    return float(np.spacing(x))


def compare_one(name, build, model_dir):
    """One model and build: the numbers and the verdict."""
    quantized = build != "fp16"
    prefix = "hf-rtn-" if quantized else "hf-"
    ref = np.load(os.path.join(model_dir, prefix + "fp32.npy"))
    baselines = {a: np.load(os.path.join(model_dir, f"{prefix}fp16-{a}.npy"))
                 for a in ("eager", "sdpa")}
    ours = np.load(os.path.join(model_dir, f"qfuse-{build}.npy"))
    if ours.shape != ref.shape:
        raise RuntimeError(f"{name} {build}: qfuse logits {ours.shape}, transformers "
                           f"{ref.shape}")
    kinds = np.array(position_kinds())
    base = {a: _errors(b, ref) for a, b in baselines.items()}
    base_abs = max(float(e[0].max()) for e in base.values())
    base_rel = max(float(e[1].max()) for e in base.values())
    floor = FLOOR_ULPS * _ulp_f16(float(np.abs(ref).max()))
    tol_abs = max(MARGIN * base_abs, floor)
    tol_rel = max(MARGIN * base_rel, FLOOR_ULPS * 2.0 ** -11)
    max_abs, rel = _errors(ours, ref)
    finite = bool(np.isfinite(ours).all())
    top = np.argsort(ref, axis=1)[:, -2:]
    ref_arg = top[:, 1]
    gap = ref[np.arange(len(ref)), top[:, 1]] - ref[np.arange(len(ref)), top[:, 0]]
    ours_arg = ours.argmax(axis=1)
    # A position whose top-two gap is within twice the tolerance is a near
    # tie: its argmax may flip within tolerance and is not required.
    decided = gap > 2 * tol_abs
    arg_ok = ours_arg == ref_arg
    per_kind = {}
    for kind in dict.fromkeys(kinds):
        m = kinds == kind
        per_kind[kind] = {
            "positions": int(m.sum()),
            "max_abs_error": float(max_abs[m].max()),
            "max_rel_l2_error": float(rel[m].max()),
            "mean_rel_l2_error": float(rel[m].mean()),
            "hf_fp16_max_abs_error": max(float(e[0][m].max()) for e in base.values()),
            "hf_fp16_max_rel_l2_error": max(float(e[1][m].max()) for e in base.values()),
            "argmax_agree": int(arg_ok[m].sum()),
            "argmax_required": int(decided[m].sum()),
            "argmax_required_agree": int((arg_ok & decided)[m].sum()),
        }
    failures = []
    if not finite:
        failures.append("non-finite logits")
    if float(max_abs.max()) > tol_abs:
        failures.append(f"max abs error {max_abs.max():.3e} > {tol_abs:.3e}")
    if float(rel.max()) > tol_rel:
        failures.append(f"relative L2 error {rel.max():.3e} > {tol_rel:.3e}")
    if int((decided & ~arg_ok).sum()):
        failures.append(f"argmax differs at {int((decided & ~arg_ok).sum())} decided "
                        "positions")
    result = {
        "reference": "transformers fp32, " + ("int4-g128 RTN weights" if quantized
                                              else "the checkpoint's weights"),
        "tolerance": {"margin": MARGIN, "max_abs": tol_abs, "rel_l2": tol_rel,
                      "hf_fp16_max_abs_error": base_abs,
                      "hf_fp16_max_rel_l2_error": base_rel,
                      "hf_fp16_by_attention": {
                          a: {"max_abs": float(e[0].max()), "rel_l2": float(e[1].max())}
                          for a, e in base.items()},
                      "floor_abs": floor},
        "max_abs_error": float(max_abs.max()),
        "max_rel_l2_error": float(rel.max()),
        "argmax_agree": int(arg_ok.sum()),
        "positions": int(len(ref)),
        "by_position_kind": per_kind,
        "pass": not failures,
        "failures": failures,
    }
    if quantized:
        # How far the RTN reference is from the dense one: the quantization
        # error, which the comparison above must not contain.
        dense = np.load(os.path.join(model_dir, "hf-fp32.npy"))
        q_abs, q_rel = _errors(ours, dense)
        r_abs, r_rel = _errors(ref, dense)
        result["against_dense_fp32"] = {
            "qfuse_max_abs_error": float(q_abs.max()),
            "qfuse_max_rel_l2_error": float(q_rel.max()),
            "hf_rtn_max_abs_error": float(r_abs.max()),
            "hf_rtn_max_rel_l2_error": float(r_rel.max())}
    return result


def phase_compare(args):
    names = model_names(args.only)
    info_path = os.path.join(args.work, "models.json")
    info = json.load(open(info_path)) if os.path.exists(info_path) else {}
    report = {"check": "qfuse logits vs transformers, teacher-forced (issue 21 part 5)",
              "git_commit": os.environ.get("QFUSE_GIT_COMMIT", "unknown"),
              "transformers": info.get("transformers"), "torch": info.get("torch"),
              "device": info.get("device"), "seed": SEED,
              "chunks": [{"batch": b, "rows": r} for b, r in CHUNKS],
              "batch_sizes": BATCH_SIZES, "max_seq": MAX_SEQ,
              "margin": MARGIN, "floor_ulps": FLOOR_ULPS, "models": {}}
    ok = True
    rows = []
    for name in names:
        entry = dict(info.get("models", {}).get(name, {}))
        model_dir = os.path.join(args.work, name)
        for build in BUILDS:
            try:
                r = compare_one(name, build, model_dir)
            except (OSError, RuntimeError, ValueError) as e:
                r = {"pass": False, "failures": [str(e)]}
            entry[build] = r
            ok &= r["pass"]
            for kind, k in r.get("by_position_kind", {}).items():
                rows.append((name, build, kind, k["positions"], k["max_abs_error"],
                             r["tolerance"]["max_abs"], k["max_rel_l2_error"],
                             r["tolerance"]["rel_l2"],
                             f"{k['argmax_agree']}/{k['positions']}",
                             "ok" if r["pass"] else "FAIL"))
            if "by_position_kind" not in r:
                rows.append((name, build, "-", 0, float("nan"), float("nan"),
                             float("nan"), float("nan"), "-", "FAIL"))
        report["models"][name] = entry
    report["pass"] = ok
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "hf-check.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"{'model':<11} {'build':<10} {'positions':<17} {'n':>3} {'max abs':>9} "
          f"{'tol':>9} {'rel L2':>9} {'tol':>9} {'argmax':>7}  verdict")
    for r in rows:
        print(f"{r[0]:<11} {r[1]:<10} {r[2]:<17} {r[3]:>3} {r[4]:>9.2e} {r[5]:>9.2e} "
              f"{r[6]:>9.2e} {r[7]:>9.2e} {r[8]:>7}  {r[9]}")
    for name in names:
        for build in BUILDS:
            for failure in report["models"][name][build].get("failures", []):
                print(f"  {name} {build}: {failure}")
        back = report["models"][name].get("config_read_back")
        if back and not back.get("match"):
            print(f"  note: {name}: qfuse's config reader reads transformers' "
                  f"config.json differently: {back.get('differences') or back.get('error')}")
    print(f"hf-check: {path}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("phase", nargs="?", default="all",
                   choices=("all", "models", "qfuse", "compare"))
    p.add_argument("--artifacts", default=".devcarry/gpu-checks/hf")
    p.add_argument("--work", default="/tmp/hf-check")
    p.add_argument("--out", default="gpu-out/results")
    p.add_argument("--lib", default="build-gpu/lib/libqfuse_c.so")
    p.add_argument("--only", help="comma-separated model names")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if args.phase == "models":
        return phase_models(args)
    if args.phase == "qfuse":
        return phase_qfuse(args)
    if args.phase == "compare":
        return phase_compare(args)
    # all: each phase in its own process; compare runs even after a failure
    # of the others so that what was measured is reported.
    common = ["--artifacts", args.artifacts, "--work", args.work, "--out", args.out,
              "--lib", args.lib] + (["--only", args.only] if args.only else [])
    rc = 0
    for phase in ("models", "qfuse"):
        t0 = time.monotonic()
        r = subprocess.run([sys.executable, os.path.abspath(__file__), phase] + common)
        print(f"hf-check: phase {phase} exit {r.returncode} in "
              f"{time.monotonic() - t0:.0f} s", flush=True)
        if r.returncode:
            rc = 1
            if phase == "models":
                return 1
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "compare"] + common)
    return rc or r.returncode


if __name__ == "__main__":
    sys.exit(main())
