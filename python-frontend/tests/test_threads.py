"""The frontend and the C API bindings from several threads at once (no GPU):
tokenizers on a handle per thread and on one shared handle give the
single-threaded results, errors name each thread's own input, configs load,
and files written at once to one path end whole (docs/threads.md)."""
import os
import subprocess
import threading
import unittest

from support import LLAMA3_8B, QWEN25_1_5B, TempDirTestCase, tool_or_skip
from test_runtime import library_or_skip

from qfuse import atomic
from qfuse.model import ModelConfig
from qfuse.runtime import QfuseError, Tokenizer

THREADS = 8
TEXTS = ["Once upon a time", "déjà vu, naïve café 🙂", "1234 + 5678", "  a\tb\nc  "]


def on_threads(body):
    """body(t) on THREADS threads started together; the exceptions raised."""
    errors, start = [], threading.Barrier(THREADS)

    def run(t):
        start.wait()
        try:
            body(t)
        except BaseException as e:  # reported by the test
            errors.append(e)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


class ThreadsTest(TempDirTestCase):
    def tokenizer_dir(self):
        tool = tool_or_skip(self, "qfuse-synthetic-model")
        out = os.path.join(self.tmp, "tiny")
        subprocess.run([tool, "--config-preset", "tiny-llama", "--out", out],
                       check=True, capture_output=True)
        return out

    def test_tokenizers_separate_and_shared(self):
        lib = library_or_skip(self)
        model = self.tokenizer_dir()
        shared = Tokenizer(model, library=lib)
        expected = [(shared.encode(t), shared.decode(shared.encode(t), skip_special=True))
                    for t in TEXTS]
        chat = shared.chat("Hi", system="Be brief.")

        def body(t):
            tok = shared if t % 2 == 0 else Tokenizer(model, library=lib)
            stream = tok.stream()
            for r in range(30):
                text = TEXTS[(t + r) % len(TEXTS)]
                ids, back = expected[(t + r) % len(TEXTS)]
                self.assertEqual(tok.encode(text), ids)
                self.assertEqual(tok.decode(ids, skip_special=True), back)
                self.assertEqual(tok.chat("Hi", system="Be brief."), chat)
            pieces = [stream.push(i) for i in expected[t % len(TEXTS)][0]]
            self.assertEqual("".join(pieces) + stream.finish(),  # specials skipped
                             expected[t % len(TEXTS)][1])
            stream.close()
            if tok is not shared:
                tok.close()

        self.assertEqual(on_threads(body), [])
        # Closed from several threads at once: freed once.
        self.assertEqual(on_threads(lambda t: shared.close()), [])

    def test_errors_are_per_thread(self):
        lib = library_or_skip(self)

        def body(t):
            path = os.path.join(self.tmp, f"missing-{t}.qfa")
            for _ in range(30):
                with self.assertRaises(QfuseError) as caught:
                    lib.validate_artifact(path)
                self.assertIn(path, str(caught.exception))
                self.assertEqual(lib.canonical_encoding("int4-g128"),
                                 "int4, group = 128, scale = f16")

        self.assertEqual(on_threads(body), [])

    def test_configs_and_whole_files(self):
        configs = [self.write_config(c, f"c{i}.json")
                   for i, c in enumerate((LLAMA3_8B, QWEN25_1_5B))]
        out = os.path.join(self.tmp, "db.json")

        def body(t):
            for r in range(20):
                cfg = ModelConfig.load(configs[(t + r) % 2])
                self.assertIn(cfg.hidden_size, (4096, 1536))
                atomic.write_json(out, {"thread": t, "pad": "x" * (1000 * t)})

        self.assertEqual(on_threads(body), [])
        with open(out) as f:
            self.assertTrue(f.read().endswith("}\n"))
        self.assertEqual(os.listdir(self.tmp).count("db.json"), 1)
        self.assertFalse([n for n in os.listdir(self.tmp) if ".partial-" in n])


if __name__ == "__main__":
    unittest.main()
