"""qfuse.atomic and its users: a finished write is renamed into place; a
failed one (an exception, a value that is not JSON, a data source that
fails part-way) leaves the earlier file unchanged and no temporary."""
import json
import os
import unittest

from support import TempDirTestCase

from qfuse import atomic, safetensors


class AtomicWriteTest(TempDirTestCase):
    def path(self, name):
        return os.path.join(self.tmp, name)

    def earlier(self, name, text="earlier\n"):
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_only(self, *names):
        self.assertEqual(sorted(os.listdir(self.tmp)), sorted(names))

    def test_write_text_and_json(self):
        atomic.write_text(self.path("a.mlir"), "module {}\n")
        atomic.write_json(self.path("b.json"), {"x": 1}, indent=1)
        with open(self.path("a.mlir")) as f:
            self.assertEqual(f.read(), "module {}\n")
        with open(self.path("b.json")) as f:
            self.assertEqual(json.load(f), {"x": 1})
        self.assert_only("a.mlir", "b.json")

    def test_exception_keeps_earlier_file(self):
        path = self.earlier("report.json")
        with self.assertRaises(RuntimeError):
            with atomic.atomic_open(path) as f:
                f.write("half")
                raise RuntimeError("interrupted")
        with open(path) as f:
            self.assertEqual(f.read(), "earlier\n")
        self.assert_only("report.json")

    def test_value_that_is_not_json_writes_nothing(self):
        path = self.earlier("db.json")
        with self.assertRaises(TypeError):
            atomic.write_json(path, [{"tiling": object()}])
        with open(path) as f:
            self.assertEqual(f.read(), "earlier\n")
        self.assert_only("db.json")

    def test_atomic_path_for_a_tool(self):
        path = self.path("model.qfa")
        with atomic.atomic_path(path) as partial:
            self.assertEqual(os.path.dirname(partial), self.tmp)
            self.assertIn("model.qfa.partial-", partial)
            with open(partial, "w") as f:
                f.write("{}")
            self.assertFalse(os.path.exists(path))
        self.assert_only("model.qfa")

    def test_safetensors_source_failing_part_way(self):
        path = self.earlier("model.safetensors")

        def fail():
            raise OSError(5, "Input/output error")

        with self.assertRaises(OSError):
            safetensors.write(path, {"a": ("U8", [4], b"abcd"), "b": ("U8", [4], fail)})
        with open(path) as f:
            self.assertEqual(f.read(), "earlier\n")
        self.assert_only("model.safetensors")


if __name__ == "__main__":
    unittest.main()
