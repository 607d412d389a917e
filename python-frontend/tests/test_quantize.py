"""python3 -m qfuse quantize, qfuse.quantize and the binding of the C API's
qfuse_quantize: the arguments checked before anything runs, the artifacts
compiled into the model directory, the options given to qfuse_quantize (or,
without libqfuse_c.so, the command line given to qfuse-quantize), the C
library's own option checks (no GPU needed), the errors without a library,
tool or GPU, and a whole run where there is a GPU."""
import contextlib
import ctypes
import io
import json
import os
import pathlib
import stat
import subprocess
import unittest
from unittest import mock

from support import TINY_LLAMA, TempDirTestCase, run_cli, tool_or_skip
from test_runtime import library_or_skip
import qfuse
from qfuse import artifact_set, quantizer, runtime
from qfuse.artifacts import ArtifactError
from qfuse.quantizer import QuantizeError, c_options, check_calibration, tool_argv

# Where no libqfuse_c.so is to be found: quantize falls back to the tool.
NO_LIBRARY = "/nonexistent/libqfuse_c.so"


def has_gpu(lib):
    return lib.driver and lib.device_count() > 0


def has_driver():
    return os.path.exists("/proc/driver/nvidia/version")


def c_library_or_none():
    """The library `python3 -m qfuse` loads in a subprocess (None if none)."""
    try:
        return runtime.load_library()
    except runtime.QfuseError:
        return None


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
            (base + ["--calibration", "random:4", "--encoding", "int4-g256"], 1,
             "GPTQ on the GPU fits groups inside a block of 128 columns"),
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

    def test_c_api_options(self):
        """The same settings as the tool's command line, as qfuse_quantize's
        JSON options (the keys of qfuse.h)."""
        self.assertEqual(
            c_options("M", "nf4", "random:8", "O", "qfuse", 256, "a.qfa", "b.qfa",
                      decode_artifact="c.qfa", act_order=True, static_groups=True,
                      damp=0.05, overwrite=True, seed=7, device=1),
            {"model": "M", "encoding": "nf4", "calibration": "random:8", "out": "O",
             "format": "qfuse", "seq_len": 256, "fp16_artifact": "a.qfa",
             "gptq_artifact": "b.qfa", "decode_artifact": "c.qfa", "act_order": True,
             "static_groups": True, "damp": 0.05, "overwrite": True, "seed": 7,
             "device": 1})
        self.assertEqual(
            c_options("M", "int4-g128", "c.json", "O", "auto-gptq", 128, "a", "b"),
            {"model": "M", "encoding": "int4-g128", "calibration": "c.json", "out": "O",
             "format": "auto-gptq", "seq_len": 128, "fp16_artifact": "a",
             "gptq_artifact": "b"})


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

    def test_compiles_the_artifacts_then_needs_the_library_or_tool(self):
        tool_or_skip(self, "qfuse-compile")
        missing = {"QFUSE_QUANTIZE": os.path.join(self.tmp, "no-quantize"),
                   "QFUSE_C_LIBRARY": NO_LIBRARY}
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
        self.assertIn("no libqfuse_c.so to run GPTQ in this process (libqfuse_c.so not "
                      f"found; tried {NO_LIBRARY}", proc.stderr)
        self.assertIn("is not an executable qfuse-quantize", proc.stderr)
        self.assertIn(f"The artifacts are ready: {fp16}, {gptq}, {decode}", proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        # Each is the default artifact set (sm_80, sm_90, sm_90a); every
        # variant is checked.
        def variants(path):
            with open(path) as f:
                meta = json.load(f)
            self.assertEqual(artifact_set.chips(meta), ["sm_80", "sm_90", "sm_90a"])
            return artifact_set.variants(meta)
        for meta in variants(fp16):
            self.assertEqual(meta["model"]["max_seq"], 128)  # max_position_embeddings
            self.assertEqual(meta["model"]["encoding"], "fp16")
            self.assertEqual({w["encoding"] for w in meta["weights"]}, {"f16"})
            self.assertEqual(sorted(p["batch"] for p in meta["plans"]), [1, 64])
        for meta in variants(gptq):
            self.assertEqual(sorted(p["batch"] for p in meta["plans"]), [256, 512, 1024])
        for meta in variants(decode):
            self.assertEqual(sorted(p["batch"] for p in meta["plans"]), [1, 8])

        # Present now: not compiled again; --format auto-gptq needs no decode
        # artifact.
        os.remove(decode)
        proc = run_cli("quantize", "--model", self.model, "--out", self.out,
                       "--calibration", "random:4", "--format", "auto-gptq", env=missing)
        self.assertEqual(proc.returncode, 1)
        self.assertNotIn("compiling", proc.stderr)
        self.assertIn(f"The artifacts are ready: {fp16}, {gptq};", proc.stderr)

        # With the C library: it runs (no tool needed), given a GPU.
        lib = c_library_or_none()
        if lib is None:
            return
        proc = run_cli("quantize", "--model", self.model, "--out", self.out,
                       "--calibration", "random:4", "--format", "auto-gptq",
                       "--seq-len", "64",
                       env={"QFUSE_QUANTIZE": os.path.join(self.tmp, "no-quantize")})
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertNotIn("compiling", proc.stderr)
        self.assertNotIn("qfuse-quantize", proc.stderr)
        self.assertNotIn("Traceback", proc.stderr)
        if has_gpu(lib):  # it runs, and finds no checkpoint beside config.json
            self.assertIn("qfuse quantize: error: quantize: qfuse_quantize: ", proc.stderr)
        else:
            self.assertIn("qfuse quantize: error: qfuse_quantize needs a GPU: ", proc.stderr)
            self.assertIn(f"The artifacts are ready: {fp16}, {gptq}", proc.stderr)

    def stand_in_artifacts(self):
        fp16 = os.path.join(self.tmp, "fp16.qfa")
        with open(fp16, "w") as f:
            json.dump({"model": {"max_seq": 128}, "plans": [{"batch": 1}, {"batch": 128}]},
                      f)
        gptq = os.path.join(self.tmp, "gptq.qfa")
        with open(gptq, "w") as f:
            f.write("{}")
        return fp16, gptq

    def test_the_c_api_comes_first_and_needs_a_gpu(self):
        """With the C library, a stand-in qfuse-quantize is not run: without a
        GPU the error is qfuse_quantize's, before the call; on a GPU machine
        the C library runs and rejects the stand-in artifacts itself."""
        lib = c_library_or_none()
        if lib is None:
            self.skipTest("no libqfuse_c.so here: the tool fallback is what runs")
        fp16, gptq = self.stand_in_artifacts()
        tool = fake_tool(os.path.join(self.tmp, "qfuse-quantize"))
        proc = run_cli("quantize", "--model", self.model, "--out", self.out,
                       "--calibration", "random:4", "--fp16-artifact", fp16,
                       "--gptq-artifact", gptq, "--decode-artifact", gptq,
                       env={"QFUSE_QUANTIZE": tool})
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertFalse(os.path.exists(tool + ".args"))
        self.assertNotIn("Traceback", proc.stderr)
        if has_gpu(lib):
            self.assertIn("qfuse quantize: error: quantize: qfuse_quantize: ", proc.stderr)
        else:
            self.assertIn("qfuse quantize: error: qfuse_quantize needs a GPU: ", proc.stderr)
            self.assertIn(f"The artifacts are ready: {fp16}, {gptq}, {gptq}", proc.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_the_tool_fallback_needs_a_gpu(self):
        """Without the C library, with a stand-in qfuse-quantize: no GPU here
        is an error naming it; on a GPU machine the stand-in runs and
        records the contract."""
        fp16, gptq = self.stand_in_artifacts()
        tool = fake_tool(os.path.join(self.tmp, "qfuse-quantize"), stdout="layer 0 done\\n")
        proc = run_cli("quantize", "--model", self.model, "--out", self.out,
                       "--calibration", "random:4", "--fp16-artifact", fp16,
                       "--gptq-artifact", gptq, "--decode-artifact", gptq, "--damp", "0.1",
                       env={"QFUSE_QUANTIZE": tool, "QFUSE_C_LIBRARY": NO_LIBRARY})
        if not has_driver():
            self.assertEqual(proc.returncode, 1, proc.stderr)
            self.assertIn("qfuse quantize: error: qfuse-quantize needs a GPU: no NVIDIA "
                          "driver here", proc.stderr)
            self.assertFalse(os.path.exists(tool + ".args"))
            return
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("layer 0 done", proc.stdout)
        self.assertIn(f"qfuse quantize: wrote {self.out} (through {tool})", proc.stderr)
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

    def api_model(self):
        """A model directory and stand-in artifacts: nothing to compile."""
        model = os.path.dirname(self.write_config(TINY_LLAMA, "model.json"))
        artifacts = {}
        for name in ("fp16", "gptq", "decode"):
            path = os.path.join(self.tmp, f"{name}.qfa")
            with open(path, "w") as f:
                json.dump({"model": {"max_seq": 128}, "plans": [{"batch": 1},
                                                                {"batch": 128}]}, f)
            artifacts[name] = path
        return model, artifacts

    def test_c_api_called_with_the_options(self):
        """The C API is what runs when the library loads: its options, the
        report returned and written to json_path, "via": "c-api". (The
        library and the GPU are stood in for.)"""
        model, a = self.api_model()
        out = os.path.join(self.tmp, "out")
        report_path = os.path.join(self.tmp, "report.json")
        lib = mock.Mock(path="libqfuse_c.so")
        tool = fake_tool(os.path.join(self.tmp, "qfuse-quantize"))
        with mock.patch.object(quantizer, "_load_c_library", return_value=(lib, None)), \
                mock.patch.object(runtime, "require_gpu", return_value=2) as gpu, \
                mock.patch.object(runtime, "quantize_model",
                                  return_value={"layers": [], "modules": 0}) as call, \
                mock.patch.dict(os.environ, {"QFUSE_QUANTIZE": tool}):
            result = qfuse.quantize(model, "int4-g128", "random:3", out,
                                    fp16_artifact=a["fp16"], gptq_artifact=a["gptq"],
                                    decode_artifact=a["decode"], damp=0.02, seed=5,
                                    device=1, json_path=report_path)
            gpu.assert_called_once_with(lib)
            options = {"model": model, "encoding": "int4-g128", "calibration": "random:3",
                       "out": out, "format": "qfuse", "seq_len": 128,
                       "fp16_artifact": a["fp16"], "gptq_artifact": a["gptq"],
                       "decode_artifact": a["decode"], "damp": 0.02, "seed": 5,
                       "device": 1}
            call.assert_called_once_with(options, library=lib)
            self.assertEqual(result, {"out": out, "via": "c-api", "options": options,
                                      "command": None,
                                      "report": {"layers": [], "modules": 0}})
            with open(report_path) as f:
                self.assertEqual(json.load(f), {"layers": [], "modules": 0})
            self.assertFalse(os.path.exists(tool + ".args"))  # the tool did not run

            # A device the machine has not: before the call.
            call.reset_mock()
            with self.assertRaisesRegex(QuantizeError, r"--device 2: there are 2 CUDA "
                                        r"devices here \(0 to 1\)"):
                qfuse.quantize(model, "int4-g128", "random:3", out,
                               fp16_artifact=a["fp16"], gptq_artifact=a["gptq"],
                               decode_artifact=a["decode"], device=2)
            call.assert_not_called()

            # The C library's error is a QuantizeError with its message.
            call.side_effect = runtime.QfuseError("quantize: qfuse_quantize: out of memory")
            with self.assertRaisesRegex(QuantizeError,
                                        "^quantize: qfuse_quantize: out of memory$"):
                qfuse.quantize(model, "int4-g128", "random:3", out, format="auto-gptq",
                               fp16_artifact=a["fp16"], gptq_artifact=a["gptq"])

        # No GPU: the error says so, and the C function is not called.
        with mock.patch.object(quantizer, "_load_c_library", return_value=(lib, None)), \
                mock.patch.object(runtime, "require_gpu",
                                  side_effect=runtime.NoDeviceError("no CUDA device")), \
                mock.patch.object(runtime, "quantize_model") as call:
            with self.assertRaisesRegex(QuantizeError, "^qfuse_quantize needs a GPU: no "
                                        "CUDA device. The artifacts are ready: "):
                qfuse.quantize(model, "int4-g128", "random:3", out,
                               fp16_artifact=a["fp16"], gptq_artifact=a["gptq"],
                               decode_artifact=a["decode"])
            call.assert_not_called()
        self.assertFalse(os.path.exists(out))

    def test_tool_fallback_without_the_library(self):
        """No library: the tool runs with the same settings, "via": "tool"."""
        model, a = self.api_model()
        out = os.path.join(self.tmp, "out")
        tool = fake_tool(os.path.join(self.tmp, "qfuse-quantize"))
        sink = io.StringIO()
        with mock.patch.object(quantizer, "_load_c_library",
                               return_value=(None, "libqfuse_c.so not found")), \
                mock.patch.object(quantizer, "gpu_problem", return_value=None), \
                mock.patch.object(runtime, "quantize_model") as call, \
                mock.patch.dict(os.environ, {"QFUSE_QUANTIZE": tool}), \
                contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            result = qfuse.quantize(model, "int4-g128", "random:3", out,
                                    format="auto-gptq", fp16_artifact=a["fp16"],
                                    gptq_artifact=a["gptq"], seed=2)
            call.assert_not_called()
        self.assertEqual(result["via"], "tool")
        self.assertEqual(result["command"][0], tool)
        self.assertEqual(result["options"]["seed"], 2)
        self.assertIsNone(result["report"])  # the stand-in writes none
        with open(tool + ".args") as f:
            args = f.read().splitlines()
        self.assertEqual(args[:8], ["--model", model, "--encoding", "int4-g128",
                                    "--calibration", "random:3", "--out", out])
        self.assertIn("--seed", args)

    def test_arguments_checked_before_the_library_is_asked(self):
        model, a = self.api_model()
        with mock.patch.object(quantizer, "_load_c_library") as load, \
                mock.patch.object(runtime, "quantize_model") as call:
            for kwargs, needle in (({"seq_len": 0}, "--seq-len 0"),
                                   ({"damp": float("nan")}, "--damp nan"),
                                   ({"device": -1}, "--device -1"),
                                   ({"calibration": "random:0"}, "random:0")):
                with self.subTest(kwargs=kwargs):
                    args = dict(calibration="random:1", out=os.path.join(self.tmp, "o"),
                                fp16_artifact=a["fp16"], gptq_artifact=a["gptq"],
                                decode_artifact=a["decode"])
                    args.update(kwargs)
                    with self.assertRaisesRegex(QuantizeError, needle):
                        qfuse.quantize(model, "int4-g128", **args)
            load.assert_not_called()
            call.assert_not_called()


class FakeQuantizeLibrary:
    """Stands in for the loaded libqfuse_c.so's qfuse_quantize: writes
    `report` as the C function does (what fits, NUL-terminated)."""

    def __init__(self, report):
        self.report = report.encode()
        self.options = None

    def qfuse_quantize(self, options, buffer, capacity):
        self.options = json.loads(options.decode())
        n = min(capacity - 1, len(self.report))
        ctypes.memmove(buffer, self.report, n)
        ctypes.memset(ctypes.addressof(buffer) + n, 0, 1)
        return len(self.report)


class QuantizeBinding(TempDirTestCase):
    """runtime.quantize_model over qfuse_quantize. The C function checks its
    options (keys, types, required ones, the artifacts, the model directory)
    before it needs a GPU, so these run everywhere the library is built."""

    def setUp(self):
        super().setUp()
        self.lib = library_or_skip(self)
        self.out = os.path.join(self.tmp, "out")

    def options(self, **extra):
        options = {"model": os.path.join(self.tmp, "no-model"), "encoding": "int4-g128",
                   "calibration": "random:1", "out": self.out}
        options.update(extra)
        return options

    def test_bound(self):
        fn = self.lib.lib.qfuse_quantize
        self.assertIs(fn.restype, ctypes.c_int64)
        self.assertEqual(fn.argtypes, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t])
        self.assertEqual(runtime.REPORT_CAPACITY, 16 << 20)

    def test_c_library_rejects_bad_options(self):
        missing = os.path.join(self.tmp, "no-model")
        artifact = os.path.join(self.tmp, "a.qfa")
        with open(artifact, "w") as f:
            f.write("{}")
        cases = [
            (self.options(bogus=1), "quantize: qfuse_quantize: unknown option 'bogus' "
                                    "(model, encoding, calibration, out, format, seq_len, "),
            (self.options(seq_len="64"), "quantize: qfuse_quantize: option 'seq_len' must "
                                         "be an integer"),
            (self.options(act_order=1), "option 'act_order' must be true or false"),
            (self.options(model=7), "option 'model' must be a string"),
            ({"model": missing}, "quantize: qfuse_quantize: quantize: the model directory, "
                                 "encoding, calibration and output directory are all "
                                 "required"),
            (self.options(), f"quantize: qfuse_quantize: no artifact '{missing}/qfuse-fp16-"
                             "calib.qfa'; make it on the compiler machine with: python3 -m "
                             f"qfuse compile --config {missing}/config.json --encoding fp16"),
            (self.options(fp16_artifact=artifact, gptq_artifact=artifact,
                          format="auto-gptq"),
             f"quantize: qfuse_quantize: checkpoint '{missing}': no config.json"),
            (self.options(fp16_artifact=artifact, gptq_artifact=artifact, format="gguf"),
             "unknown checkpoint format 'gguf' (expected one of: qfuse, "
             "compressed-tensors, auto-gptq)"),
        ]
        for options, message in cases:
            with self.subTest(options=options):
                with self.assertRaises(runtime.QfuseError) as ctx:
                    runtime.quantize_model(options)
                self.assertIn(message, str(ctx.exception))
                self.assertTrue(str(ctx.exception).startswith("quantize: qfuse_quantize: "),
                                str(ctx.exception))
        # Paths may be path objects; the error names them.
        with self.assertRaisesRegex(runtime.QfuseError, f"no artifact '{missing}/"):
            runtime.quantize_model(self.options(model=pathlib.Path(missing)))
        self.assertFalse(os.path.exists(self.out))

    def test_python_side_checks(self):
        with self.assertRaisesRegex(runtime.QfuseError, "options is a list, expected a dict"):
            runtime.quantize_model([("model", "x")])
        with self.assertRaisesRegex(runtime.QfuseError, "cannot be written as JSON"):
            runtime.quantize_model(self.options(damp=float("nan")))
        with self.assertRaisesRegex(runtime.QfuseError, "cannot be written as JSON"):
            runtime.quantize_model(self.options(model=object()))
        with self.assertRaisesRegex(runtime.QfuseError, "capacity is 1"):
            runtime.quantize_model(self.options(), capacity=1)

    def test_report_parsed_or_too_long(self):
        """The report is parsed from what qfuse_quantize wrote; a longer one
        than the buffer is an error giving its size (it cannot be fetched
        again: the run is over)."""
        text = json.dumps({"tool": "qfuse-quantize", "layers": [{"layer": 0}]})
        lib = runtime.Library.__new__(runtime.Library)
        lib.lib = FakeQuantizeLibrary(text)
        lib.path = "fake"
        self.assertEqual(lib.quantize({"model": pathlib.Path("m")}, capacity=len(text) + 1),
                         json.loads(text))  # exactly fits with its NUL
        self.assertEqual(lib.lib.options, {"model": "m"})
        with self.assertRaisesRegex(runtime.QfuseError,
                                    f"report is {len(text)} bytes, more than the "
                                    f"{len(text)}-byte buffer holds .*pass capacity="
                                    f"{len(text) + 1} or more"):
            lib.quantize({}, capacity=len(text))
        lib.lib = FakeQuantizeLibrary("{not json")
        with self.assertRaisesRegex(runtime.QfuseError, "report is not JSON"):
            lib.quantize({})


class GpuQuantize(TempDirTestCase):
    """A synthetic tiny Llama checkpoint (qfuse-synthetic-model), quantized
    through the C API on the GPU."""

    def setUp(self):
        super().setUp()
        lib = library_or_skip(self)
        if not has_gpu(lib):
            self.skipTest("no GPU here (qfuse_device_count() = 0): GPTQ on the GPU is "
                          "skipped")
        tool_or_skip(self, "qfuse-compile")
        self.model = os.path.join(self.tmp, "tiny-llama")
        subprocess.run([tool_or_skip(self, "qfuse-synthetic-model"), "--config-preset",
                        "tiny-llama", "--out", self.model], check=True,
                       capture_output=True)
        with open(os.path.join(self.model, "config.json")) as f:
            self.layers = json.load(f)["num_hidden_layers"]

    def test_quantize_through_the_c_api(self):
        out = os.path.join(self.tmp, "out")
        report_path = os.path.join(self.tmp, "report.json")
        result = qfuse.quantize(self.model, "int4-g128", "random:2", out, seq_len=64,
                                format="auto-gptq", seed=3, json_path=report_path)
        self.assertEqual(result["via"], "c-api")
        report = result["report"]
        self.assertEqual(len(report["layers"]), self.layers)
        self.assertEqual(report["modules"], 7 * self.layers)
        self.assertEqual(report["samples"], 2)
        self.assertIn("config.json", os.listdir(out))
        with open(report_path) as f:
            self.assertEqual(json.load(f), report)
        # Again: the output exists, and only overwrite replaces it.
        with self.assertRaisesRegex(QuantizeError, "^quantize: qfuse_quantize: "):
            qfuse.quantize(self.model, "int4-g128", "random:2", out, seq_len=64,
                           format="auto-gptq")
        again = qfuse.quantize(self.model, "int4-g128", "random:2", out, seq_len=64,
                               format="auto-gptq", seed=3, overwrite=True)
        self.assertEqual(again["via"], "c-api")

    def test_command_line(self):
        out = os.path.join(self.tmp, "out")
        proc = run_cli("quantize", "--model", self.model, "--out", out, "--calibration",
                       "random:2", "--seq-len", "64")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("qfuse-quantize: ", proc.stdout)  # the C library's progress lines
        self.assertIn(f"qfuse quantize: wrote {out} (through the C API's qfuse_quantize)",
                      proc.stderr)


if __name__ == "__main__":
    unittest.main()
