"""Text through the C API (host only): the tokenizer bindings on the
synthetic model's tokenizer, chat prompts, stop ids, streaming, and the
errors of `python3 -m qfuse generate --prompt` before any GPU work."""
import json
import os
import subprocess
import unittest

from support import TempDirTestCase, run_cli, tool_or_skip
from test_runtime import library_or_skip
from qfuse.runtime import QfuseError, Tokenizer


class TextBindings(TempDirTestCase):
    def synthetic(self):
        tool = tool_or_skip(self, "qfuse-synthetic-model")
        out = os.path.join(self.tmp, "tiny")
        subprocess.run([tool, "--config-preset", "tiny-llama", "--out", out, "--seed", "1"],
                       check=True, capture_output=True)
        return out

    def test_encode_decode_chat_stops_stream(self):
        lib = library_or_skip(self)
        model = self.synthetic()
        tok = Tokenizer(model, library=lib)
        text = "Hello world! Größe 🙂"
        ids = tok.encode(text)
        self.assertEqual(ids[0], 1019)                  # BOS: <|begin_of_text|>
        self.assertEqual(tok.encode(text, add_special=False), ids[1:])
        self.assertEqual(tok.decode(ids, skip_special=True), text)
        self.assertEqual(tok.decode(ids), "<|begin_of_text|>" + text)
        self.assertEqual(
            tok.chat("Hi ", system="Be brief."),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief."
            "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n")
        with open(os.path.join(model, "generation_config.json")) as f:
            self.assertEqual(tok.stop_ids(), sorted(json.load(f)["eos_token_id"]))
        stream = tok.stream()
        pieces = [stream.push(i) for i in ids]
        self.assertEqual("".join(pieces) + stream.finish(), text)
        self.assertIn("", pieces)                       # "🙂" held back until whole
        with self.assertRaisesRegex(QfuseError, "id 5000"):
            tok.decode([5000])

    def test_missing_tokenizer_names_the_file(self):
        lib = library_or_skip(self)
        with self.assertRaisesRegex(QfuseError, f"{self.tmp}/tokenizer.json: cannot open"):
            Tokenizer(self.tmp, library=lib)

    def test_generate_prompt_errors(self):
        model = self.synthetic()
        os.remove(os.path.join(model, "tokenizer.json"))
        proc = run_cli("generate", "--model", model, "--prompt", "hi")
        self.assertEqual(proc.returncode, 1)
        self.assertIn(f"{model}/tokenizer.json does not exist", proc.stderr)
        for args, message in ((["--prompt", "hi", "--system", "s"], "--system needs --chat"),
                              (["--prompt-ids", "1", "--chat"], "--chat applies to --prompt"),
                              (["--prompt", "hi", "--top-p", "0"], "--top-p 0.0")):
            proc = run_cli("generate", "--model", model, *args)
            self.assertEqual(proc.returncode, 1, args)
            self.assertIn(message, proc.stderr)


if __name__ == "__main__":
    unittest.main()
