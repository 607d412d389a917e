"""Every compiling command passes --chip through, and defaults to the
artifact set sm_80,sm_90,sm_90a (wgmma on H100/H200, docs/artifact.md,
Artifact sets); --emit mlir / ptx keeps one chip."""
import json
import os
import stat
import unittest

from support import TINY_LLAMA, TempDirTestCase, run_cli, tool_or_skip

from qfuse import artifact_set, tools
from qfuse.cli import build_parser

# A stand-in qfuse-compile: records its arguments, one call per line, and
# writes an empty object to -o.
FAKE_COMPILE = """#!/bin/sh
echo "$@" >> "{log}"
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then echo '{{}}' > "$2"; fi
  shift
done
"""

IR = ("func.func @f(%x: tensor<1x256xf16>) -> tensor<1x256xf16> {\n"
      '  %w = qf.weight_ref "w" : !qf.weight<256x256, #qf.enc<int4, group = 128, scale = f16>>\n'
      "  %y = qf.matmul %x, %w : tensor<1x256xf16>, !qf.weight<256x256, #qf.enc<int4, "
      "group = 128, scale = f16>> -> tensor<1x256xf16>\n"
      "  return %y : tensor<1x256xf16>\n}\n")


class ChipArguments(TempDirTestCase):
    def setUp(self):
        super().setUp()
        self.log = os.path.join(self.tmp, "calls.txt")
        self.fake = os.path.join(self.tmp, "qfuse-compile")
        with open(self.fake, "w") as f:
            f.write(FAKE_COMPILE.format(log=self.log))
        os.chmod(self.fake, os.stat(self.fake).st_mode | stat.S_IEXEC)
        self.ir = os.path.join(self.tmp, "f.mlir")
        with open(self.ir, "w") as f:
            f.write(IR)

    def cli(self, *args):
        return run_cli(*args, env={"QFUSE_COMPILE": self.fake})

    def chips_passed(self):
        """The --chip= value of every recorded qfuse-compile call."""
        with open(self.log) as f:
            calls = [line.split() for line in f]
        return [next(a[len("--chip="):] for a in call if a.startswith("--chip="))
                for call in calls]

    def test_the_default_is_the_set(self):
        self.assertEqual(tools.DEFAULT_CHIPS, "sm_80,sm_90,sm_90a")
        for command in (["compile", "x.mlir", "-o", "x.qfa"],
                        ["compile-gptq", "--config", "c.json", "-o", "x.qfa"],
                        ["generate", "--model", "d", "--prompt-ids", "1"],
                        ["quantize", "--model", "d", "--calibration", "random:1",
                         "--out", "o"]):
            # None: compile_ir's default, the set for an artifact.
            self.assertIsNone(build_parser().parse_args(command).chip, command[0])

    def test_compile_passes_the_set_by_default(self):
        proc = self.cli("compile", self.ir, "-o", os.path.join(self.tmp, "x.qfa"),
                        "--tuning-db", "none")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.chips_passed(), ["sm_80,sm_90,sm_90a"])

    def test_emit_keeps_one_chip(self):
        proc = self.cli("compile", self.ir, "-o", os.path.join(self.tmp, "x.mlir"),
                        "--emit", "mlir")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.chips_passed(), [tools.DEFAULT_EMIT_CHIP])

    def test_an_explicit_chip_or_list_is_passed(self):
        for chip, passed in (("sm_90a", "sm_90a"), ("sm_90a, sm_80", "sm_90a,sm_80")):
            proc = self.cli("compile", self.ir, "-o", os.path.join(self.tmp, "x.qfa"),
                            "--chip", chip)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(self.chips_passed()[-1], passed)

    def test_compile_gptq_passes_the_set(self):
        config = self.write_config(TINY_LLAMA)
        proc = self.cli("compile-gptq", "--config", config, "-o",
                        os.path.join(self.tmp, "g.qfa"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.chips_passed(), ["sm_80,sm_90,sm_90a"])

    def test_generate_compiles_the_missing_artifact_as_a_set(self):
        config = self.write_config(TINY_LLAMA, "model.json")
        model = os.path.dirname(config)
        # The stand-in writes no model, so generate stops after compiling.
        proc = self.cli("generate", "--model", model, "--prompt-ids", "1")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("not a whole-model artifact", proc.stderr)
        self.assertEqual(self.chips_passed(), ["sm_80,sm_90,sm_90a"])
        proc = self.cli("generate", "--model", model, "--prompt-ids", "1",
                        "--encoding", "int8", "--chip", "sm_80")
        self.assertEqual(self.chips_passed()[-1], "sm_80")

    def test_bad_lists_are_one_error(self):
        for chip, message in (("sm_80,sm_70", "target 'sm_70' is not supported"),
                              ("sm_80,sm_80", "listed twice")):
            proc = self.cli("compile", self.ir, "-o", "x.qfa", "--chip", chip)
            self.assertEqual(proc.returncode, 1, chip)
            self.assertIn(message, proc.stderr)
        proc = self.cli("compile", self.ir, "-o", "x.ptx", "--emit", "ptx",
                        "--chip", "sm_80,sm_90")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("--emit ptx takes one --chip", proc.stderr)
        self.assertFalse(os.path.exists(self.log))


class SetFiles(TempDirTestCase):
    def test_a_plain_artifact_is_a_set_of_one(self):
        plain = {"format": "qfuse-artifact", "target": {"chip": "sm_90"}, "model": {}}
        self.assertEqual(artifact_set.variants(plain), [plain])
        self.assertEqual(artifact_set.variant_for_chip(plain, "sm_90"), plain)
        self.assertEqual(artifact_set.first_variant(plain), plain)
        whole = {"format": "qfuse-artifact-set", "version": 1,
                 "variants": [dict(plain, target={"chip": c}) for c in
                              ("sm_80", "sm_90", "sm_90a")]}
        self.assertEqual(artifact_set.chips(whole), ["sm_80", "sm_90", "sm_90a"])
        self.assertEqual(artifact_set.variant_for_chip(whole, "sm_90a")["target"],
                         {"chip": "sm_90a"})
        with self.assertRaisesRegex(KeyError, "sm_89.*sm_80, sm_90, sm_90a"):
            artifact_set.variant_for_chip(whole, "sm_89")

    def test_the_compiled_default_is_a_set_of_three(self):
        tool_or_skip(self, "qfuse-compile")
        path = os.path.join(self.tmp, "tiny.qfa")
        proc = run_cli("compile", "--config", self.write_config(TINY_LLAMA), "--layers",
                       "1", "--decode-step-only", "-o", path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(path) as f:
            meta = json.load(f)
        self.assertEqual(meta["format"], "qfuse-artifact-set")
        self.assertEqual(artifact_set.chips(meta), ["sm_80", "sm_90", "sm_90a"])
        batches = [[p["batch"] for p in v["plans"]] for v in artifact_set.variants(meta)]
        self.assertEqual(batches, [[1]] * 3)


if __name__ == "__main__":
    unittest.main()
