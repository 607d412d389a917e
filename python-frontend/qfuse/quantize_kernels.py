"""The quantize artifact of a model artifact: qf.quantize kernels for its weights.

Quantize-at-load (`qfuse-run --model DIR` on an f16/bf16 checkpoint) rounds
every weight to nearest into the artifact's encoding. `python3 -m qfuse
compile` also writes, beside `m.qfa`, `m.quantize.qfa`: one round-to-nearest
kernel per (encoding, K, input dtype) of the artifact's weights, each
launched by the runtime on any row count (docs/quantize-at-load.md).

    text = quantize_ir(json.load(open("m.qfa")))
    # qfuse-compile the text --fuse=none -o m.quantize.qfa

Every quantized encoding gets its qf.quantize here (NVFP4 too: its kernel
also reads the tensor's largest magnitude, which the runtime finds first;
act_order's writes g_idx, 2:4's the kept positions). Those with no generated
kernel (named tables) get a remark from the compiler and stay with the host's
format::quantizeRTN. Beside each qf.quantize the compiler records the
qf_gather_fields kernel of its code width (and, for 2:4, the 2-bit one of
its positions; for 3-bit codes the 1-bit one that makes the mma layout's
bit planes), with which
the runtime makes the model's kernel layouts (and qfuse-quantize packs
GPTQ's codes) on the device (docs/quantize-at-load.md), and beside each of
a bf16 input the qf_round_bf16_to_f16 kernel, with which qfuse-quantize
rounds a bf16 checkpoint's modules to the calibration plan's f16 on the
device (docs/gptq.md).
"""
import json

# The checkpoint dtypes quantize-at-load reads; a kernel each.
INPUT_DTYPES = ("f16", "bf16")


def quantize_artifact_path(artifact_path):
    """'m.qfa' -> 'm.quantize.qfa' (the runtime's quantizeArtifactPath)."""
    base = artifact_path[:-4] if artifact_path.endswith(".qfa") else artifact_path
    return base + ".quantize.qfa"


def _weights(artifact):
    """The weights of an artifact or of the first variant of a set."""
    if artifact.get("format") == "qfuse-artifact-set":
        artifact = artifact["variants"][0]
    return artifact.get("weights", [])


def quantize_keys(artifact):
    """Distinct (encoding body, K) of the quantized weights and of the
    unquantized 2:4 ones (the kernel keeps two of each quad), in order."""
    keys = []
    for weight in _weights(artifact):
        encoding = weight["encoding"]
        if (encoding.split(",")[0].strip() in ("f16", "bf16", "f32")
                and "sparse" not in encoding):
            continue  # unquantized: stored as it is
        key = (encoding, int(weight["shape"][1]))
        if key not in keys:
            keys.append(key)
    return keys


def quantize_ir(artifact, rows=1):
    """One func.func per (encoding, K, input dtype) holding its qf.quantize
    (`rows` rows: the kernels take any row count); None without any."""
    funcs = []
    for i, (encoding, k) in enumerate(quantize_keys(artifact)):
        for dtype in INPUT_DTYPES:
            t = f"tensor<{rows}x{k}x{dtype}>"
            w = f"!qf.weight<{rows}x{k}, #qf.enc<{encoding}>>"
            funcs.append(
                f"func.func @quantize_{i}_{dtype}(%d: {t}) -> {w} {{\n"
                f"  %w = qf.quantize %d : {t} -> {w}\n"
                f"  return %w : {w}\n}}\n")
    return "".join(funcs) if funcs else None


def load_artifact_json(path):
    with open(path) as f:
        return json.load(f)


__all__ = ["INPUT_DTYPES", "load_artifact_json", "quantize_artifact_path",
           "quantize_ir", "quantize_keys"]
