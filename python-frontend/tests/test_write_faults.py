"""A full disk (a file-size limit on the process) and the host out of memory
while the frontend and the C++ tools write: the command fails with a message
naming the file (and tensor) and the reason, and the earlier file is
unchanged with no temporary left beside it."""
import os
import resource
import signal
import subprocess
import sys
import unittest
from unittest import mock

from support import FRONTEND, LLAMA3_8B, REPO, TempDirTestCase, tool_or_skip

from qfuse import cli, cli_emit


def file_size_limit(limit):
    """preexec_fn: writes past `limit` bytes fail with EFBIG (SIGXFSZ
    ignored, as a full disk's ENOSPC would)."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def run_limited(argv, limit):
    env = dict(os.environ)
    env["PYTHONPATH"] = FRONTEND + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True,
                          preexec_fn=file_size_limit(limit))


class FullDiskTest(TempDirTestCase):
    def earlier(self, name, text="earlier\n"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_kept(self, path, text="earlier\n"):
        with open(path) as f:
            self.assertEqual(f.read(), text)
        left = [n for n in os.listdir(os.path.dirname(path)) if ".partial-" in n]
        self.assertEqual(left, [], "a temporary was left behind")

    def test_emit(self):
        config = self.write_config(LLAMA3_8B)
        out = self.earlier("llama.mlir")
        r = run_limited([sys.executable, "-m", "qfuse", "emit", "--config", config,
                         "--encoding", "int4-g128", "-o", out], 32 << 10)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"qfuse emit: error: [Errno 27] writing {out} failed: File too "
                      "large; nothing was written", r.stderr)
        self.assert_kept(out)

    def test_safetensors(self):
        out = self.earlier("model.safetensors")
        code = ("from qfuse import safetensors\n"
                f"safetensors.write({out!r}, {{'a': ('U8', [1024], bytes(1024)), "
                "'b': ('U8', [65536], bytes(65536))})\n")
        r = run_limited([sys.executable, "-c", code], 16 << 10)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(f"SafetensorsError: tensor 'b': writing {out} failed: File too "
                      "large", r.stderr)
        self.assert_kept(out)

    def test_synthetic_model_tool(self):
        """The C++ writers (AtomicFile) through a tool."""
        tool = tool_or_skip(self, "qfuse-synthetic-model")
        out = os.path.join(self.tmp, "model")
        first = subprocess.run([tool, "--config-preset", "tiny-llama", "--out", out],
                               capture_output=True, text=True)
        self.assertEqual(first.returncode, 0, first.stderr)
        model = os.path.join(out, "model.safetensors")
        with open(model, "rb") as f:
            before = f.read()
        r = run_limited([tool, "--config-preset", "tiny-llama", "--seed", "7",
                         "--out", out], 1 << 20)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"writing '{model}' failed (tensor '", r.stderr)
        self.assertIn("File too large", r.stderr)
        with open(model, "rb") as f:
            self.assertEqual(f.read(), before, "the earlier model changed")
        self.assertEqual([n for n in os.listdir(out) if ".partial-" in n], [])


class HostOutOfMemoryTest(TempDirTestCase):
    def test_cli_names_it_and_writes_nothing(self):
        config = self.write_config(LLAMA3_8B)
        out = os.path.join(self.tmp, "llama.mlir")
        with mock.patch.object(cli_emit, "emit_model", side_effect=MemoryError()), \
                mock.patch("sys.stderr") as stderr:
            rc = cli.main(["emit", "--config", config, "--encoding", "int4-g128",
                           "-o", out])
        self.assertEqual(rc, 1)
        written = "".join(c.args[0] for c in stderr.write.call_args_list)
        self.assertIn("qfuse emit: error: out of host memory", written)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
