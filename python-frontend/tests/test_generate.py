"""python3 -m qfuse generate and the bindings of qfuse_load_checkpoint /
qfuse_generate: the artifact compiled into the model directory, the clear
errors (arguments, no compiler, no GPU), and generation where there is a GPU."""
import ctypes
import json
import os
import subprocess
import unittest

from support import TINY_LLAMA, TempDirTestCase, run_cli, tool_or_skip
from test_runtime import library_or_skip
from qfuse import artifact_set, runtime


def has_gpu(lib):
    return lib.driver and lib.device_count() > 0


class GenerateCommand(TempDirTestCase):
    def model_dir(self, config=TINY_LLAMA):
        return os.path.dirname(self.write_config(config, "model.json"))

    def test_compiles_the_missing_artifact_then_needs_a_gpu(self):
        tool_or_skip(self, "qfuse-compile")
        model = self.model_dir()
        artifact = os.path.join(model, "qfuse-int4-g128.qfa")
        proc = run_cli("generate", "--model", model, "--encoding", "int4-g128",
                       "--prompt-ids", "1,2,3", "--max-new-tokens", "4")
        self.assertIn(f"{artifact} does not exist; compiling it from "
                      f"{os.path.join(model, 'config.json')} (--encoding int4-g128, "
                      "--batch-sizes 1,8)", proc.stderr)
        self.assertIn(f"qfuse generate: wrote {artifact}", proc.stderr)
        self.assertTrue(os.path.isfile(artifact))
        # The model artifact and its round-to-nearest kernels for loading
        # an fp16 checkpoint (docs/quantize-at-load.md).
        self.assertEqual(sorted(os.listdir(model)),
                         ["config.json", "qfuse-int4-g128.qfa",
                          "qfuse-int4-g128.quantize.qfa"])
        self.assertNotIn("Traceback", proc.stderr)
        # The whole model (its 'model' dictionary, docs/decode-model.md).
        with open(artifact) as f:
            meta = json.load(f)
        # Compiled for every chip (the default set); the variants share "model".
        self.assertEqual(artifact_set.chips(meta), ["sm_80", "sm_90", "sm_90a"])
        meta = artifact_set.first_variant(meta)
        self.assertEqual(meta["model"]["num_layers"], 2)
        self.assertEqual(meta["model"]["max_seq"], 128)

        # The rest needs the runtime library and a GPU; without them the
        # error says so. (With a GPU: there is no checkpoint in the dir.)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        try:
            lib = runtime.load_library()
        except runtime.LibraryNotFoundError:
            self.assertIn("libqfuse_c.so not found", proc.stderr)
            lib = None
        if lib is not None and not has_gpu(lib):
            self.assertIn("qfuse generate: error: ", proc.stderr)
            self.assertIn("running an artifact needs a GPU", proc.stderr)
        elif lib is not None:
            self.assertIn("load_checkpoint", proc.stderr)

        # Present now: not compiled again; host-side checks against its model.
        cases = [
            (["--prompt-ids", "1,1024"], "token id 1024 is outside the vocabulary "
                                         "(vocab_size 1024)"),
            (["--prompt-ids", "1,2", "--max-new-tokens", "127"],
             "2 prompt ids + --max-new-tokens 127 exceed the artifact's max_seq 128"),
            (["--prompt-ids", "1", "--max-seq", "64"],
             "was compiled with max_seq 128, not --max-seq 64"),
        ]
        for extra, needle in cases:
            with self.subTest(extra=extra):
                proc = run_cli("generate", "--model", model, *extra)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn(needle, proc.stderr)
                self.assertNotIn("compiling", proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)

    def test_no_compiler_and_no_artifact(self):
        model = self.model_dir()
        proc = run_cli("generate", "--model", model, "--encoding", "nf4", "--prompt-ids",
                       "1", env={"QFUSE_COMPILE": os.path.join(self.tmp, "no-compiler")})
        self.assertEqual(proc.returncode, 1, proc.stderr)
        artifact = os.path.join(model, "qfuse-nf4.qfa")
        self.assertIn(f"no artifact for --encoding nf4: {artifact} does not exist, and "
                      "it cannot be compiled here", proc.stderr)
        self.assertIn("is not an executable qfuse-compile", proc.stderr)
        self.assertIn(f"python3 -m qfuse compile --config {model}/config.json --encoding "
                      f"nf4 --batch-sizes 1,8 -o {artifact}", proc.stderr)
        self.assertIn("or pass --artifact FILE", proc.stderr)
        self.assertFalse(os.path.exists(artifact))

    def test_argument_errors(self):
        model = self.model_dir()
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        cases = [
            (["--model", empty, "--prompt-ids", "1"],
             1, f"--model {empty}: no config.json there"),
            (["--model", os.path.join(self.tmp, "nowhere"), "--prompt-ids", "1"],
             1, "no such directory"),
            (["--model", model, "--prompt-ids", "1,x"],
             2, "argument --prompt-ids: expected comma-separated token ids such as "
                "1,2,3, got '1,x'"),
            (["--model", model, "--prompt-ids", ""], 2, "argument --prompt-ids"),
            (["--model", model, "--prompt-ids", "1,-2"], 2, "token id -2 in '1,-2' is "
                                                           "negative"),
            (["--model", model, "--prompt-ids", "1", "--max-new-tokens", "0"],
             2, "argument --max-new-tokens: expected a positive number, got '0'"),
            (["--model", model, "--prompt-ids", "1", "--artifact",
              os.path.join(self.tmp, "none.qfa")], 1, "none.qfa: no such file"),
            (["--model", model], 2, "one of the arguments --prompt --prompt-ids is required"),
        ]
        for args, rc, needle in cases:
            with self.subTest(args=args):
                proc = run_cli("generate", *args)
                self.assertEqual(proc.returncode, rc, proc.stderr)
                self.assertIn(needle, proc.stderr)
                self.assertNotIn("Traceback", proc.stderr)
        self.assertEqual(os.listdir(model), ["config.json"])


class GenerateBindings(unittest.TestCase):
    def test_errors_carry_the_c_message(self):
        """The prototypes reach the C entry points; a NULL handle fails there
        (no GPU needed) with qfuse_last_error's text."""
        lib = library_or_skip(self)
        rt = runtime.Runtime.__new__(runtime.Runtime)
        rt.lib, rt.handle = lib, None
        with self.assertRaisesRegex(runtime.QfuseError,
                                    r"^generate: qfuse_generate: the runtime handle is NULL$"):
            rt.generate([1, 2, 3], 4)
        with self.assertRaisesRegex(runtime.QfuseError, "^load_checkpoint: "
                                    "qfuse_load_checkpoint: the runtime handle is NULL$"):
            rt.load_checkpoint("model", threads=2)
        with self.assertRaisesRegex(runtime.QfuseError, "threads is -1"):
            rt.load_checkpoint("model", threads=-1)
        with self.assertRaisesRegex(runtime.QfuseError, "max_new_tokens is -1"):
            rt.generate([1], -1)
        self.assertEqual([f for f, _ in runtime.GenerateStats._fields_],
                         ["ttft_ms", "decode_ms", "decode_tokens_per_s"])
        self.assertEqual(ctypes.sizeof(runtime.GenerateStats), 24)


class GpuGenerate(TempDirTestCase):
    """A synthetic tiny Llama checkpoint (qfuse-synthetic-model), compiled
    and generated from, on the GPU."""

    def setUp(self):
        super().setUp()
        lib = library_or_skip(self)
        if not has_gpu(lib):
            self.skipTest("no GPU here (qfuse_device_count() = 0): generation is skipped")
        tool_or_skip(self, "qfuse-compile")
        self.model = os.path.join(self.tmp, "tiny-llama")
        subprocess.run([tool_or_skip(self, "qfuse-synthetic-model"), "--config-preset",
                        "tiny-llama", "--out", self.model], check=True,
                       capture_output=True)

    def test_generate_command_and_bindings(self):
        proc = run_cli("generate", "--model", self.model, "--encoding", "int4-g128",
                       "--prompt-ids", "1,2,3", "--max-new-tokens", "8", "--max-seq", "256")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        tokens = [int(t) for t in lines[0].split(",")]
        self.assertEqual(len(tokens), 8)
        self.assertTrue(all(0 <= t < 1024 for t in tokens), tokens)
        self.assertIn("time to first token", lines[1])
        self.assertIn("tokens/s", lines[1])
        self.assertRegex(proc.stderr, r"opened in [0-9.]+ s; .* bound in [0-9.]+ s")

        artifact = os.path.join(self.model, "qfuse-int4-g128.qfa")
        with runtime.Runtime(artifact) as rt:
            rt.load_checkpoint(self.model)
            again, stats = rt.generate([1, 2, 3], 8)
            self.assertEqual(again, tokens)  # greedy: the same tokens
            self.assertGreater(stats["ttft_ms"], 0)
            self.assertGreater(stats["decode_ms"], 0)
            self.assertGreater(stats["decode_tokens_per_s"], 0)
            one, stats = rt.generate([1, 2, 3], 1)
            self.assertEqual(one, tokens[:1])
            self.assertEqual(stats["decode_tokens_per_s"], 0)
            with self.assertRaisesRegex(runtime.QfuseError, "^generate: qfuse_generate: "):
                rt.generate([], 4)


if __name__ == "__main__":
    unittest.main()
