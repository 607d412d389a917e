"""The roofline report: qf-roofline numbers per layer, measured times from a
qfuse-bench JSON, and the SVG plot."""
import json
import os
import unittest
import xml.etree.ElementTree as ET

from support import REPO, TINY_LLAMA, TempDirTestCase, run_cli, tool_or_skip
from qfuse.report import (format_table, group_by_layer, load_measurements,
                          match_measurements, run_roofline, write_svg)


def bench_json(path, plans):
    with open(path, "w") as f:
        json.dump({"command": "qfuse-bench ...", "artifact_plans": plans}, f)


def plan(weights, median_ms, batch=1):
    return {"artifact": "a.qfa", "batch": batch, "stats": {"median_ms": median_ms},
            "weight_shapes": [{"weight": w, "n": n, "k": k, "encoding": e}
                              for w, n, k, e in weights]}


INT4 = "int4, group = 128, scale = f16"


class Report(TempDirTestCase):
    def setUp(self):
        super().setUp()
        tool_or_skip(self, "qfuse-opt")
        self.config = self.write_config(TINY_LLAMA)
        self.ir = os.path.join(self.tmp, "tiny.mlir")
        proc = run_cli("emit", "--config", self.config, "-o", self.ir)
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_roofline_numbers(self):
        entries = run_roofline(self.ir, batch=1)
        self.assertEqual(len(entries), 2 * 7 + 1)
        q = next(e for e in entries if e["weight"] == "model.layers.0.self_attn.q_proj")
        # 256 x 256 int4 g128: codes n*k/2, f16 scales n * k/128 * 2.
        self.assertEqual(q["bytes"]["codes"], 256 * 256 // 2)
        self.assertEqual(q["bytes"]["scales"], 256 * 2 * 2)
        self.assertEqual((q["m"], q["n"], q["k"]), (1, 256, 256))
        rows = group_by_layer(entries)
        self.assertEqual([r["label"] for r in rows], ["layer 0", "layer 1", "lm_head"])
        self.assertEqual(rows[0]["ops"], 7)
        self.assertAlmostEqual(sum(r["predicted_us"] for r in rows),
                               sum(e["predicted_us"] for e in entries))
        # The bandwidth reaches the pass (M is static here: the emitted batch).
        slow = run_roofline(self.ir, bandwidth_gbps=1000)
        self.assertEqual(slow[0]["bandwidth_gbps"], 1000)
        self.assertGreater(slow[0]["memory_us"], q["memory_us"])

    def test_measured_times_and_svg(self):
        bench = os.path.join(self.tmp, "bench.json")
        bench_json(bench, [
            plan([("q_proj", 256, 256, INT4)], 0.004),
            plan([("lm_head", 1024, 256, INT4)], 0.005),
            plan([("gate_proj", 512, 256, INT4)], 0.006, batch=2),  # other batch
            plan([(f"w{i}", 256, 256, INT4) for i in range(3)] +
                 [("x", 128, 256, INT4), ("y", 512, 256, INT4), ("z", 256, 512, INT4),
                  ("lm", 1024, 256, INT4)], 0.1),
        ])
        entries = run_roofline(self.ir)
        steps = match_measurements(entries, load_measurements([bench]))
        by_name = {e["weight"]: e for e in entries}
        self.assertAlmostEqual(by_name["lm_head"]["measured_us"], 5.0)
        # Same shape (o_proj is 256x256 too) takes the q_proj measurement.
        self.assertAlmostEqual(by_name["model.layers.1.self_attn.o_proj"]["measured_us"], 4.0)
        self.assertNotIn("measured_us", by_name["model.layers.0.mlp.gate_proj"])
        self.assertEqual(len(steps), 1)
        table = format_table(entries, steps)
        self.assertIn("measured us", table)
        self.assertIn("lm_head", table)
        self.assertIn("measured whole step: 100.0 us for 7 weights", table)
        per_op = format_table(entries, per_op=True)
        self.assertIn("model.layers.1.mlp.down_proj", per_op)
        svg = os.path.join(self.tmp, "r.svg")
        write_svg(entries, svg, "tiny")
        root = ET.parse(svg).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        self.assertEqual(root.tag, ns + "svg")
        # The two bandwidth lines, one point per distinct shape (q/o, k/v,
        # gate/up, down, lm_head), a square per measured one (q/o, lm_head).
        self.assertEqual(len(root.findall(f"{ns}polyline")), 2)
        self.assertEqual(len(root.findall(f"{ns}circle")), 5)
        labels = [t.text for t in root.findall(f"{ns}text")]
        self.assertIn("q_proj, o_proj", labels)
        self.assertIn("gate_proj, up_proj", labels)
        self.assertEqual(len(root.findall(f"{ns}rect")), 2 + 2)  # + background, frame

    def test_cli_report(self):
        svg = os.path.join(self.tmp, "plot.svg")
        results = os.path.join(REPO, "bench", "results")
        args = ["report", "--config", self.config, "--batch", "4", "--svg", svg, "--json",
                os.path.join(self.tmp, "r.json")]
        if os.path.isdir(results):
            args += ["--bench", results]  # recorded results, no matching shape
        proc = run_cli(*args)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("layer 1", proc.stdout)
        self.assertIn("total", proc.stdout)
        ET.parse(svg)
        with open(os.path.join(self.tmp, "r.json")) as f:
            entries = json.load(f)
        self.assertEqual(len(entries), 15)
        self.assertEqual({e["m"] for e in entries}, {4})

    def test_bad_bench_json(self):
        bad = os.path.join(self.tmp, "bad.json")
        with open(bad, "w") as f:
            f.write("{")
        with self.assertRaisesRegex(ValueError, "bad.json: cannot read"):
            load_measurements([bad])


if __name__ == "__main__":
    unittest.main()
