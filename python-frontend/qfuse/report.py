"""The roofline report: qfuse-opt's qf-roofline per fused matmul, grouped per
decoder layer, with measured times from qfuse-bench JSON (bench/results) and
a hand-written SVG plot.

The pass (lib/Dialect/QF/Transforms/Roofline.cpp) writes one JSON object per
qf.fused_matmul: weight, m, n, k, encoding, bytes{...}, flops, predicted_us,
memory_us, compute_us, launch_us, bound, bandwidth_gbps, ...
"""
import glob
import json
import math
import os
import re
import tempfile

from .atomic import write_text
from .tools import run_tool

_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")


def run_roofline(ir_path, batch=1, bandwidth_gbps=None, peak_tflops=None, tuning_db=None):
    """Runs the fusion and tiling passes and qf-roofline; returns its entries."""
    fd, json_path = tempfile.mkstemp(prefix="qfuse-roofline-", suffix=".json")
    os.close(fd)
    try:
        roof = [f"batch={batch}", f"json={json_path}"]
        if bandwidth_gbps:
            roof.append(f"bandwidth-gbps={bandwidth_gbps}")
        if peak_tflops:
            roof.append(f"peak-tflops={peak_tflops}")
        tiling = [f"batch={batch}"]
        if bandwidth_gbps:
            tiling.append(f"bandwidth-gbps={bandwidth_gbps}")
        if tuning_db:
            tiling.append(f"tuning-db={tuning_db}")
        run_tool("qfuse-opt", [ir_path, "--qf-import-quant", "--canonicalize",
                               "--qf-fuse-dequant-matmul",
                               "--qf-select-tiling=" + " ".join(tiling),
                               "--qf-roofline=" + " ".join(roof), "-o", os.devnull],
                 label="roofline")
        with open(json_path) as f:
            return json.load(f)
    finally:
        os.unlink(json_path)


def layer_of(weight):
    match = _LAYER.search(weight)
    if match:
        return int(match.group(1))
    return None


def kind_of(weight):
    return weight.rsplit(".", 1)[-1]


def _enc_body(text):
    text = text.strip()
    if text.startswith("#qf.enc<") and text.endswith(">"):
        text = text[len("#qf.enc<"):-1]
    return text.strip()


# -- measurements --------------------------------------------------------------
def load_measurements(paths):
    """qfuse-bench JSON files (or directories of them) -> measured plans:
    dict(weights=[(weight, n, k, encoding)], batch, median_us, artifact, source)."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(glob.glob(os.path.join(p, "*.json")))
        else:
            files.append(p)
    plans = []
    for path in files:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise ValueError(f"{path}: cannot read a qfuse-bench JSON: {e}") from None
        if not isinstance(data, dict) or "artifact_plans" not in data:
            continue  # tuning sweeps and other files in the same folder
        for plan in data["artifact_plans"]:
            try:
                plans.append({
                    "weights": [(w["weight"], w["n"], w["k"], _enc_body(w["encoding"]))
                                for w in plan.get("weight_shapes", [])],
                    "batch": plan["batch"],
                    "median_us": plan["stats"]["median_ms"] * 1000.0,
                    "artifact": plan.get("artifact", ""),
                    "source": path,
                })
            except (KeyError, TypeError) as e:
                raise ValueError(f"{path}: artifact_plans entry without {e}") from None
    return plans


def match_measurements(entries, plans):
    """Sets entry['measured_us'] from single-weight plans of the same shape,
    encoding and batch (same projection kind preferred). Returns the
    multi-weight plans (whole steps) whose batch matches, for totals."""
    singles = [p for p in plans if len(p["weights"]) == 1]
    for e in entries:
        enc = _enc_body(e.get("encoding", ""))
        best = None
        for p in singles:
            w, n, k, penc = p["weights"][0]
            if (n, k, penc, p["batch"]) != (e["n"], e["k"], enc, e["m"]):
                continue
            if best is None or kind_of(w) == kind_of(e["weight"]):
                best = p
        if best is not None:
            e["measured_us"] = best["median_us"]
    # Whole steps: same batch, and every shape here is among the step's.
    batch = entries[0]["m"] if entries else None
    wanted = {(e["n"], e["k"], _enc_body(e.get("encoding", ""))) for e in entries}
    return [p for p in plans if len(p["weights"]) > 1 and p["batch"] == batch
            and wanted <= {(n, k, enc) for _, n, k, enc in p["weights"]}]


# -- table ---------------------------------------------------------------------
def group_by_layer(entries):
    """Rows per decoder layer (then lm_head and other ops), in order."""
    rows = {}
    for e in entries:
        layer = layer_of(e["weight"])
        key = (0, layer) if layer is not None else (1, e["weight"])
        row = rows.setdefault(key, {
            "label": f"layer {layer}" if layer is not None else e["weight"],
            "ops": 0, "weight_bytes": 0, "bytes": 0, "flops": 0,
            "predicted_us": 0.0, "memory_us": 0.0, "measured_us": 0.0,
            "measured_ops": 0, "encodings": set()})
        row["ops"] += 1
        row["weight_bytes"] += e["bytes"]["weights"]
        row["bytes"] += e["bytes"]["total"]
        row["flops"] += e["flops"]
        row["predicted_us"] += e["predicted_us"]
        row["memory_us"] += e["memory_us"]
        row["encodings"].add(_enc_body(e.get("encoding", "")))
        if "measured_us" in e:
            row["measured_us"] += e["measured_us"]
            row["measured_ops"] += 1
    return [rows[k] for k in sorted(rows, key=lambda k: (k[0], k[1] if k[0] == 0 else 0))]


def _mb(b):
    return f"{b / 1e6:.2f}"


def format_table(entries, steps=(), per_op=False):
    """The per-layer (or per-op) table as text, with totals."""
    if not entries:
        return "no qf.fused_matmul in the IR: nothing to report\n"
    has_measured = any("measured_us" in e for e in entries)
    head = ["layer" if not per_op else "weight", "ops", "weights MB", "moved MB",
            "FLOP/B", "predicted us", "memory us"]
    if has_measured:
        head += ["measured us", "of predicted"]
    table = []
    if per_op:
        for e in entries:
            row = [e["weight"], "1", _mb(e["bytes"]["weights"]), _mb(e["bytes"]["total"]),
                   f"{e['flops_per_byte']:.2f}", f"{e['predicted_us']:.3f}",
                   f"{e['memory_us']:.3f}"]
            if has_measured:
                row += ([f"{e['measured_us']:.3f}",
                         f"{e['measured_us'] / e['predicted_us']:.2f}x"]
                        if "measured_us" in e else ["-", "-"])
            table.append(row)
    else:
        for r in group_by_layer(entries):
            row = [r["label"], str(r["ops"]), _mb(r["weight_bytes"]), _mb(r["bytes"]),
                   f"{r['flops'] / r['bytes']:.2f}", f"{r['predicted_us']:.3f}",
                   f"{r['memory_us']:.3f}"]
            if has_measured:
                full = r["measured_ops"] == r["ops"]
                row += ([f"{r['measured_us']:.3f}",
                         f"{r['measured_us'] / r['predicted_us']:.2f}x"] if full
                        else [f"({r['measured_ops']}/{r['ops']} ops)", "-"])
            table.append(row)
    total_bytes = sum(e["bytes"]["total"] for e in entries)
    total = ["total", str(len(entries)),
             _mb(sum(e["bytes"]["weights"] for e in entries)), _mb(total_bytes),
             f"{sum(e['flops'] for e in entries) / total_bytes:.2f}",
             f"{sum(e['predicted_us'] for e in entries):.3f}",
             f"{sum(e['memory_us'] for e in entries):.3f}"]
    if has_measured:
        measured = [e for e in entries if "measured_us" in e]
        if len(measured) == len(entries):
            m = sum(e["measured_us"] for e in measured)
            total += [f"{m:.3f}", f"{m / sum(e['predicted_us'] for e in entries):.2f}x"]
        else:
            total += [f"({len(measured)}/{len(entries)} ops)", "-"]
    widths = [max(len(str(x)) for x in col) for col in zip(head, total, *table)]

    def line(cells):
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))
    out = [line(head), line(["-" * w for w in widths])]
    out += [line(r) for r in table]
    out += [line(["-" * w for w in widths]), line(total)]
    bw = entries[0].get("bandwidth_gbps")
    out.append(f"batch (M) {entries[0]['m']}; predicted = bytes / {bw} GB/s + "
               f"{entries[0].get('launch_us', 0)} us launch per op (qf-roofline); "
               "memory us = bytes / bandwidth alone")
    predicted = sum(e["predicted_us"] for e in entries)
    for s in steps:
        out.append(f"measured whole step: {s['median_us']:.1f} us for {len(s['weights'])} "
                   f"weights ({os.path.basename(s['artifact'])}, {s['source']}); "
                   f"predicted for the {len(entries)} ops here: {predicted:.1f} us")
    return "\n".join(out) + "\n"


# -- SVG -----------------------------------------------------------------------
def _esc(text):
    return (str(text).replace("&", "&amp;").replace("<", "&lt;")
            .replace(">", "&gt;").replace('"', "&quot;"))


def write_svg(entries, path, title="qfuse roofline"):
    """Time against bytes moved (log-log): the bandwidth line (bytes / BW),
    the line with the launch cost, each distinct linear layer's predicted
    time, and its measured time where a bench JSON gave one."""
    if not entries:
        raise ValueError("no qf.fused_matmul in the IR: nothing to plot")
    bw = float(entries[0].get("bandwidth_gbps", 4300))
    launch = float(entries[0].get("launch_us", 3))
    # One point per distinct (shape, encoding): layers repeat, and projections
    # of one shape (k/v, gate/up) share a point and a label.
    points, kinds = {}, {}
    for e in entries:
        key = (e["n"], e["k"], _enc_body(e.get("encoding", "")))
        points.setdefault(key, e)
        kinds.setdefault(key, [])
        if kind_of(e["weight"]) not in kinds[key]:
            kinds[key].append(kind_of(e["weight"]))
    xs = [e["bytes"]["total"] for e in points.values()]
    ys = [e["predicted_us"] for e in points.values()]
    ys += [e["measured_us"] for e in points.values() if "measured_us" in e]
    ys += [x / (bw * 1e3) for x in xs]
    x_lo = 10 ** math.floor(math.log10(min(xs)))
    x_hi = 10 ** math.ceil(math.log10(max(xs) * 1.01))
    y_lo = 10 ** math.floor(math.log10(min(ys)))
    y_hi = 10 ** math.ceil(math.log10(max(ys) * 1.01))
    W, H, L, R, T, B = 860, 560, 80, 220, 50, 60
    pw, ph = W - L - R, H - T - B

    def sx(x):
        return L + pw * (math.log10(x) - math.log10(x_lo)) / (math.log10(x_hi) - math.log10(x_lo))

    def sy(y):
        return T + ph * (1 - (math.log10(y) - math.log10(y_lo)) /
                         (math.log10(y_hi) - math.log10(y_lo)))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="{T - 20}" font-size="15">{_esc(title)}</text>',
           f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>']
    d = x_lo
    while d <= x_hi * 1.001:
        x = sx(d)
        out.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{T + ph}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{T + ph + 18}" text-anchor="middle">'
                   f'{_esc(_bytes_label(d))}</text>')
        d *= 10
    d = y_lo
    while d <= y_hi * 1.001:
        y = sy(d)
        out.append(f'<line x1="{L}" y1="{y:.1f}" x2="{L + pw}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{d:g}</text>')
        d *= 10
    out.append(f'<text x="{L + pw / 2}" y="{H - 15}" text-anchor="middle">bytes moved per '
               'linear layer (weights + activations)</text>')
    out.append(f'<text x="20" y="{T + ph / 2}" text-anchor="middle" '
               f'transform="rotate(-90 20 {T + ph / 2})">time (us)</text>')

    def curve(fn, style):
        pts = []
        steps = 60
        for i in range(steps + 1):
            x = 10 ** (math.log10(x_lo) + i * (math.log10(x_hi) - math.log10(x_lo)) / steps)
            y = fn(x)
            if y_lo <= y <= y_hi:
                pts.append(f"{sx(x):.1f},{sy(y):.1f}")
        if pts:
            out.append(f'<polyline points="{" ".join(pts)}" fill="none" {style}/>')
    curve(lambda x: x / (bw * 1e3), 'stroke="#1f77b4" stroke-width="2"')
    curve(lambda x: x / (bw * 1e3) + launch, 'stroke="#1f77b4" stroke-dasharray="6,4"')
    for (n, k, enc), e in sorted(points.items(), key=lambda kv: kv[1]["bytes"]["total"]):
        kind = ", ".join(kinds[(n, k, enc)])
        x, y = sx(e["bytes"]["total"]), sy(e["predicted_us"])
        tip = (f"{e['weight']} {n}x{k} {enc}: {e['bytes']['total']} B, predicted "
               f"{e['predicted_us']:.3f} us")
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="#2ca02c">'
                   f'<title>{_esc(tip)}</title></circle>')
        out.append(f'<text x="{x + 7:.1f}" y="{y - 6:.1f}" font-size="10">{_esc(kind)}</text>')
        if "measured_us" in e:
            my = sy(e["measured_us"])
            out.append(f'<rect x="{x - 4:.1f}" y="{my - 4:.1f}" width="8" height="8" '
                       f'fill="#d62728"><title>{_esc(e["weight"])} measured '
                       f'{e["measured_us"]:.3f} us</title></rect>')
            out.append(f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x:.1f}" y2="{my:.1f}" '
                       'stroke="#d62728" stroke-width="0.8"/>')
    lx, ly = L + pw + 15, T + 10
    legend = [('<line x1="0" y1="0" x2="24" y2="0" stroke="#1f77b4" stroke-width="2"/>',
               f"bytes / {bw:g} GB/s"),
              ('<line x1="0" y1="0" x2="24" y2="0" stroke="#1f77b4" stroke-dasharray="6,4"/>',
               f"+ {launch:g} us launch"),
              ('<circle cx="12" cy="0" r="5" fill="#2ca02c"/>', "predicted (qf-roofline)")]
    if any("measured_us" in e for e in points.values()):
        legend.append(('<rect x="8" y="-4" width="8" height="8" fill="#d62728"/>',
                       "measured (qfuse-bench)"))
    for i, (mark, text) in enumerate(legend):
        out.append(f'<g transform="translate({lx},{ly + 20 * i})">{mark}'
                   f'<text x="30" y="4">{_esc(text)}</text></g>')
    out.append("</svg>")
    write_text(path, "\n".join(out) + "\n")


def _bytes_label(b):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= scale:
            return f"{b / scale:g} {unit}"
    return f"{b:g} B"
