"""Encoding names -> #qf.enc text, overrides, and agreement with the runtime's table."""
import unittest

import support  # noqa: F401  (puts the package on sys.path)
from qfuse.encodings import (ALIASES, NAMED_ENCODINGS, EncodingError, EncodingPlan,
                             encoding_attr, encoding_text, valid_names)

EXPECTED = {
    "int4-g128": "int4, group = 128, scale = f16",
    "uint4-g128-asym": "uint4, group = 128, scale = f16, zero = int",
    "nf4": "nf4, group = 64, scale = f32",
    "nvfp4": "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale",
    "mxfp4": "fp4e2m1, group = 32, scale = f8E8M0FNU",
    "fp8": "fp8e4m3, per_channel, scale = f32",
    "int8": "int8, per_channel, scale = f16",
    "2:4": "f16, sparse = 2:4",
    "2:4+int4": "int4, group = 128, scale = f16, sparse = 2:4",
    "fp16": "f16",
    "bf16": "bf16",
    "sparse24-f16": "f16, sparse = 2:4",
    "int4-g64": "int4, group = 64, scale = f16",
    "int4-g32": "int4, group = 32, scale = f16",
    "int8-g128": "int8, group = 128, scale = f16",
    "uint4-g64-asym": "uint4, group = 64, scale = f16, zero = int",
    "uint8-g32-asym": "uint8, group = 32, scale = f16, zero = int",
    "int4-pc": "int4, per_channel, scale = f16",
    "int8-pc": "int8, per_channel, scale = f16",
    "uint4-pc-asym": "uint4, per_channel, scale = f16, zero = int",
    "INT4-G128": "int4, group = 128, scale = f16",
}


class EncodingNames(unittest.TestCase):
    def test_every_name(self):
        for name, text in EXPECTED.items():
            with self.subTest(name=name):
                self.assertEqual(encoding_text(name), text)
                self.assertEqual(encoding_attr(name), f"#qf.enc<{text}>")

    def test_every_fixed_name_is_covered(self):
        for name in list(NAMED_ENCODINGS) + list(ALIASES):
            with self.subTest(name=name):
                encoding_text(name)  # no error
        self.assertTrue(set(NAMED_ENCODINGS) <= set(EXPECTED))

    def test_literal_encoding_passes_through(self):
        self.assertEqual(encoding_text("#qf.enc<int4, group = 32, scale = bf16>"),
                         "int4, group = 32, scale = bf16")

    def test_bad_names_list_the_valid_ones(self):
        for bad in ("int3", "int4-g", "int4-g0", "uint4-g128", "int4-g128-asym",
                    "nf5", "", "fp4", "int4-pc-asym"):
            with self.subTest(name=bad):
                with self.assertRaises(EncodingError) as ctx:
                    encoding_text(bad)
                msg = str(ctx.exception)
                self.assertIn(f"'{bad}'", msg)
                for name in ("int4-g128", "nf4", "nvfp4", "2:4+int4", "fp16"):
                    self.assertIn(name, msg)
        self.assertIn("nvfp4", valid_names())


class Overrides(unittest.TestCase):
    def test_projection_overrides(self):
        plan = EncodingPlan("int4-g128", ["lm_head=fp16,down_proj=int8"])
        self.assertEqual(plan.name_for("lm_head", "lm_head"), "fp16")
        self.assertEqual(plan.name_for("model.layers.3.mlp.down_proj", "down_proj"), "int8")
        self.assertEqual(plan.name_for("model.layers.3.mlp.up_proj", "up_proj"), "int4-g128")
        self.assertEqual(plan.text_for("model.layers.0.mlp.down_proj", "down_proj"),
                         "int8, per_channel, scale = f16")

    def test_patterns_and_weight_names(self):
        plan = EncodingPlan("nf4", ["model.layers.0.*=fp8", "model.layers.1.self_attn.q_proj=int8"])
        self.assertEqual(plan.name_for("model.layers.0.mlp.up_proj", "up_proj"), "fp8")
        self.assertEqual(plan.name_for("model.layers.1.self_attn.q_proj", "q_proj"), "int8")
        self.assertEqual(plan.name_for("model.layers.1.self_attn.k_proj", "k_proj"), "nf4")
        self.assertEqual(plan.name_for("model.layers.10.mlp.up_proj", "up_proj"), "nf4")

    def test_bad_overrides(self):
        for spec, needle in (("lm_head", "KEY=ENCODING"), ("lm_hed=fp16", "'lm_hed'"),
                             ("lm_head=int3", "unknown encoding 'int3'")):
            with self.subTest(spec=spec):
                with self.assertRaises(EncodingError) as ctx:
                    EncodingPlan("int4-g128", [spec])
                self.assertIn(needle, str(ctx.exception))
        with self.assertRaises(EncodingError):
            EncodingPlan("bogus")


class AgreesWithRuntime(unittest.TestCase):
    """The runtime's C++ name table (format/src/NamedEncodings.cpp) and
    parser, through qfuse_canonical_encoding: same names, same canonical text."""

    def setUp(self):
        from test_runtime import library_or_skip
        self.lib = library_or_skip(self)

    def test_names_the_runtime_knows_agree(self):
        for name in list(EXPECTED):
            with self.subTest(name=name):
                text = encoding_text(name)
                # Our text is canonical: the runtime prints it back unchanged.
                self.assertEqual(self.lib.canonical_encoding(text), text)
                try:
                    theirs = self.lib.canonical_encoding(name.lower())
                except Exception:
                    continue  # Python-only spelling (fp16, -pc, sparse24-f16, ...)
                self.assertEqual(theirs, text)

    def test_every_runtime_fixed_name_is_known_here(self):
        for name in ("int4-g128", "uint4-g128-asym", "nf4", "nvfp4", "mxfp4", "fp8",
                     "int8", "2:4", "2:4+int4"):
            self.assertEqual(self.lib.canonical_encoding(name), encoding_text(name))
        with self.assertRaises(Exception) as ctx:
            self.lib.canonical_encoding("bogus")
        # The runtime's own error lists its names; none is missing here.
        msg = str(ctx.exception)
        listed = msg.split("expected one of", 1)[1].split(",")[0].split()
        for name in listed:
            self.assertIn(name, NAMED_ENCODINGS)


if __name__ == "__main__":
    unittest.main()
