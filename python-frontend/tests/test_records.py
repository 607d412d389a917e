"""qfuse.records: bench records read back plain or xz-compressed."""
import json
import lzma
import os
import unittest

from support import TempDirTestCase

from qfuse import records


class RecordsTest(TempDirTestCase):
    def write(self, rel, doc, compress=False):
        path = os.path.join(self.tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        opener = lzma.open if compress else open
        with opener(path, "wt") as f:
            json.dump(doc, f)
        return path

    def test_plain_and_xz_read_the_same(self):
        plain = self.write("a/tune-x-b1.json", {"b": 1, "plans": [1.5, 2]})
        packed = self.write("a/tune-x-b2.json.xz", {"b": 2, "plans": [3]},
                            compress=True)
        self.assertEqual(records.read_json(plain), {"b": 1, "plans": [1.5, 2]})
        self.assertEqual(records.read_json(packed), {"b": 2, "plans": [3]})

    def test_paths_match_both_suffixes_recursively_and_nothing_else(self):
        want = [self.write("r1/tune-a.json", {}),
                self.write("r1/deep/tune-b.json.xz", {}, compress=True),
                self.write("r2/tune-c.json.xz", {}, compress=True)]
        self.write("r1/other.json", {})
        self.write("r1/tune-d.log.xz", {}, compress=True)
        got = records.record_paths(os.path.join(self.tmp, "**"), "tune-*")
        self.assertEqual(got, sorted(want))
        self.assertEqual(records.record_paths(os.path.join(self.tmp, "r2"), "tune-*"),
                         [want[2]])

    def test_a_corrupt_xz_record_raises(self):
        path = os.path.join(self.tmp, "tune-bad.json.xz")
        with open(path, "wb") as f:
            f.write(b"not xz at all")
        with self.assertRaises(lzma.LZMAError):
            records.read_json(path)


if __name__ == "__main__":
    unittest.main()
