#!/usr/bin/env python3
"""Writes the seed corpora under fuzz/<target>/corpus from the tree's real
inputs (docs/fuzzing.md). Deterministic: running it again on the same tree
writes the same files, so a diff shows what changed.

    fuzz/make-seeds.py                      every target the tree alone gives
    fuzz/make-seeds.py --tools-dir build/bin
                                            also artifacts compiled from lit
                                            inputs (qfuse-compile) and the
                                            synthetic model's tokenizer
                                            (qfuse-synthetic-model)

Sources, per target:
  safetensors   small files of every dtype, written by the Python frontend's
                writer (python-frontend/qfuse/safetensors.py), and the
                checkpoint seeds' files
  checkpoint    tiny model directories (FuzzCheckpoint.cpp's input): dense
                bf16, AutoGPTQ (plain and act_order), compressed-tensors,
                qfuse-packed, tied embeddings, a sharded index
  artifact      the unit tests' valid artifact (unittests/Runtime/
                ArtifactTest.cpp) and lit inputs of test/Tools/qfuse-compile
                compiled, their PTX cut down to the .entry lines
  encoding      every #qf.enc / #qf.layout written in test/, the named
                encodings, with shapes
  config        examples/configs and testdata/model-configs/cases.json
  tokenizer     the unit tests' byte-level and metaspace tokenizers
                (unittests/Text/TokenizerTest.cpp), the synthetic tokenizer,
                with texts of unittests/Text/oracle/corpus-seeds.json
  tokenizer-text  those texts (first byte: which tokenizer)
  (python-config reads the config seeds)
"""
import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python-frontend"))
from qfuse import safetensors  # noqa: E402

SEPARATOR = b"\0--file--\0"  # FuzzSupport.h's kPartSeparator


class Rng:
    """A small LCG, so that seeds do not depend on numpy's generator."""

    def __init__(self, seed):
        self.state = seed

    def next(self):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return self.state >> 33

    def bytes(self, count):
        return bytes(self.next() & 0xFF for _ in range(count))

    def halves(self, count, lo=-1.0, hi=1.0):
        values = [lo + (hi - lo) * (self.next() % 1000) / 1000.0 for _ in range(count)]
        return struct.pack(f"<{count}e", *values)

    def bf16(self, count):
        values = [(self.next() % 2000) / 1000.0 - 1.0 for _ in range(count)]
        return b"".join(struct.pack("<f", v)[2:] for v in values)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def reset(target):
    corpus = os.path.join(ROOT, "fuzz", target, "corpus")
    shutil.rmtree(corpus, ignore_errors=True)
    os.makedirs(corpus)
    return corpus


def safetensors_bytes(tensors, metadata=None):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "x.safetensors")
        safetensors.write(path, tensors, metadata)
        with open(path, "rb") as f:
            return f.read()


def dumps(value):
    return json.dumps(value, indent=1, ensure_ascii=False) + "\n"


# -- checkpoint ---------------------------------------------------------------

N, K, G = 16, 64, 32  # every seed weight is [16, 64], groups of 32
Q = "model.layers.0.self_attn.q_proj"


def tiny_config(**extra):
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
              "hidden_size": K, "intermediate_size": 128,
              "num_attention_heads": 4, "num_key_value_heads": 2,
              "num_hidden_layers": 1, "vocab_size": 32,
              "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
              "max_position_embeddings": 128, "tie_word_embeddings": False}
    config.update(extra)
    return config


def gptq_tensors(rng, act_order):
    per = 8  # 4-bit codes per int32
    groups = K // G
    g_idx = [i // G for i in range(K)]
    if act_order:
        g_idx = [(i * 7) % groups for i in range(K)]
        counts = [g_idx.count(g) for g in range(groups)]
        assert counts == [G] * groups
    return {
        Q + ".qweight": ("I32", [K // per, N], rng.bytes(4 * (K // per) * N)),
        Q + ".qzeros": ("I32", [groups, N // per],
                        struct.pack("<i", 0x77777777) * (groups * (N // per))),
        Q + ".scales": ("F16", [groups, N], rng.halves(groups * N, 0.01, 0.1)),
        Q + ".g_idx": ("I32", [K], struct.pack(f"<{K}i", *g_idx)),
    }


def checkpoint_seeds(rng):
    """(name, config, weights.json entries, [files]) per seed; files are one
    safetensors file, or an index and its shards."""
    int4 = "int4, group = 32, scale = f16"
    dense_weights = [
        {"weight": Q, "shape": [N, K], "encoding": int4, "layout": "row_major"},
        {"weight": Q, "shape": [N, K], "encoding": int4,
         "layout": "tiled, tile_n = 1, tile_k = 32"},
        {"weight": Q, "shape": [N, K], "encoding": "nf4, group = 64, scale = f32",
         "layout": "row_major"},
        {"tensor": "model.norm.weight", "shape": [K], "dtype": "f16"},
    ]
    dense = {Q + ".weight": ("BF16", [N, K], rng.bf16(N * K)),
             "model.norm.weight": ("BF16", [K], rng.bf16(K))}
    yield ("dense-bf16", tiny_config(), dense_weights, [safetensors_bytes(dense)])

    f16 = {Q + ".weight": ("F16", [N, K], rng.halves(N * K)),
           "model.norm.weight": ("F32", [K], struct.pack(f"<{K}f", *[1.0] * K))}
    yield ("dense-f16-fp8", tiny_config(),
           [{"weight": Q, "shape": [N, K], "encoding": "fp8e4m3, per_channel, scale = f32",
             "layout": "row_major"},
            {"weight": Q, "shape": [N, K], "encoding": "f16", "layout": "row_major"},
            {"tensor": "model.norm.weight", "shape": [K], "dtype": "bf16"}],
           [safetensors_bytes(f16)])

    gptq_config = tiny_config(quantization_config={
        "quant_method": "gptq", "bits": 4, "group_size": G, "desc_act": False,
        "sym": True})
    yield ("gptq", gptq_config,
           [{"weight": Q, "shape": [N, K], "encoding": int4, "layout": "row_major"},
            {"weight": Q, "shape": [N, K], "encoding": int4,
             "layout": "tiled, tile_n = 16, tile_k = 64, interleave = 4"}],
           [safetensors_bytes(gptq_tensors(rng, False))])

    act_config = tiny_config(quantization_config={
        "quant_method": "gptq", "bits": 4, "group_size": G, "desc_act": True,
        "sym": True})
    yield ("gptq-act-order", act_config,
           [{"weight": Q, "shape": [N, K], "encoding": int4 + ", act_order",
             "layout": "tiled, tile_n = 1, tile_k = 32"}],
           [safetensors_bytes(gptq_tensors(rng, True))])

    compressed_config = tiny_config(quantization_config={
        "quant_method": "compressed-tensors", "format": "pack-quantized",
        "config_groups": {"group_0": {
            "targets": ["Linear"],
            "weights": {"num_bits": 4, "group_size": G, "strategy": "group",
                        "symmetric": True}}}})
    compressed = {
        Q + ".weight_packed": ("I32", [N, K // 8], rng.bytes(4 * N * (K // 8))),
        Q + ".weight_scale": ("BF16", [N, K // G], rng.bf16(N * (K // G))),
        Q + ".weight_shape": ("I64", [2], struct.pack("<2q", N, K)),
    }
    yield ("compressed-tensors", compressed_config,
           [{"weight": Q, "shape": [N, K], "encoding": "int4, group = 32, scale = bf16",
             "layout": "row_major"}],
           [safetensors_bytes(compressed)])

    packed = {Q + ".codes": ("U8", [N, K // 2], rng.bytes(N * K // 2)),
              Q + ".scales": ("F16", [N, K // G], rng.halves(N * (K // G), 0.01, 0.1))}
    yield ("qfuse-packed", tiny_config(),
           [{"weight": Q, "shape": [N, K], "encoding": int4,
             "layout": "tiled, tile_n = 1, tile_k = 32"}],
           [safetensors_bytes(packed, {"qfuse.encoding." + Q: int4})])

    embed = {"model.embed_tokens.weight": ("BF16", [32, K], rng.bf16(32 * K))}
    yield ("tied-lm-head", tiny_config(tie_word_embeddings=True),
           [{"weight": "lm_head", "shape": [32, K], "encoding": "int8, per_channel, scale = f16",
             "layout": "row_major"},
            {"tensor": "lm_head.weight", "shape": [32, K], "dtype": "f16"}],
           [safetensors_bytes(embed)])

    shard1 = {Q + ".weight": ("BF16", [N, K], rng.bf16(N * K))}
    shard2 = {"model.norm.weight": ("BF16", [K], rng.bf16(K))}
    index = {"metadata": {"total_size": 2 * N * K + 2 * K},
             "weight_map": {Q + ".weight": "model-00001-of-00002.safetensors",
                            "model.norm.weight": "model-00002-of-00002.safetensors"}}
    yield ("sharded", tiny_config(), dense_weights,
           [dumps(index).encode(), safetensors_bytes(shard1), safetensors_bytes(shard2)])


def make_checkpoint(rng):
    corpus = reset("checkpoint")
    files = []
    for name, config, weights, parts in checkpoint_seeds(rng):
        data = SEPARATOR.join([dumps(config).encode(), dumps(weights).encode()] + parts)
        write(os.path.join(corpus, name), data)
        files += [p for p in parts if not p.startswith(b"{")]
    return files


# -- safetensors --------------------------------------------------------------

def make_safetensors(rng, checkpoint_files):
    corpus = reset("safetensors")
    every = {}
    for dtype, size in sorted(safetensors.DTYPE_BYTES.items()):
        every[f"t.{dtype.lower()}"] = (dtype, [2, 3], rng.bytes(6 * size))
    write(os.path.join(corpus, "every-dtype"),
          safetensors_bytes(every, {"format": "pt", "qfuse.note": "seed"}))
    write(os.path.join(corpus, "empty"), safetensors_bytes({}))
    write(os.path.join(corpus, "scalar-and-zero"),
          safetensors_bytes({"scalar": ("F32", [], struct.pack("<f", 1.5)),
                             "none": ("F16", [0, 4], b""),
                             "w": ("F16", [4], rng.halves(4))}))
    write(os.path.join(corpus, "f4"),
          safetensors_bytes({"w": ("U8", [8], rng.bytes(8))}).replace(b'"U8"', b'"F4"')
          .replace(b"[8]", b"[16]"))
    for i, data in enumerate(checkpoint_files):
        write(os.path.join(corpus, f"checkpoint-{i}"), data)


# -- artifact -----------------------------------------------------------------

def stub_ptx(artifact):
    """The artifact with its PTX cut down to what the reader checks (each
    kernel's .entry) and no cubin, so that seeds stay small."""
    entries = "".join(f".visible .entry {k['name']}()\n{{\nret;\n}}\n"
                      for k in artifact.get("kernels", []))
    module = artifact.get("module")
    if isinstance(module, dict):
        module.pop("cubin_base64", None)
        module["ptx"] = ".version 8.0\n.target sm_90\n" + entries
    for kernel in artifact.get("kernels", []):
        kernel.pop("cubin_base64", None)
        if "ptx" in kernel:
            kernel["ptx"] = f".visible .entry {kernel['name']}()\n{{\nret;\n}}\n"
    return artifact


LIT_ARTIFACTS = [  # (lit input, qfuse-compile flags)
    ("test/Tools/qfuse-compile/Inputs/llama-block.mlir", ["--batch-sizes=1,8"]),
    ("test/Tools/qfuse-compile/Inputs/tiny-llama.mlir", ["--batch-sizes=1"]),
    ("test/Tools/qfuse-compile/Inputs/decode-ops.mlir", ["--batch-sizes=1"]),
    ("test/Tools/qfuse-compile/Inputs/gptq-blocks.mlir", ["--batch-sizes=1"]),
    ("test/Tools/qfuse-compile/Inputs/wgmma.mlir", ["--chip=sm_90a"]),
    ("test/Tools/qfuse-compile/Inputs/static-b32-qkv.mlir", []),
    ("test/Tools/qfuse-compile/gptq-dynamic-rows.mlir", ["--batch-sizes=1"]),
    ("test/Tools/qfuse-compile/mixed-batches.mlir", ["--batch-sizes=1,8"]),
    ("unittests/Runtime/Inputs/sample-rows.mlir", ["--batch-sizes=8"]),
]


def make_artifact(tools_dir):
    corpus = os.path.join(ROOT, "fuzz", "artifact", "corpus")
    if tools_dir is None:
        print("make-seeds: no --tools-dir: artifact seeds kept as they are")
        return
    corpus = reset("artifact")
    source = open(os.path.join(ROOT, "unittests/Runtime/ArtifactTest.cpp")).read()
    valid = re.search(r'kValidArtifact = R"json\((.*?)\)json"', source, re.S).group(1)
    write(os.path.join(corpus, "unittest-valid"), valid.strip() + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        for mlir, flags in LIT_ARTIFACTS:
            out = os.path.join(tmp, "a.qfa")
            # Only the first case of a split file.
            text = open(os.path.join(ROOT, mlir)).read().split("// -----")[0]
            src = os.path.join(tmp, "in.mlir")
            write(src, text)
            proc = subprocess.run([os.path.join(tools_dir, "qfuse-compile"), src,
                                   "--no-cubin", "-o", out] + flags,
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"make-seeds: {mlir}: qfuse-compile failed:\n{proc.stderr}")
                continue
            artifact = stub_ptx(json.load(open(out)))
            name = os.path.splitext(os.path.basename(mlir))[0]
            write(os.path.join(corpus, name),
                  json.dumps(artifact, separators=(",", ":")) + "\n")


# -- encoding -----------------------------------------------------------------

def make_encoding():
    corpus = reset("encoding")
    texts = ""
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"), recursive=True)):
        texts += open(path).read()
    encodings = sorted(set(re.findall(r"#qf\.enc<((?:[^<>]|<[^<>]*>)*)>", texts)))
    layouts = sorted(set(re.findall(r"#qf\.layout<([^<>{}]*)>", texts)))
    encodings = [e for e in encodings if "{{" not in e and "\n" not in e]
    # One per form: encodings that differ only in numbers and table values
    # add little but files.
    forms = {}
    for e in encodings:
        form = re.sub(r"dense<[^>]*>", "dense", re.sub(r"\d+", "#", e))
        forms.setdefault(form, e)
    encodings = sorted(forms.values())
    names = ["int4-g128", "uint4-g128-asym", "nf4", "nvfp4", "mxfp4", "fp8", "int8",
             "2:4", "2:4+int4", "int8-g32", "uint8-g64-asym"]
    shapes = ["64 256", "32 128", "16 64", "8 32", "32 96", "1 16"]
    for i, enc in enumerate(encodings + names):
        layout = layouts[i % len(layouts)]
        shape = shapes[i % len(shapes)]
        digest = hashlib.sha1(enc.encode()).hexdigest()[:10]
        write(os.path.join(corpus, f"enc-{digest}"), f"{enc}\n{layout}\n{shape}\n")
    for layout in layouts:
        digest = hashlib.sha1(layout.encode()).hexdigest()[:10]
        write(os.path.join(corpus, f"layout-{digest}"),
              f"int4, group = 32, scale = f16\n{layout}\n64 128\n")


# -- config -------------------------------------------------------------------

def case_configs():
    table = json.load(open(os.path.join(ROOT, "testdata/model-configs/cases.json")))
    for case in table["cases"]:
        config = json.loads(json.dumps(table["bases"][case["base"]]))
        for key in case.get("remove", []):
            *path, last = key.split(".")
            obj = config
            for p in path:
                obj = obj[p]
            obj.pop(last, None)
        for key, value in case.get("set", {}).items():
            *path, last = key.split(".")
            obj = config
            for p in path:
                obj = obj.setdefault(p, {})
            obj[last] = value
        yield case["name"], config


def make_config():
    corpus = reset("config")
    for path in sorted(glob.glob(os.path.join(ROOT, "examples/configs/*.json"))):
        shutil.copy(path, os.path.join(corpus, os.path.basename(path)[:-5]))
    # Every third case of the shared table: each rule's neighbourhood without
    # a hundred files (the fuzzer finds the rest from the dictionary).
    for name, config in list(case_configs())[::3]:
        write(os.path.join(corpus, "case-" + name), dumps(config))
    write(os.path.join(corpus, "tiny-gptq"), dumps(tiny_config(quantization_config={
        "quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": True,
        "sym": False})))


# -- tokenizers ---------------------------------------------------------------

LLAMA3_REGEX = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
                "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")


def byte_level_tokenizer():
    """TokenizerTest.cpp's byteLevelTokenizer()."""
    def stands_for_itself(b):
        return ord("!") <= b <= ord("~") or 0xA1 <= b <= 0xAC or b >= 0xAE
    vocab, chars, nxt = {}, [None] * 256, 256
    for b in range(256):
        c = b if stands_for_itself(b) else nxt
        if not stands_for_itself(b):
            nxt += 1
        chars[b] = chr(c)
        vocab[chr(c)] = b
    vocab["he"] = 256
    vocab[chars[ord(" ")] + "w"] = 257
    vocab["hel"] = 258
    added = {"id": 300, "content": "<|eot|>", "special": True, "lstrip": False,
             "rstrip": False, "single_word": False, "normalized": False}
    return {"added_tokens": [added], "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": LLAMA3_REGEX},
                 "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]},
            "post_processor": {"type": "ByteLevel"},
            "decoder": {"type": "ByteLevel"},
            "model": {"type": "BPE", "vocab": vocab,
                      "merges": ["h e", chars[ord(" ")] + " w", "he l"],
                      "byte_fallback": False}}


def metaspace_tokenizer():
    """TokenizerTest.cpp's metaspaceTokenizer()."""
    space = "\u2581"
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = 3 + b
    vocab.update({space: 259, "a": 260, "b": 261, space + "a": 262})

    def added(i, content):
        return {"id": i, "content": content, "special": True, "lstrip": False,
                "rstrip": False, "single_word": False, "normalized": False}
    return {
        "added_tokens": [added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": space},
            {"type": "Replace", "pattern": {"String": " "}, "content": space}]},
        "pre_tokenizer": None,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": space}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "vocab": vocab, "merges": [space + " a"],
                  "unk_token": "<unk>", "byte_fallback": True, "fuse_unk": True}}


def texts():
    seeds = json.load(open(os.path.join(ROOT, "unittests/Text/oracle/corpus-seeds.json")))
    strings = [s for s in seeds["strings"] if len(s.encode()) <= 200]
    # Every 8th, so that the corpus stays small but covers each kind.
    picked = strings[::8]
    picked.append(bytes.fromhex("c328e282a8f09f9880ff").decode("utf-8", "surrogateescape"))
    return picked


def encode_text(text):
    return text.encode("utf-8", "surrogateescape")


def make_tokenizers(tools_dir):
    corpus = reset("tokenizer")
    tokenizers = {"byte-level": byte_level_tokenizer(), "metaspace": metaspace_tokenizer()}
    config = {"bos_token": "<s>", "eos_token": {"content": "</s>"},
              "clean_up_tokenization_spaces": False,
              "additional_special_tokens": ["<|eot|>"]}
    if tools_dir is not None:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([os.path.join(tools_dir, "qfuse-synthetic-model"),
                            "--config-preset", "tiny-llama", "--out", tmp],
                           check=True, capture_output=True)
            synthetic = json.load(open(os.path.join(tmp, "tokenizer.json")))
            synthetic_config = json.load(open(os.path.join(tmp, "tokenizer_config.json")))
        synthetic_config.pop("chat_template", None)
        # Every merge would make a 30 KB seed; the first 40 keep it a BPE.
        synthetic["model"]["merges"] = synthetic["model"]["merges"][:40]
        tokenizers["synthetic"] = synthetic
    else:
        synthetic_config = None
        for path in glob.glob(os.path.join(corpus, "synthetic*")):
            os.remove(path)
    samples = texts()
    for i, (name, tokenizer) in enumerate(sorted(tokenizers.items())):
        text = json.dumps(tokenizer, ensure_ascii=False, separators=(",", ":")).encode()
        write(os.path.join(corpus, name), text)
        conf = synthetic_config if name == "synthetic" else config
        write(os.path.join(corpus, name + "-with-config"),
              SEPARATOR.join([text, dumps(conf).encode(),
                              encode_text(samples[i % len(samples)])]))
    corpus = reset("tokenizer-text")
    for i, sample in enumerate(samples):
        write(os.path.join(corpus, f"text-{i:02d}"), bytes([i % 3]) + encode_text(sample))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tools-dir", help="folder with qfuse-compile and "
                        "qfuse-synthetic-model (a compiler build's bin/)")
    args = parser.parse_args()
    rng = Rng(20261202)
    make_safetensors(rng, make_checkpoint(rng))
    make_artifact(args.tools_dir)
    make_encoding()
    make_config()
    make_tokenizers(args.tools_dir)
    for target in sorted(os.listdir(os.path.join(ROOT, "fuzz"))):
        corpus = os.path.join(ROOT, "fuzz", target, "corpus")
        if os.path.isdir(corpus):
            files = os.listdir(corpus)
            size = sum(os.path.getsize(os.path.join(corpus, f)) for f in files)
            print(f"make-seeds: fuzz/{target}/corpus: {len(files)} files, {size} bytes")


if __name__ == "__main__":
    main()
