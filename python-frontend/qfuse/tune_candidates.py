"""What `tune` measures: a model's distinct linear shapes, and per shape and
batch the candidate tilings the compiler lists (`qfuse-compile
--list-tilings`), each with its file-name label and the IR of its artifact."""
import re
import shlex
import subprocess

from .tools import ToolError, find_tool

DEFAULT_TOP = 8


class TuneError(ValueError):
    """Bad input to `tune`, or results it cannot use; the message says which."""


def linear_shapes(cfg):
    """The distinct linear launches of one decode step of `cfg`, as the
    default compile runs them: [{"name", "kinds", "n", "k", "gated"}], where
    n is the tuning database's key (2 x intermediate for gate and up, which
    the default --fuse runs as one silu_mul matmul)."""
    shapes, seen = [], {}
    by_kind = {kind: (n, k) for kind, n, k in cfg.projections()}
    if "gate_proj" in by_kind and by_kind.get("up_proj") == by_kind["gate_proj"]:
        n, k = by_kind["gate_proj"]
        shapes.append({"name": "gate_up", "kinds": ["gate_proj", "up_proj"],
                       "n": 2 * n, "k": k, "weight_n": n, "gated": True})
        seen[(2 * n, k)] = shapes[-1]
    for kind, n, k in cfg.projections():
        if kind in ("gate_proj", "up_proj") and shapes and shapes[0]["gated"]:
            continue
        if (n, k) in seen:
            if kind not in seen[(n, k)]["kinds"]:
                seen[(n, k)]["kinds"].append(kind)
            continue
        shapes.append({"name": kind, "kinds": [kind], "n": n, "k": k,
                       "weight_n": n, "gated": False})
        seen[(n, k)] = shapes[-1]
    return shapes


def parse_batch_sizes(text):
    """'1,8,16' -> [1, 8, 16]; TuneError naming a bad entry."""
    out = []
    for part in str(text).split(","):
        part = part.strip()
        try:
            value = int(part)
        except ValueError:
            raise TuneError(f"--batch-sizes {text!r}: {part!r} is not a number; expected "
                            "positive batch sizes such as 1,8,16") from None
        if value <= 0:
            raise TuneError(f"--batch-sizes {text!r}: {value} is not positive; expected "
                            "positive batch sizes such as 1,8,16")
        if value not in out:
            out.append(value)
    return out



_LINE = re.compile(r"^#qf\.tiling<(?P<tiling>.*)>\s+// m = (?P<m>\d+), (?P<kernel>\w+)"
                   r"(?:, (?P<us>[0-9.]+) us predicted)?(?P<default>, default)?$")


def weight_type(n, k, enc_text):
    return f"!qf.weight<{n}x{k}, #qf.enc<{enc_text}>>"


def list_tilings(n, k, enc_text, batches, chip="sm_90", top=DEFAULT_TOP, gated=False,
                 extra=()):
    """The compiler's candidates for an N x K weight (N: one weight's rows;
    gated: gate and up of N rows each) at each batch: {m: [{"tiling",
    "kernel", "predicted_us", "default", "rank"}]} in the listing's order."""
    tool = find_tool("qfuse-compile")
    argv = [tool, f"--list-tilings={weight_type(n, k, enc_text)}",
            "--batch-sizes=" + ",".join(str(b) for b in batches), f"--chip={chip}",
            f"--list-top={top}"] + (["--list-gated"] if gated else []) + list(extra)
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        if "Unknown command line argument '--list-tilings" in proc.stderr:
            raise ToolError(f"{tool} has no --list-tilings (built before it); rebuild "
                            "qfuse-compile or point QFUSE_COMPILE / QFUSE_BUILD_DIR at a "
                            "newer build")
        raise ToolError(f"qfuse-compile --list-tilings failed (exit {proc.returncode}): "
                        f"{' '.join(shlex.quote(a) for a in argv)}\n{proc.stderr.strip()}")
    out = {m: [] for m in batches}
    for line in proc.stdout.splitlines():
        if not line.strip() or line.startswith("//"):
            continue
        match = _LINE.match(line)
        if not match:
            raise ToolError(f"qfuse-compile --list-tilings: cannot read the line {line!r}")
        m = int(match["m"])
        out[m].append({"tiling": match["tiling"], "kernel": match["kernel"],
                       "predicted_us": float(match["us"]) if match["us"] else None,
                       "default": bool(match["default"]), "rank": len(out[m])})
    return out


def tiling_label(tiling):
    """A short file-name label of a tiling body: n8u2s1 (matvec; v8 when
    vec_bytes is not 16), M16N128S2K64T4C1 (mma, bench/tune.py's labels),
    W64... (wgmma), D (dequant_gemm)."""
    kernel, _, rest = tiling.partition(",")
    fields = {"block_m": 1, "block_n": 1, "block_k": 0, "vec_bytes": 16, "k_unroll": 1,
              "split_k": 1, "stages": 1, "cluster_k": 1}
    for item in rest.split(","):
        if "=" in item:
            key, value = (s.strip() for s in item.split("="))
            fields[key] = int(value)
    kernel = kernel.strip()
    f = fields
    if kernel == "matvec":
        return (f"n{f['block_n']}u{f['k_unroll']}s{f['split_k']}"
                + (f"v{f['vec_bytes']}" if f["vec_bytes"] != 16 else ""))
    if kernel in ("mma", "wgmma"):
        return (("W" if kernel == "wgmma" else "M")
                + f"{f['block_m']}N{f['block_n']}S{f['split_k']}K{f['block_k']}"
                  f"T{f['stages']}C{f['cluster_k']}")
    if kernel == "dequant_gemm":
        return "D"
    return re.sub(r"[^A-Za-z0-9]+", "_", tiling)


def default_ir(batch, n, k, enc_text, name="w"):
    """One qf.matmul with no tiling: the kernel the compiler picks, as a
    user compiles it."""
    w = f"!qf.weight<{n}x{k}, #qf.enc<{enc_text}>>"
    return (f"func.func @v(%x: tensor<{batch}x{k}xf16>) -> tensor<{batch}x{n}xf16> {{\n"
            f"  %w = qf.weight_ref \"{name}\" : {w}\n"
            f"  %y = qf.matmul %x, %w : tensor<{batch}x{k}xf16>, {w} -> tensor<{batch}x{n}xf16>\n"
            f"  return %y : tensor<{batch}x{n}xf16>\n}}\n")


def variant_ir(batch, n, k, enc_text, tiling, gated=False, name="w"):
    """One qf.fused_matmul of `tiling` (gated: gate and up weights of N rows
    each with the silu_mul epilogue). The weight names carry `name`, so that
    qfuse-bench's checks name the candidate."""
    w = f"!qf.weight<{n}x{k}, #qf.enc<{enc_text}>>"
    up = f" up(%u : {w})" if gated else ""
    act = ", activation = #qf<activation silu_mul>" if gated else ""
    return (f"func.func @v(%x: tensor<{batch}x{k}xf16>) -> tensor<{batch}x{n}xf16> {{\n"
            f"  %w = qf.weight_ref \"{name}\" : {w}\n"
            + (f"  %u = qf.weight_ref \"{name}.up\" : {w}\n" if gated else "") +
            f"  %y = qf.fused_matmul %x, %w{up} {{tiling = #qf.tiling<{tiling}>{act}}}"
            f" : tensor<{batch}x{k}xf16>, {w} -> tensor<{batch}x{n}xf16>\n"
            f"  return %y : tensor<{batch}x{n}xf16>\n}}\n")

