"""python3 -m qfuse quantize and qfuse.quantize: the arguments checked before
anything runs, the artifacts compiled into the model directory, the
command line given to qfuse-quantize, and the errors without the tool or a
GPU."""
import contextlib
import io
import json
import os
import stat
import unittest
from unittest import mock

from support import TINY_LLAMA, TempDirTestCase, run_cli, tool_or_skip
import qfuse
from qfuse import quantizer
from qfuse.artifacts import ArtifactError
from qfuse.quantizer import QuantizeError, check_calibration, tool_argv


def fake_tool(path, rc=0, stdout="", stderr=""):
    """A stand-in qfuse-quantize: records its arguments beside itself."""
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f'for a in "$@"; do printf "%s\\n" "$a"; done > "{path}.args"\n'
                f"printf '{stdout}'\nprintf '{stderr}' >&2\nexit {rc}\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


class Arguments(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.model = os.path.dirname(self.write_config(TINY_LLAMA, "model.json"))
        self.out = os.path.join(self.tmp, "out")
        self.files = 0

    def calibration(self, data):
        """A calibration file (a new one each call)."""
        self.files += 1
        path = os.path.join(self.tmp, f"calib{self.files}.json")
        with open(path, "w") as f:
            f.write(data if isinstance(data, str) else json.dumps(data))
        return path

    def test_argument_errors(self):
        m, out = self.model, self.out
        base = ["--model", m, "--out", out]
        cases = [
            (["--model", m, "--out", out], 2,
             "the following arguments are required: --calibration"),
            (["--model", m, "--calibration", "random:4"], 2,
             "the following arguments are required: --out"),
            (base + ["--calibration", "random:0"], 1,
             "--calibration random:0: expected random:N with N a positive number"),
            (base + ["--calibration", "randm:4"], 1,
             "--calibration randm:4: no such file, and not random:N"),
            (base + ["--calibration", self.calibration("[[1, 2], [3, ")], 1,
             f"--calibration {self.tmp}/calib1.json:1:"),
            (base + ["--calibration", self.calibration([[1, 2], []])], 1,
             "sequence 1 is not a non-empty array of token ids"),
            (base + ["--calibration", self.calibration([[1, -2]])], 1,
             "sequence 0 has -2, expected non-negative integer token ids"),
            (base + ["--calibration", self.calibration([[1, 1024]])], 1,
             "sequence 0 has token id 1024, outside the vocabulary (vocab_size 1024)"),
            (base + ["--calibration", "random:4", "--format", "gguf"], 2,
             "argument --format: invalid choice: 'gguf'"),
            (base + ["--calibration", "random:4", "--seq-len", "0"], 2,
             "argument --seq-len: expected a positive number, got '0'"),
            (base + ["--calibration", "random:4", "--seq-len", "129"], 1,
             "--seq-len 129 exceeds the model's 128 positions"),
            (base + ["--calibration", "random:4", "--damp", "-0.1"], 2,
             "argument --damp: expected a positive fraction such as 0.01, got '-0.1'"),
            (base + ["--calibration", "random:4", "--damp", "nan"], 2, "argument --damp"),
            (base + ["--calibration", "random:4", "--encoding", "nvfp4"], 1,
             "GPTQ on the GPU does not support NVFP4's global scale"),
            (base + ["--calibration", "random:4", "--encoding", "int3"], 1,
             "unknown encoding 'int3'"),
            (base + ["--calibration", "random:4", "--act-order"], 1,
             "--act-order with dynamic groups stores a group index (g_idx), which "
             "'int4-g128' has not"),
            (base + ["--calibration", "random:4", "--encoding", "int8", "--static-groups"],
             1, "--static-groups: 'int8' has per-channel scales, not groups"),
            (["--model", m, "--out", m, "--calibration", "random:4"], 1,
             f"--out {m} is the model directory"),
            (["--model", self.tmp, "--out", out, "--calibration", "random:4"], 1,
             f"--model {self.tmp}: no config.json there"),
            (base + ["--calibration", "random:4", "--fp16-artifact",
                     os.path.join(self.tmp, "none.qfa")], 1, "none.qfa: no such file"),
            (base + ["--calibration", "random:4", "--format", "auto-gptq",
                     "--decode-artifact", "d.qfa"], 1,
             "--decode-artifact is for --format qfuse"),
            (base + ["--calibration", "random:4", "--seed", "-1"], 1,
             "--seed -1: expected a non-negative integer"),
        ]
        for args, rc, needle in cases:
            with self.subTest(args=args):
                proc = run_cli("quantize", *args)
                self.assertEqual(proc.returncode, rc, proc.stderr)
                self.assertIn(needle, proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
        # Nothing compiled or written for any of them.
        self.assertEqual(os.listdir(self.model), ["config.json"])
        self.assertFalse(os.path.exists(out))

    def test_act_order_combinations_accepted(self):
        for encoding, extra in (("int4-g128", ["--static-groups"]), ("int8", []),
                                ("#qf.enc<int4, group = 128, scale = f16, act_order>", [])):
            with self.subTest(encoding=encoding):
                proc = run_cli("quantize", "--model", self.model, "--out", self.out,
                               "--calibration", "random:2", "--encoding", encoding,
                               "--act-order", *extra, "--gptq-artifact", "none.qfa",
                               "--fp16-artifact", "none.qfa")
                self.assertEqual(proc.returncode, 1)
                self.assertIn("--fp16-artifact none.qfa: no such file", proc.stderr)

    def test_calibration_spec(self):
        self.assertEqual(check_calibration("random:12"), 12)
        self.assertEqual(check_calibration(self.calibration([[1, 2, 3], [4]]), 1024), 2)
        for bad in ("random:", "random:x", "", None, "random:-1"):
            with self.subTest(spec=bad):
                with self.assertRaises(QuantizeError):
                    check_calibration(bad)

    def test_tool_command_line(self):
        self.assertEqual(
            tool_argv("qq", "M", "nf4", "random:8", "O", "qfuse", 256, "a.qfa", "b.qfa",
                      decode_artifact="c.qfa", act_order=True, static_groups=True,
                      damp=0.05, json_path="r.json", overwrite=True, seed=7, device=1),
            ["qq", "--model", "M", "--encoding", "nf4", "--calibration", "random:8",
             "--out", "O", "--format", "qfuse", "--seq-len", "256", "--fp16-artifact",
             "a.qfa", "--gptq-artifact", "b.qfa", "--decode-artifact", "c.qfa",
             "--act-order", "--static-groups", "--damp", "0.05", "--json", "r.json",
             "--overwrite", "--seed", "7", "--device", "1"])
        self.assertEqual(
            tool_argv("qq", "M", "int4-g128", "c.json", "O", "qfuse", 128, "a", "b"),
            ["qq", "--model", "M", "--encoding", "int4-g128", "--calibration", "c.json",
             "--out", "O", "--format", "qfuse", "--seq-len", "128", "--fp16-artifact", "a",
             "--gptq-artifact", "b"])


class Artifacts(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.model = os.path.dirname(self.write_config(TINY_LLAMA, "model.json"))
        self.out = os.path.join(self.tmp, "out")

    def test_no_compiler_and_no_artifact(self):
        proc = run_cli("quantize", "--model", self.model, "--out", self.out,
                       "--calibration", "random:4", "--seq-len", "64",
                       env={"QFUSE_COMPILE": os.path.join(self.tmp, "no-compiler")})
        self.assertEqual(proc.returncode, 1, proc.stderr)
        artifact = os.path.join(self.model, "qfuse-fp16-calib.qfa")
        self.assertIn(f"no fp16 calibration artifact: {artifact} does not exist, and it "
                      "cannot be compiled here", proc.stderr)
        self.assertIn(f"python3 -m qfuse compile --config {self.model}/config.json "
                      f"--encoding fp16 --batch-sizes 1,64 -o {artifact}", proc.stderr)
        self.assertIn("or pass --fp16-artifact FILE", proc.stderr)
        self.assertEqual(os.listdir(self.model), ["config.json"])

        # The fp16 model given: the GPTQ artifact is the one missing.
        fp16 = os.path.join(self.tmp, "fp16.qfa")
        with open(fp16, "w") as f:
            json.dump({"model": {"max_seq": 64}, "plans": [{"batch": 1}, {"batch": 64}]}, f)
        proc = run_cli("quantize", "--model", self.model, "--out", self.out,
                       "--calibration", "random:4", "--seq-len", "64", "--encoding", "nf4",
                       "--fp16-artifact", fp16,
                       env={"QFUSE_COMPILE": os.path.join(self.tmp, "no-compiler")})
        self.assertEqual(proc.returncode, 1, proc.stderr)
        gptq = os.path.join(self.model, "qfuse-gptq-nf4.qfa")
        self.assertIn(f"no GPTQ artifact for --encoding nf4: {gptq} does not exist",
                      proc.stderr)
        self.assertIn(f"python3 -m qfuse compile-gptq --config {self.model}/config.json "
                      f"--encoding nf4 -o {gptq}", proc.stderr)
        self.assertIn("or pass --gptq-artifact FILE", proc.stderr)

        # A calibration model with fewer positions than --seq-len.
        proc = run_cli("quantize", "--model", self.model, "--out", self.out,
                       "--calibration", "random:4", "--seq-len", "128",
                       "--fp16-artifact", fp16)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(f"{fp16} holds 64 positions, fewer than --seq-len 128", proc.stderr)

    def test_compiles_the_artifacts_then_needs_the_tool(self):
        tool_or_skip(self, "qfuse-compile")
        missing = {"QFUSE_QUANTIZE": os.path.join(self.tmp, "no-quantize")}
        proc = run_cli("quantize", "--model", self.model, "--out", self.out,
                       "--calibration", "random:4", "--seq-len", "64", env=missing)
        fp16 = os.path.join(self.model, "qfuse-fp16-calib.qfa")
        gptq = os.path.join(self.model, "qfuse-gptq-int4-g128.qfa")
        decode = os.path.join(self.model, "qfuse-int4-g128.qfa")
        config = os.path.join(self.model, "config.json")
        for path, how in ((fp16, "--encoding fp16, --batch-sizes 1,64"),
                          (gptq, "--encoding int4-g128"),
                          (decode, "--encoding int4-g128, --batch-sizes 1,8")):
            self.assertIn(f"qfuse quantize: {path} does not exist; compiling it from "
                          f"{config} ({how})", proc.stderr)
            self.assertIn(f"qfuse quantize: wrote {path}", proc.stderr)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("is not an executable qfuse-quantize", proc.stderr)
        self.assertIn(f"The artifacts are ready: {fp16}, {gptq}, {decode}", proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        with open(fp16) as f:
            meta = json.load(f)
        self.assertEqual(meta["model"]["max_seq"], 128)  # max_position_embeddings
        self.assertEqual(meta["model"]["encoding"], "fp16")
        self.assertEqual({w["encoding"] for w in meta["weights"]}, {"f16"})
        self.assertEqual(sorted(p["batch"] for p in meta["plans"]), [1, 64])
        with open(gptq) as f:
            meta = json.load(f)
        self.assertEqual(sorted(p["batch"] for p in meta["plans"]), [256, 512, 1024])
        with open(decode) as f:
            self.assertEqual(sorted(p["batch"] for p in json.load(f)["plans"]), [1, 8])

        # Present now: not compiled again; --format auto-gptq needs no decode
        # artifact.
        os.remove(decode)
        proc = run_cli("quantize", "--model", self.model, "--out", self.out,
                       "--calibration", "random:4", "--format", "auto-gptq", env=missing)
        self.assertEqual(proc.returncode, 1)
        self.assertNotIn("compiling", proc.stderr)
        self.assertIn(f"The artifacts are ready: {fp16}, {gptq};", proc.stderr)

    def test_the_tool_needs_a_gpu(self):
        """With a stand-in qfuse-quantize: no GPU here is an error naming
        it; on a GPU machine the stand-in runs and records the contract."""
        fp16 = os.path.join(self.tmp, "fp16.qfa")
        with open(fp16, "w") as f:
            json.dump({"model": {"max_seq": 128}, "plans": [{"batch": 1}, {"batch": 128}]},
                      f)
        gptq = os.path.join(self.tmp, "gptq.qfa")
        with open(gptq, "w") as f:
            f.write("{}")
        tool = fake_tool(os.path.join(self.tmp, "qfuse-quantize"), stdout="layer 0 done\\n")
        proc = run_cli("quantize", "--model", self.model, "--out", self.out,
                       "--calibration", "random:4", "--fp16-artifact", fp16,
                       "--gptq-artifact", gptq, "--decode-artifact", gptq, "--damp", "0.1",
                       env={"QFUSE_QUANTIZE": tool})
        problem = quantizer.gpu_problem()
        if problem:
            self.assertEqual(proc.returncode, 1, proc.stderr)
            self.assertIn("qfuse quantize: error: qfuse-quantize needs a GPU: ", proc.stderr)
            self.assertIn(problem, proc.stderr)
            self.assertFalse(os.path.exists(tool + ".args"))
            return
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("layer 0 done", proc.stdout)
        with open(tool + ".args") as f:
            args = f.read().splitlines()
        self.assertEqual(args[:20], ["--model", self.model, "--encoding", "int4-g128",
                                     "--calibration", "random:4", "--out", self.out,
                                     "--format", "qfuse", "--seq-len", "128",
                                     "--fp16-artifact", fp16, "--gptq-artifact", gptq,
                                     "--decode-artifact", gptq, "--damp", "0.1"])
        self.assertEqual(args[20], "--json")


class Streaming(TempDirTestCase):
    def test_output_streamed_and_failure_reported(self):
        tool = fake_tool(os.path.join(self.tmp, "tool"), rc=3, stdout="step 1\\nstep 2\\n",
                         stderr="warning: w\\nerror: out of memory\\n")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            with self.assertRaisesRegex(QuantizeError, r"qfuse-quantize failed \(exit 3\): "
                                        r".*tool --x\nwarning: w\nerror: out of memory$"):
                quantizer.run_tool([tool, "--x"])
        self.assertEqual(out.getvalue(), "step 1\nstep 2\n")
        self.assertEqual(err.getvalue(), "warning: w\nerror: out of memory\n")


class PythonApi(TempDirTestCase):
    def test_errors(self):
        with self.assertRaisesRegex(QuantizeError, "expected model="):
            qfuse.quantize(calibration="random:1", out=self.tmp)
        with self.assertRaisesRegex(QuantizeError, "no such directory"):
            qfuse.quantize(os.path.join(self.tmp, "none"), calibration="random:1", out="o")
        model = os.path.dirname(self.write_config(TINY_LLAMA, "model.json"))
        with self.assertRaisesRegex(QuantizeError, "--out OUTDIR is required"):
            qfuse.quantize(model, calibration="random:1")
        with self.assertRaisesRegex(QuantizeError, "--format x: expected one of qfuse, "
                                    "compressed-tensors, auto-gptq"):
            qfuse.quantize(model, calibration="random:1", out="o", format="x")
        with self.assertRaisesRegex(QuantizeError, "config= is for a torch model"):
            qfuse.quantize(model, calibration="random:1", out="o", config=TINY_LLAMA)

    def test_state_dict_saved_to_a_temporary_model(self):
        """model= a state dict (no torch needed): saved to a temporary
        directory, whose artifacts are then missing."""
        state = {"model.norm.weight": ("F16", [256], bytes(512))}
        with mock.patch.dict(os.environ, {"QFUSE_COMPILE": os.path.join(self.tmp, "none")}):
            with self.assertRaises(ArtifactError) as ctx:
                qfuse.quantize(model=state, config=TINY_LLAMA, calibration="random:1",
                               out=os.path.join(self.tmp, "out"))
        message = str(ctx.exception)
        self.assertIn("no fp16 calibration artifact: ", message)
        self.assertIn("/qfuse-model-", message)
        temp = message.split(": ")[1].split(" does not exist")[0]
        self.assertFalse(os.path.exists(os.path.dirname(temp)))  # removed afterwards


if __name__ == "__main__":
    unittest.main()
