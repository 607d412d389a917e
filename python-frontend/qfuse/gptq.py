"""The GPTQ artifact of a model: qf.gptq_block_update kernels for its shapes.

The GPU GPTQ solver (runtime/include/qfuse/runtime/gptq/GptqSolver.h) quantizes
the modules that share a Hessian together, their rows stacked into one
[rows, K] matrix, one block of 128 columns at a time. It takes its block
kernels from an artifact compiled from `gptq_ir`: one func.func whose
qf.gptq_block_update ops have a dynamic row count, compiled with one plan
per stacked row count (`row_counts`, qfuse-compile --batch-sizes).

    text = gptq_ir(ModelConfig.load("config.json"), "int4-g128")
    # python3 -m qfuse compile-gptq --config config.json --encoding int4-g128 -o g.qfa

Each op's weight operand is named "w:<encoding> (<mode> b<width>)", which
keeps buffer names unique and readable; the artifact states each launch's op
and grid (its "op" and "encoding"), and the solver finds a launch by mode (dynamic: groups fitted inside the block; static: one
scale, and zero, per column) and block width. The ops (`block_ops`):

| mode | widths | what for |
|---|---|---|
| dynamic | 128; and G when G < 128 | a block; a group fitted alone (the eager path, static groups' fits) |
| static | 128, 1 | per channel, static groups, act-order; one column (eager) |
| both | K % 128 for each input width K | the last, narrower block |

Per-channel encodings have only static ops (their scales come from the
whole row) and, per input width K, a qf.row_min_max: each row's min and
max over a tile of ROW_TILE rows, from which the solver fits the row's
parameters (Grid::fit reads nothing else) without downloading the weights. NVFP4 takes its global
scales as an operand, one per row.
Codebooks with a named table, groups that do not divide 128 and
unquantized or 2:4 encodings are GptqErrors.
"""
import re

from .encodings import encoding_text
from .ir import tensor
from .model import ModelConfig

# Columns per block: the kernel keeps at most 128 in a warp's registers.
BLOCK = 128

# Rows per qf.row_min_max launch: the solver moves this tile over the stacked
# rows (the last tile overlapping the one before), so that the artifact's
# buffers for it are [ROW_TILE, K] instead of [rows, K] per plan.
ROW_TILE = 256


class GptqError(ValueError):
    """An encoding or model shape the GPU GPTQ kernels cannot handle."""


def _split_top(text):
    """'a, b = dense<[1, 2]>, c' -> ['a', 'b = dense<[1, 2]>', 'c']."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<[(":
            depth += 1
        elif ch in ">])":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return [item for item in items if item]


class Grid:
    """The parts of a #qf.enc body that decide the GPTQ ops."""

    def __init__(self, body):
        self.body = body
        items = _split_top(body)
        self.format = items[0] if items else ""
        self.group = None  # None: per channel
        self.zeros = False
        self.global_scale = False
        self.sparse = False
        self.named_table = None
        for item in items[1:]:
            key, _, value = (s.strip() for s in item.partition("="))
            if key == "group":
                self.group = int(value)
            elif key == "zero":
                self.zeros = True
            elif key == "global_scale":
                self.global_scale = True
            elif key == "sparse":
                self.sparse = True
            elif key == "table" and value.startswith('"'):
                self.named_table = value.split('"')[1]

    @property
    def per_channel(self):
        return self.group is None


def grid_for(encoding):
    """The Grid of an encoding name (or literal #qf.enc); GptqError where the
    GPU GPTQ kernel has no grid for it."""
    body = encoding_text(encoding)
    grid = Grid(body)
    unsupported = None
    if grid.format in ("f16", "bf16", "f32") and not grid.sparse:
        unsupported = f"unquantized weights ('{encoding}' is {grid.format})"
    elif grid.sparse:
        unsupported = f"2:4 sparse encodings ('{encoding}')"
    elif grid.named_table is not None:
        unsupported = (f"codebooks with a named table ('{encoding}': table "
                       f"\"{grid.named_table}\" is not an operand of "
                       "qf.gptq_block_update; inline it as table = dense<[...]>)")
    if unsupported:
        raise GptqError(f"GPTQ on the GPU does not support {unsupported}")
    if grid.group is not None and (grid.group > BLOCK or BLOCK % grid.group):
        raise GptqError(
            f"GPTQ on the GPU fits groups inside a block of {BLOCK} columns: group "
            f"{grid.group} of '{encoding}' does not divide {BLOCK}")
    return grid


def _config(config):
    if isinstance(config, ModelConfig):
        return config
    if isinstance(config, dict):
        return ModelConfig(config)
    return ModelConfig.load(config)


def row_counts(config):
    """The stacked rows of the module groups that share a Hessian, distinct
    and sorted: q+k+v, o_proj, gate+up, down_proj."""
    cfg = _config(config)
    qkv = (cfg.num_attention_heads + 2 * cfg.num_key_value_heads) * cfg.head_dim
    return sorted({qkv, cfg.hidden_size, 2 * cfg.intermediate_size, cfg.hidden_size})


def input_widths(config):
    """K of every GPTQ'd linear layer: hidden_size (q/k/v, gate/up),
    num_heads * head_dim (o_proj) and intermediate_size (down_proj)."""
    cfg = _config(config)
    return sorted({cfg.hidden_size, cfg.q_width, cfg.intermediate_size})


def block_ops(config, encoding):
    """[(mode, width)] of the artifact's ops, in order, without repeats."""
    cfg = _config(config)
    grid = grid_for(encoding)
    ops = []

    def add(mode, width):
        if (mode, width) not in ops:
            ops.append((mode, width))

    if not grid.per_channel:
        add("dynamic", BLOCK)
        if grid.group < BLOCK:
            add("dynamic", grid.group)
    add("static", BLOCK)
    add("static", 1)
    for k in input_widths(cfg):
        r = k % BLOCK
        if not r:
            continue
        if not grid.per_channel:
            if r % grid.group:
                raise GptqError(
                    f"{cfg.source}: an input width K = {k} leaves a last block of "
                    f"{r} columns (K % {BLOCK}), which does not hold whole groups of "
                    f"{grid.group} ('{encoding}'); GPTQ on the GPU needs K % {BLOCK} to "
                    f"be a multiple of the group size")
            add("dynamic", r)
        add("static", r)
    return ops


def describe(config, encoding):
    """What the artifact of `config` and `encoding` holds, in one line: its
    block ops, row counts and (per channel) row min/max widths."""
    cfg = _config(config)
    ops = ", ".join(f"{mode} b{width}" for mode, width in block_ops(cfg, encoding))
    text = (f"qf.gptq_block_update: {ops}; rows "
            f"{', '.join(str(r) for r in row_counts(cfg))}")
    if grid_for(encoding).per_channel:
        # Each row's min and max per input width K (the per-channel fits).
        widths = ", ".join(f"K {k}" for k in input_widths(cfg))
        text += f"; qf.row_min_max: {widths}, tiles of {ROW_TILE} rows"
    return text


def _alias(grid):
    name = re.sub(r"[^A-Za-z0-9_]", "_", grid.format)
    name += "_pc" if grid.per_channel else f"_g{grid.group}"
    return "grid_" + name + ("_asym" if grid.zeros else "")


def gptq_ir(config, encoding):
    """The IR of the GPTQ artifact for `config` (a ModelConfig, a config
    dict or a config.json path) and `encoding`: one @gptq_blocks with a
    qf.gptq_block_update of dynamic rows per `block_ops` entry."""
    cfg = _config(config)
    grid = grid_for(encoding)
    ops = block_ops(cfg, encoding)
    alias = _alias(grid)
    rows = row_counts(cfg)
    lines = [
        f"// {cfg.name}: GPTQ block kernels (qf.gptq_block_update) for "
        f"#qf.enc<{grid.body}>.",
        f"// Rows are dynamic: compile with --batch-sizes={','.join(map(str, rows))} "
        "(q+k+v, o_proj, gate+up, down_proj stacked).",
        f"// Input widths K: {', '.join(map(str, input_widths(cfg)))}; blocks of "
        f"{BLOCK} columns. Generated by python-frontend (qfuse compile-gptq).",
        f"#{alias} = #qf.enc<{grid.body}>",
    ]
    args, results, body = [], [], []
    for i, (mode, width) in enumerate(ops):
        tag = f"({mode} b{width})"
        w = tensor(None, width, elt="f32")
        u = tensor(width, width, elt="f32")
        codes = tensor(None, width, elt="i8")
        args.append((f"%w{i}", w, f"w:{grid.body} {tag}"))
        args.append((f"%u{i}", u, f"u {tag}"))
        outs = [(f"%c{i}", codes, f"codes {tag}"), (f"%e{i}", w, f"err {tag}")]
        # Each code's value in f16: the solver rebinds the quantized module
        # for the next layer's calibration from it, on the device.
        values = (f"%v{i}", tensor(None, width, elt="f16"), f"values {tag}")
        outs.append(values)
        operands = f"%w{i}, %u{i}"
        attrs = f"grid = #{alias}"
        if mode == "static":
            args.append((f"%s{i}", w, f"scales {tag}"))
            operands += f" scales(%s{i} : {w})"
            if grid.zeros:
                args.append((f"%z{i}", w, f"zeros {tag}"))
                operands += f" zeros(%z{i} : {w})"
        else:
            params = tensor(None, width // grid.group, elt="f32")
            outs.append((f"%s{i}", params, f"scales_out {tag}"))
            if grid.zeros:
                outs.append((f"%z{i}", params, f"zeros_out {tag}"))
        if grid.global_scale:
            # NVFP4: one global scale per row (each stacked module has its
            # own), read by the kernel's fit, code and value.
            g = tensor(None, elt="f32")
            args.append((f"%g{i}", g, f"global_scale {tag}"))
            operands += f" global_scale(%g{i} : {g})"
        results += outs
        body.append(f"  // {mode} groups, {width} columns" if mode == "dynamic"
                    else f"  // static scales, {width} column{'s' if width > 1 else ''}")
        body.append(f"  {', '.join(v for v, _, _ in outs)} = qf.gptq_block_update "
                    f"{operands} {{{attrs}}}")
        typed = [t for v, t, _ in outs if v != values[0]]
        body.append(f"    : ({w}, {u}) -> ({', '.join(str(t) for t in typed)}) "
                    f"values {values[1]}")
    if grid.per_channel:
        # Per channel: each row's [min, max] at every input width K, all a
        # row's fit reads (Grid::fit); the solver fits on the host from
        # these 2 floats a row instead of downloading the weights.
        for k in input_widths(cfg):
            w, mm = tensor(ROW_TILE, k, elt="f32"), tensor(ROW_TILE, 2, elt="f32")
            args.append((f"%rw{k}", w, f"rows k{k}"))
            results.append((f"%mm{k}", mm, f"min_max k{k}"))
            body.append(f"  // each row's min and max, K = {k}")
            body.append(f"  %mm{k} = qf.row_min_max %rw{k} : {w} -> {mm}")
    lines.append("func.func @gptq_blocks(")
    lines += [f'    {v}: {t} {{qf.name = "{n}"}}' + ("," if j + 1 < len(args) else ")")
              for j, (v, t, n) in enumerate(args)]
    lines.append("    -> (")
    lines += [f'    {t} {{qf.name = "{n}"}}' + ("," if j + 1 < len(results) else ") {")
              for j, (_, t, n) in enumerate(results)]
    lines += body
    lines.append(f"  return {', '.join(v for v, _, _ in results)}")
    lines.append(f"    : {', '.join(str(t) for _, t, _ in results)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


__all__ = ["BLOCK", "ROW_TILE", "GptqError", "block_ops", "describe", "gptq_ir",
           "grid_for", "input_widths", "row_counts"]
