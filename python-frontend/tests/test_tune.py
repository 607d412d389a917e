"""python3 -m qfuse tune: candidates from the compiler, artifacts, the run
list, reading qfuse-bench's results back into a tuning database, and the
compiles that then use it."""
import json
import os
import re
import subprocess
import unittest

from support import (LLAMA3_8B, TINY_LLAMA, TempDirTestCase, run_cli,
                     tool_or_skip)

from qfuse import tools, tune
from qfuse.config import ModelConfig

FAKE_BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_qfuse_bench.py")
INT4 = "int4, group = 128, scale = f16"


def listing(n, k, batch, *extra):
    """qfuse-compile --list-tilings, parsed: [(tiling body, default?)]."""
    proc = subprocess.run([tools.find_tool("qfuse-compile"),
                           f"--list-tilings=!qf.weight<{n}x{k}, #qf.enc<{INT4}>>",
                           f"--batch-sizes={batch}"] + list(extra),
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return [(m.group(1), bool(m.group(2)))
            for m in re.finditer(r"^#qf\.tiling<(.*)>  // .*?(, default)?$", proc.stdout,
                                 re.M)]


class Shapes(unittest.TestCase):
    def test_llama3_8b_launches(self):
        shapes = tune.linear_shapes(ModelConfig(LLAMA3_8B))
        got = {(s["name"], s["n"], s["k"], s["gated"]): s["kinds"] for s in shapes}
        self.assertEqual(got, {
            ("gate_up", 28672, 4096, True): ["gate_proj", "up_proj"],
            ("q_proj", 4096, 4096, False): ["q_proj", "o_proj"],
            ("k_proj", 1024, 4096, False): ["k_proj", "v_proj"],
            ("down_proj", 4096, 14336, False): ["down_proj"],
            ("lm_head", 128256, 4096, False): ["lm_head"],
        })

    def test_batch_sizes(self):
        self.assertEqual(tune.parse_batch_sizes("1, 8,16,8"), [1, 8, 16])
        for bad, needle in (("0", "0 is not positive"), ("1,-4", "-4 is not positive"),
                            ("1,x", "'x' is not a number")):
            with self.subTest(bad=bad), self.assertRaises(tune.TuneError) as e:
                tune.parse_batch_sizes(bad)
            self.assertIn(needle, str(e.exception))

    def test_labels(self):
        self.assertEqual(tune.tiling_label("matvec, block_n = 8, k_unroll = 2"), "n8u2s1")
        self.assertEqual(tune.tiling_label("matvec, block_m = 2, block_n = 4, vec_bytes = 8, "
                                           "split_k = 2"), "n4u1s2v8")
        self.assertEqual(tune.tiling_label("mma, block_m = 16, block_n = 128, block_k = 64, "
                                           "split_k = 2, stages = 4"), "M16N128S2K64T4C1")
        self.assertEqual(tune.tiling_label("wgmma, block_m = 128, block_n = 128, block_k = 64, "
                                           "stages = 3, cluster_k = 2"), "W128N128S1K64T3C2")
        self.assertEqual(tune.tiling_label("dequant_gemm"), "D")


class Prepare(TempDirTestCase):
    """The path without a GPU, end to end with the real compiler."""

    def prepare(self, *extra):
        config = self.write_config(TINY_LLAMA, "tiny.json")
        work = os.path.join(self.tmp, "work")
        proc = run_cli("tune", "--config", config, "--batch-sizes", "1,16", "--top", "2",
                       "--work", work, "--prepare-only", *extra)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(work, "manifest.json")) as f:
            return config, work, json.load(f), proc

    def test_candidates_artifacts_and_run_list(self):
        tool_or_skip(self, "qfuse-compile")
        config, work, manifest, proc = self.prepare()
        # How to go on is printed: run.sh on the GPU machine, --select back here.
        self.assertIn(f"bash {work}/run.sh [RESULTS_DIR]", proc.stdout)
        self.assertIn("python3 -m qfuse tune --select", proc.stdout)
        self.assertIn(os.path.join(os.path.dirname(config), "qfuse-tuning-db.json"),
                      proc.stdout)
        self.assertEqual(manifest["encoding_text"], INT4)
        self.assertEqual(manifest["batch_sizes"], [1, 16])
        self.assertEqual(manifest["skipped"], [])

        # Per (shape, batch), exactly the compiler's listing, its default first.
        by_key = {}
        for c in manifest["candidates"]:
            by_key.setdefault((c["shape"], c["m"]), []).append(c)
        shapes = {s["name"]: s for s in manifest["shapes"]}
        self.assertEqual(set(shapes), {"gate_up", "q_proj", "k_proj", "down_proj"})
        for (shape, m), cands in by_key.items():
            s = shapes[shape]
            extra = ["--list-top=2"] + (["--list-gated"] if s["gated"] else [])
            expected = listing(s["weight_n"], s["k"], m, *extra)
            cands.sort(key=lambda c: c["rank"])
            with self.subTest(shape=shape, m=m):
                self.assertEqual([(c["tiling"], c["default"]) for c in cands], expected)
                self.assertTrue(cands[0]["default"])
        self.assertEqual(len(by_key), 4 * 2)
        # At batch 1 the matvec, at 16 the tensor-core kernel (ranked).
        self.assertTrue(all(c["kernel"] == "matvec" for c in by_key[("q_proj", 1)]))
        mma = [c["predicted_us"] for c in by_key[("q_proj", 16)]]
        self.assertEqual(mma, sorted(mma))

        # Every candidate compiled into an artifact of its one matmul.
        for c in manifest["candidates"]:
            path = os.path.join(work, c["artifact"])
            with open(path) as f:
                artifact = json.load(f)
            self.assertEqual([p["batch"] for p in artifact["plans"]], [c["m"]])
            n = c["n"] // 2 if c["gated"] else c["n"]
            self.assertEqual(artifact["weights"][0]["shape"], [n, c["k"]])
            self.assertEqual(artifact["weights"][0]["encoding"], INT4)
            self.assertEqual(artifact["weights"][0]["name"], c["name"])

        # The run list: one checked qfuse-bench run per artifact, cuBLAS of
        # the database's shape (2N for gate and up) in the same process, in
        # rank order.
        with open(os.path.join(work, "runs.txt")) as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), len(manifest["candidates"]))
        ranks = []
        for line, c in zip(lines, manifest["candidates"]):
            self.assertEqual(line, f"{c['name']} --artifact {c['artifact']} --batch {c['m']} "
                                   f"--gemm {c['m']}x{c['n']}x{c['k']} --check")
            ranks.append(c["rank"])
        self.assertEqual(ranks, sorted(ranks))
        gate = next(c for c in manifest["candidates"] if c["shape"] == "gate_up")
        self.assertEqual(gate["n"], 2 * TINY_LLAMA["intermediate_size"])
        with open(os.path.join(work, "run.sh")) as f:
            script = f.read()
        for line, r in zip(lines, manifest["runs"]):
            name, args = line.split(" ", 1)
            # Each run with its estimated seconds, which the budget weighs.
            self.assertGreater(r["estimated_s"], 1.0)
            self.assertIn(f"run {name} {r['estimated_s']} {args}\n", script)
        self.assertEqual(subprocess.run(["bash", "-n", os.path.join(work, "run.sh")]).returncode,
                         0)

    def test_run_script_then_select(self):
        """run.sh with a stand-in qfuse-bench, then --select: the fastest
        passing candidate per (shape, batch) lands in the model's database,
        which a compile of the model then reads."""
        tool_or_skip(self, "qfuse-compile")
        config, work, manifest, _ = self.prepare()
        q1 = [c for c in manifest["candidates"] if c["shape"] == "q_proj" and c["m"] == 1]
        fastest, failing = q1[-1], q1[0]
        times = {c["name"]: 50.0 + c["rank"] for c in manifest["candidates"]}
        times[fastest["name"]] = 5.0
        times[failing["name"]] = "fail"
        crashed = next(c for c in manifest["candidates"] if c["shape"] == "down_proj")
        times[crashed["name"]] = "crash"
        fake_times = os.path.join(self.tmp, "times.json")
        with open(fake_times, "w") as f:
            json.dump(times, f)
        results = os.path.join(self.tmp, "results")
        out = os.path.join(self.tmp, "out")
        env = dict(os.environ, QFUSE_BENCH=FAKE_BENCH, FAKE_BENCH_TIMES=fake_times, OUT=out)
        proc = subprocess.run(["bash", os.path.join(work, "run.sh"), results, "0"],
                              capture_output=True, text=True, env=env, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn(f"FAILED (1) {failing['name']}", proc.stdout)
        self.assertIn(f"FAILED (134) {crashed['name']}", proc.stdout)
        self.assertTrue(os.path.isfile(os.path.join(results, "manifest.json")))
        self.assertTrue(os.path.isfile(os.path.join(out, "tune-results.tgz")))

        proc = run_cli("tune", "--select", os.path.join(out, "tune-results.tgz"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        db_path = os.path.join(os.path.dirname(config), "qfuse-tuning-db.json")
        with open(db_path) as f:
            db = {(e["m"], e["n"], e["k"]): e for e in json.load(f)}
        self.assertEqual(db[(1, 256, 256)]["tiling"], fastest["tiling"])
        self.assertEqual(db[(1, 256, 256)]["measured_us"], 5.0)
        self.assertEqual(db[(1, 256, 256)]["encoding"], INT4)
        self.assertIn(f"{failing['name']}: check FAILED", proc.stdout)
        self.assertIn(f"{crashed['name']}: no result: CUDA error", proc.stdout)
        # Every (shape, batch) with a passing candidate has an entry.
        self.assertEqual(len(db), 8)

        # The model's compiles read it (over the shipped database).
        ir = os.path.join(self.tmp, "q.mlir")
        proc = run_cli("compile", "--config", config, "--decode-step-only", "--layers", "1",
                       "--batch", "1", "--emit", "mlir", "-o", ir)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"tuning database {db_path} (qfuse tune) over the shipped one",
                      proc.stderr)
        with open(ir) as f:
            text = f.read()
        self.assertIn(f"#qf.tiling<{fastest['tiling']}>", text)


    def test_measures_here_with_a_gpu(self):
        """Where qfuse-bench and a device are here, tune measures at once
        (a stand-in qfuse-bench plays the GPU) and writes the database."""
        tool_or_skip(self, "qfuse-compile")
        from unittest import mock
        from qfuse import cli
        config = self.write_config(TINY_LLAMA, "tiny.json")
        out = os.path.join(self.tmp, "db.json")
        with mock.patch.object(tune, "gpu_problem", return_value=None), \
                mock.patch.dict(os.environ, {"QFUSE_BENCH": FAKE_BENCH}):
            code = cli.main(["tune", "--config", config, "--batch-sizes", "16",
                             "--top", "1", "--out", out, "--budget-s", "0"])
        self.assertEqual(code, 0)
        with open(out) as f:
            db = json.load(f)
        # One entry per shape (gate_up, q, k, down) at batch 16: the default,
        # the only candidate of --top 1 on a weight this small.
        self.assertEqual(sorted((e["m"], e["n"], e["k"]) for e in db),
                         [(16, 128, 256), (16, 256, 256), (16, 256, 512), (16, 1024, 256)])
        self.assertTrue(all(e["tiling"].startswith("mma") and e["measured_us"] == 100.0
                            for e in db))

    def test_the_budget_starts_only_what_fits(self):
        tool_or_skip(self, "qfuse-compile")
        _, work, manifest, _ = self.prepare()
        results = os.path.join(self.tmp, "results")
        env = dict(os.environ, QFUSE_BENCH=FAKE_BENCH)
        proc = subprocess.run(["bash", os.path.join(work, "run.sh"), results, "3"],
                              capture_output=True, text=True, env=env, cwd=self.tmp)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn(f"0 runs (0 failed), {len(manifest['runs'])} not run (budget)",
                      proc.stdout)
        proc = run_cli("tune", "--select", results, "--out", os.path.join(self.tmp, "db.json"))
        self.assertEqual(proc.returncode, 1)
        self.assertIn("no candidate was measured with passing checks", proc.stderr)
        # What is left depends on how long the script took to get there.
        self.assertRegex(proc.stderr, r"not run \(budget: [0-3] s left, \d+ s needed\)")


class Select(TempDirTestCase):
    """--select on synthetic qfuse-bench results."""

    def results(self, measured, chip="sm_90", out=None):
        """A results folder: `measured` {name: (m, n, k, tiling, kernel, us
        or 'fail' or None (no run), default?)}."""
        folder = os.path.join(self.tmp, "results")
        os.makedirs(folder, exist_ok=True)
        cands = []
        for rank, (name, (m, n, k, tiling, kernel, us, default)) in enumerate(
                measured.items()):
            cands.append({"name": name, "artifact": f"artifacts/{name}.qfa", "shape": "s",
                          "kinds": ["q_proj"], "m": m, "n": n, "k": k, "gated": False,
                          "encoding": INT4, "tiling": tiling, "kernel": kernel,
                          "predicted_us": None, "default": default, "rank": rank})
            if us is None:
                continue
            run = {"cublas": [{"label": f"{m}x{n}x{k}", "stats": {"median_ms": 0.02}}],
                   "artifact_plans": [{"artifact": f"artifacts/{name}.qfa", "batch": m,
                                       "stats": {"median_ms": (100 if us == "fail" else us)
                                                 / 1e3}}],
                   "checks": [{"kernel": "k", "m": m, "relative_error": 0.5 if us == "fail"
                               else 1e-4, "passed": us != "fail"}]}
            with open(os.path.join(folder, name + ".json"), "w") as f:
                json.dump(run, f)
        with open(os.path.join(folder, "manifest.json"), "w") as f:
            json.dump({"version": 1, "chip": chip, "candidates": cands,
                       "out": out, "config": None}, f)
        return folder

    def select(self, folder, out, *extra):
        proc = run_cli("tune", "--select", folder, "--out", out, *extra)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out) as f:
            return proc, json.load(f)

    def test_fastest_passing_wins(self):
        folder = self.results({
            "a": (1, 4096, 4096, "matvec, block_n = 8, k_unroll = 2", "matvec", 9.0, True),
            "b": (1, 4096, 4096, "matvec, block_n = 16", "matvec", 7.5, False),
            "c": (1, 4096, 4096, "matvec, block_n = 32", "matvec", "fail", False),
            "d": (1, 4096, 4096, "matvec, block_n = 4, split_k = 2", "matvec", None, False),
            "e": (16, 4096, 4096, "mma, block_m = 16, block_n = 64", "mma", "fail", True),
        })
        out = os.path.join(self.tmp, "db.json")
        proc, db = self.select(folder, out)
        # "c" failed its check: never selected although its time is lowest;
        # batch 16 had no passing candidate: no entry.
        self.assertEqual(db, [{"m": 1, "n": 4096, "k": 4096, "encoding": INT4,
                               "tiling": "matvec, block_n = 16", "measured_us": 7.5}])
        self.assertIn("c: check FAILED", proc.stdout)
        self.assertIn("d: not run", proc.stdout)
        self.assertIn("e: check FAILED", proc.stdout)
        self.assertRegex(proc.stdout, r"s +1 +4096 +4096 +2/4 +7\.50 +9\.00 +20\.00 +2\.67  "
                                      r"matvec, block_n = 16")

    def test_merges_into_the_output(self):
        out = os.path.join(self.tmp, "db.json")
        other = {"m": 8, "n": 1024, "k": 4096, "encoding": INT4,
                 "tiling": "matvec, block_m = 8, block_n = 4", "measured_us": 3.0}
        same = {"m": 1, "n": 4096, "k": 4096, "encoding": "int4,  group = 128, scale = f16",
                "tiling": "matvec, block_n = 32", "measured_us": 11.0}
        arch = dict(same, chip="sm_90a", tiling="wgmma, block_m = 64")
        with open(out, "w") as f:
            json.dump([other, same, arch], f)
        folder = self.results({
            "a": (1, 4096, 4096, "matvec, block_n = 8", "matvec", 9.0, True)})
        _, db = self.select(folder, out)
        self.assertEqual(len(db), 3)
        self.assertIn(other, db)          # another shape: kept
        self.assertIn(arch, db)           # another target's entry: kept
        self.assertIn({"m": 1, "n": 4096, "k": 4096, "encoding": INT4,
                       "tiling": "matvec, block_n = 8", "measured_us": 9.0}, db)
        _, db = self.select(folder, out, "--replace")
        self.assertEqual([e["tiling"] for e in db], ["matvec, block_n = 8"])

    def test_wgmma_entries_for_sm_90a(self):
        measured = {
            "m": (128, 8192, 4096, "mma, block_m = 128, block_n = 128", "mma", 30.0, True),
            "w": (128, 8192, 4096, "wgmma, block_m = 128, block_n = 128", "wgmma", 20.0,
                  False)}
        out = os.path.join(self.tmp, "db.json")
        _, db = self.select(self.results(measured, chip="sm_90a"), out)
        self.assertEqual([(e["tiling"].split(",")[0], e.get("chip")) for e in db],
                         [("mma", None), ("wgmma", "sm_90a")])

    def test_the_compiler_reads_what_select_writes(self):
        tool_or_skip(self, "qfuse-compile")
        folder = self.results({
            "a": (1, 4096, 4096, "matvec, block_n = 16, k_unroll = 2", "matvec", 5.0, True)})
        out = os.path.join(self.tmp, "db.json")
        self.select(folder, out)
        ir = os.path.join(self.tmp, "q.mlir")
        w = f"!qf.weight<4096x4096, #qf.enc<{INT4}>>"
        with open(ir, "w") as f:
            f.write(f"func.func @q(%x: tensor<1x4096xf16>) -> tensor<1x4096xf16> {{\n"
                    f"  %w = qf.weight_ref \"q\" : {w}\n"
                    f"  %y = qf.matmul %x, %w : tensor<1x4096xf16>, {w} -> "
                    f"tensor<1x4096xf16>\n"
                    f"  return %y : tensor<1x4096xf16>\n}}\n")
        compiled = os.path.join(self.tmp, "q.out.mlir")
        proc = run_cli("compile", ir, "--emit", "mlir", "-o", compiled, "--tuning-db", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(compiled) as f:
            self.assertIn("#qf.tiling<matvec, block_n = 16, k_unroll = 2>", f.read())

    def test_errors(self):
        os.makedirs(os.path.join(self.tmp, "empty"))
        proc = run_cli("tune", "--select", os.path.join(self.tmp, "empty"), "--out", "x.json")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("no manifest.json there", proc.stderr)
        folder = self.results({"a": (1, 64, 64, "matvec", "matvec", "fail", True)})
        proc = run_cli("tune", "--select", folder, "--out", os.path.join(self.tmp, "db.json"))
        self.assertEqual(proc.returncode, 1)
        self.assertIn("no candidate was measured with passing checks", proc.stderr)
        bad = os.path.join(self.tmp, "bad.json")
        with open(bad, "w") as f:
            f.write("{}")
        folder = self.results({"a": (1, 64, 64, "matvec", "matvec", 2.0, True)})
        proc = run_cli("tune", "--select", folder, "--out", bad)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(f"tuning database {bad}: expected a JSON array", proc.stderr)


class Errors(TempDirTestCase):
    def test_bad_input_names_the_problem(self):
        tiny = self.write_config(TINY_LLAMA)
        no_layers = self.write_config(dict(TINY_LLAMA, num_hidden_layers=0), "zero.json")
        not_llm = self.write_config({"architectures": ["BertModel"], "hidden_size": 768},
                                    "bert.json")
        cases = [
            (["--config", tiny, "--encoding", "int3"], "unknown encoding 'int3'"),
            (["--config", tiny, "--batch-sizes", "0,8"],
             "--batch-sizes '0,8': 0 is not positive"),
            (["--config", tiny, "--batch-sizes", "-1"], "-1 is not positive"),
            (["--config", tiny, "--encoding", "fp16"],
             "f16 weights are dense and run cuBLAS; there is no kernel tiling to tune"),
            (["--config", no_layers],
             "cannot derive the model's linear layers to tune: "
             f"{no_layers}: field 'num_hidden_layers' is 0"),
            (["--config", not_llm], "cannot derive the model's linear layers to tune"),
            (["--config", tiny, "--model", self.tmp], "one of them"),
            ([], "give the model as --config config.json or --model DIR"),
            (["--model", os.path.join(self.tmp, "nowhere")], "no such directory"),
            (["--config", tiny, "--chip", "sm_75"], "--chip sm_75: expected one of"),
            (["--config", tiny, "--top", "-1"], "--top -1"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                proc = run_cli("tune", "--prepare-only", "--work",
                               os.path.join(self.tmp, "w"), *args)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn(needle, proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)


class TuningDatabasePrecedence(TempDirTestCase):
    def test_the_models_database_over_the_shipped_one(self):
        with open(tools.SHIPPED_TUNING_DB) as f:
            shipped = json.load(f)
        taken = shipped[0]
        mine = dict(taken, tiling="matvec, block_n = 2, split_k = 4", measured_us=1.0)
        config = self.write_config(TINY_LLAMA)
        with open(os.path.join(os.path.dirname(config), tools.USER_TUNING_DB), "w") as f:
            json.dump([mine], f)
        path = tools.resolve_tuning_db("auto", config, self.tmp)
        with open(path) as f:
            merged = json.load(f)
        self.assertEqual(len(merged), len(shipped))
        self.assertIn(mine, merged)
        self.assertNotIn(taken, merged)
        # Without the model's database: the shipped one; 'shipped' ignores it.
        self.assertEqual(tools.resolve_tuning_db("shipped", config), tools.SHIPPED_TUNING_DB)
        self.assertEqual(tools.resolve_tuning_db("auto", os.path.join(self.tmp, "x.json")),
                         tools.SHIPPED_TUNING_DB)
        self.assertEqual(tools.resolve_tuning_db("auto", None), tools.SHIPPED_TUNING_DB)


if __name__ == "__main__":
    unittest.main()
