"""The ctypes bindings over libqfuse_c.so: host-only calls everywhere, a clear
error without a GPU, and a run on the GPU where there is one."""
import json
import math
import os
import tempfile
import unittest

from support import TINY_LLAMA, TempDirTestCase, run_cli, tool_or_skip
from qfuse import artifact_set, runtime
from qfuse.runtime import Library, LibraryNotFoundError, NoDeviceError, load_library


def library_or_skip(test):
    if os.environ.get("QFUSE_TEST_NO_C_LIBRARY"):
        test.skipTest("the build under test has no libqfuse_c.so (it needs the CUDA "
                      "toolkit)")
    try:
        return load_library()
    except LibraryNotFoundError as e:
        if os.environ.get("QFUSE_C_LIBRARY"):
            raise  # the build under test says it has one: a failure
        test.skipTest(f"libqfuse_c.so not built here: {e}")


class Bindings(TempDirTestCase):
    _artifact = None

    @classmethod
    def tearDownClass(cls):
        if cls._artifact:
            cls._artifact[1].cleanup()

    def artifact(self):
        """A small compiled artifact (the decode-step linear layers of a tiny
        Llama), compiled once for the class."""
        tool_or_skip(self, "qfuse-compile")
        if Bindings._artifact is None:
            tmp = tempfile.TemporaryDirectory(prefix="qfuse-test-")
            path = os.path.join(tmp.name, "tiny.qfa")
            proc = run_cli("compile", "--config", self.write_config(TINY_LLAMA),
                           "--layers", "1", "--decode-step-only", "-o", path)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            Bindings._artifact = (path, tmp)
        return Bindings._artifact[0]

    def test_library_loads(self):
        lib = library_or_skip(self)
        self.assertTrue(os.path.exists(lib.path))
        self.assertGreaterEqual(lib.artifact_version(), 1)
        self.assertGreaterEqual(lib.device_count(), 0)
        self.assertEqual(lib.canonical_encoding("nvfp4"),
                         "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale")
        with self.assertRaisesRegex(runtime.QfuseError, "unknown encoding name 'int3'"):
            lib.canonical_encoding("int3")

    def test_validate_artifact(self):
        lib = library_or_skip(self)
        path = self.artifact()
        lib.validate_artifact(path)
        with open(path) as f:
            meta = json.load(f)
        # The frontend's default: an artifact set of three chips, each variant
        # validated above. The compiler writes the oldest version that
        # expresses a variant (docs/artifact.md): 2 here, 3 for a weight in
        # two layouts.
        self.assertEqual(artifact_set.chips(meta), ["sm_80", "sm_90", "sm_90a"])
        for variant in artifact_set.variants(meta):
            self.assertIn(variant["version"], range(2, lib.artifact_version() + 1))
        missing = os.path.join(self.tmp, "missing.qfa")
        with self.assertRaisesRegex(runtime.QfuseError, "missing.qfa"):
            lib.validate_artifact(missing)

    def test_missing_library_names_the_paths_tried(self):
        with self.assertRaises(LibraryNotFoundError) as ctx:
            Library(os.path.join(self.tmp, "libqfuse_c.so"))
        self.assertIn(os.path.join(self.tmp, "libqfuse_c.so"), str(ctx.exception))
        self.assertIn("absent", str(ctx.exception))
        proc = run_cli("run", "x.qfa", env={"QFUSE_C_LIBRARY": "/nonexistent/libqfuse_c.so"})
        self.assertEqual(proc.returncode, 1)
        self.assertIn("libqfuse_c.so not found; tried /nonexistent/libqfuse_c.so", proc.stderr)

    def test_no_gpu_is_a_clear_error(self):
        lib = library_or_skip(self)
        if lib.driver and lib.device_count() > 0:
            self.skipTest("a GPU is present: GpuRun covers it")
        path = self.artifact()
        with self.assertRaisesRegex(NoDeviceError, "needs a GPU"):
            runtime.Runtime(path)
        for cmd in ("run", "bench"):
            proc = run_cli(cmd, path)
            self.assertEqual(proc.returncode, 1, proc.stderr)
            self.assertIn(f"qfuse {cmd}: error:", proc.stderr)
            self.assertIn("needs a GPU", proc.stderr)
            self.assertNotIn("Traceback", proc.stderr)


class GpuRun(TempDirTestCase):
    def setUp(self):
        super().setUp()
        lib = library_or_skip(self)
        if not lib.driver or lib.device_count() == 0:
            self.skipTest("no GPU here (qfuse_device_count() = 0): the GPU run is skipped")
        if runtime.numpy is None:
            self.skipTest("numpy (python3-numpy) is not installed")

    def test_run_and_benchmark(self):
        np = runtime.numpy
        tool_or_skip(self, "qfuse-compile")
        path = os.path.join(self.tmp, "tiny.qfa")
        proc = run_cli("compile", "--config", self.write_config(TINY_LLAMA), "--layers", "1",
                       "--decode-step-only", "-o", path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with runtime.Runtime(path) as rt:
            # The default artifact set: the runtime picked the device's variant
            # (sm_90a on compute capability 9.0) and meta is that variant.
            self.assertIn(rt.chip, ("sm_80", "sm_90", "sm_90a"))
            self.assertEqual(rt.meta["target"]["chip"], rt.chip)
            rt.bind_random_weights(7)
            self.assertEqual(rt.plan_batches(), [1])
            runtime.random_inputs(rt, 1)
            for name in rt.outputs:
                rt.set_input(1, name, np.full(rt.buffer_bytes(1, name) // 2, np.nan,
                                              dtype=np.float16))
            rt.run(1)
            for name in rt.outputs:
                y = rt.get_output(1, name)
                self.assertTrue(np.isfinite(y.astype(np.float32)).all(), name)
            stats = rt.benchmark(1, iterations=5, warmup=1)
            self.assertTrue(math.isfinite(stats["median_us"]))


class TeacherForcing(unittest.TestCase):
    """Runtime.teacher_forced_logits' chunking over stand-in plan runs (no
    GPU): the ids, positions and padding each plan gets, the real rows kept."""

    def setUp(self):
        if runtime.numpy is None:
            self.skipTest("numpy (python3-numpy) is not installed")
        np = runtime.numpy
        rt = object.__new__(runtime.Runtime)  # no library, no device
        rt.meta = {"model": {"vocab_size": 20, "max_seq": 28}}
        rt.artifact_path = "stand-in.qfa"
        inputs, self.calls = {}, []
        rt.plan_batches = lambda: [1, 8]
        rt.set_input = lambda batch, name, data: inputs.__setitem__(name, data.copy())

        def run(batch):
            self.calls.append((batch, inputs["input_ids"].tolist(),
                               inputs["positions"].tolist()))

        def get_output(batch, name):
            self.assertEqual(name, "logits")
            ids, pos = inputs["input_ids"], inputs["positions"]
            # logits[r] = (id, position, batch, 0, ...): each row says what it ran.
            out = np.zeros((batch, 20), dtype=np.float16)
            out[:, 0], out[:, 1], out[:, 2] = ids, pos, batch
            return out

        rt.run, rt.get_output = run, get_output
        self.rt = rt

    def test_chunks_padding_and_positions(self):
        ids = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
        logits = self.rt.teacher_forced_logits(ids, [(8, 8), (8, 2), (1, 1), (1, 1)])
        self.assertEqual(logits.shape, (12, 20))
        self.assertEqual(logits.dtype.name, "float32")
        self.assertEqual(logits[:, 0].tolist(), ids)
        self.assertEqual(logits[:, 1].tolist(), list(range(12)))
        self.assertEqual(logits[:, 2].tolist(), [8] * 10 + [1, 1])
        self.assertEqual(self.calls[1], (8, [13, 14, 0, 0, 0, 0, 0, 0],
                                         list(range(8, 16))))
        self.assertEqual(self.calls[2], (1, [15], [10]))

    def test_rejects(self):
        cases = [([1, 2], [(4, 2)], "no plan for batch 4"),
                 ([1, 2], [(1, 1)], "cover 1 rows, the sequence has 2"),
                 ([1, 2], [(8, 2), (8, 0)], "expected 1 <= rows <= batch"),
                 ([1, 25], [(1, 1), (1, 1)], r"token ids must be in \[0, 20\)"),
                 ([1] * 30, [(8, 8)] * 3 + [(8, 6)], "exceed max_seq 28")]
        for ids, chunks, message in cases:
            with self.assertRaisesRegex(runtime.QfuseError, message):
                self.rt.teacher_forced_logits(ids, chunks)


if __name__ == "__main__":
    unittest.main()
