// Writes the tokenizer oracle corpus: one string per line, as the hex of its
// bytes (some of them invalid UTF-8). Deterministic: the hand-written seeds
// of corpus-seeds.json, then strings drawn by a seeded generator from
// script ranges, word lists, code templates, whitespace, digits, emoji,
// added-token text and broken UTF-8.
//
// Usage: node make-corpus.mjs OUT_FILE [COUNT]
import { readFileSync, writeFileSync } from "node:fs";

const seeds = JSON.parse(
  readFileSync(new URL("./corpus-seeds.json", import.meta.url), "utf8"));
const out = process.argv[2];
const count = Number(process.argv[3] ?? 10000);
if (!out) throw new Error("usage: node make-corpus.mjs OUT_FILE [COUNT]");

// mulberry32: a small seeded generator, the same on every machine.
let state = 0x5eed1234;
function random() {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
const pick = (a) => a[int(0, a.length - 1)];

// Code point ranges by script or kind, all assigned by Unicode 15.0.
const RANGES = {
  latin: [[0x41, 0x5a], [0x61, 0x7a], [0xc0, 0xff], [0x100, 0x17f], [0x180, 0x24f], [0x1e00, 0x1eff]],
  ipa: [[0x250, 0x2af], [0x2b0, 0x2ff]],
  combining: [[0x300, 0x36f], [0x1ab0, 0x1ace], [0x1dc0, 0x1dff], [0x20d0, 0x20f0], [0xfe20, 0xfe2f]],
  greek: [[0x370, 0x377], [0x37a, 0x37f], [0x384, 0x38a], [0x38c, 0x38c], [0x38e, 0x3a1], [0x3a3, 0x3ff], [0x1f00, 0x1f15]],
  cyrillic: [[0x400, 0x4ff], [0x500, 0x52f]],
  armenian: [[0x531, 0x556], [0x561, 0x587]],
  hebrew: [[0x591, 0x5c7], [0x5d0, 0x5ea], [0xfb1d, 0xfb36]],
  arabic: [[0x600, 0x6ff], [0x750, 0x77f], [0xfe70, 0xfe74], [0xfe76, 0xfefc]],
  devanagari: [[0x900, 0x97f]],
  bengali: [[0x985, 0x98c], [0x9bc, 0x9c4], [0x9e6, 0x9fe]],
  tamil: [[0xb82, 0xb83], [0xb85, 0xb8a], [0xbbe, 0xbc2], [0xbe6, 0xbfa]],
  thai: [[0xe01, 0xe3a], [0xe3f, 0xe5b]],
  georgian: [[0x10a0, 0x10c5], [0x10d0, 0x10ff]],
  hangul: [[0x1100, 0x11ff], [0xac00, 0xd7a3], [0x3131, 0x318e]],
  kana: [[0x3041, 0x3096], [0x3099, 0x30ff], [0xff66, 0xff9f]],
  cjk: [[0x4e00, 0x9fff], [0x3400, 0x4dbf], [0x20000, 0x2a6df], [0xf900, 0xfa6d], [0x3000, 0x303f]],
  fullwidth: [[0xff01, 0xff5e]],
  numbers: [[0x30, 0x39], [0x660, 0x669], [0x6f0, 0x6f9], [0x966, 0x96f], [0xb2, 0xb3], [0xb9, 0xbe], [0x2150, 0x2189], [0x2460, 0x24ff], [0x2776, 0x2793], [0xff10, 0xff19], [0x1d7ce, 0x1d7ff], [0x3007, 0x3007], [0x3021, 0x3029]],
  symbols: [[0x21, 0x2f], [0x3a, 0x40], [0x5b, 0x60], [0x7b, 0x7e], [0xa1, 0xbf], [0x2010, 0x2027], [0x2030, 0x205e], [0x20a0, 0x20c0], [0x2100, 0x214f], [0x2190, 0x23ff], [0x2500, 0x27bf], [0x2900, 0x2bff]],
  math: [[0x1d400, 0x1d454], [0x1d456, 0x1d49c], [0x1d538, 0x1d539]],
  spaces: [[0x9, 0xd], [0x20, 0x20], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff], [0x85, 0x85], [0x200b, 0x200d]],
  controls: [[0x0, 0x8], [0xe, 0x1f], [0x7f, 0x9f]],
  emoji: [[0x1f300, 0x1f5ff], [0x1f600, 0x1f64f], [0x1f680, 0x1f6c5], [0x1f900, 0x1f9ff], [0x2600, 0x26ff], [0x1fa70, 0x1fa7c]],
  private: [[0xe000, 0xe0ff], [0xf0000, 0xf00ff]],
};
const SCRIPTS = Object.keys(RANGES);

function charFrom(kind) {
  const r = pick(RANGES[kind]);
  return String.fromCodePoint(int(r[0], r[1]));
}

const SKIN = [0x1f3fb, 0x1f3fc, 0x1f3fd, 0x1f3fe, 0x1f3ff].map((c) => String.fromCodePoint(c));
const PEOPLE = ["👨", "👩", "🧑", "👧", "👦", "👶", "🧓"];
function emoji() {
  switch (int(0, 5)) {
    case 0: return charFrom("emoji");
    case 1: return pick(PEOPLE) + (random() < 0.5 ? pick(SKIN) : "");
    case 2: { // ZWJ family / profession
      let s = pick(PEOPLE);
      for (let n = int(1, 3); n > 0; --n) s += "\u200d" + pick([...PEOPLE, "💻", "🚀", "🔬", "❤️"]);
      return s;
    }
    case 3: { // flag: two regional indicators
      const a = int(0, 25), b = int(0, 25);
      return String.fromCodePoint(0x1f1e6 + a, 0x1f1e6 + b);
    }
    case 4: return pick("0123456789#*") + "\ufe0f\u20e3"; // keycap
    default: return charFrom("emoji") + "\ufe0f";
  }
}

const SPECIALS = ["<s>", "</s>", "<unk>", "<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>",
  "<|start_header_id|>", "<|end_header_id|>", "<|reserved_special_token_17|>", "<|im_start|>",
  "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>", "<|vision_pad|>",
  "<|im_start", "<s", "|>", "<|", "<0x0A>", "▁"];

function identifier() {
  const parts = [];
  for (let n = int(1, 3); n > 0; --n) parts.push(pick(seeds.words.en).toLowerCase());
  return parts.join(pick(["_", "", "_"])) + (random() < 0.2 ? int(0, 99) : "");
}

function digits() {
  let s = "";
  for (let n = int(1, 25); n > 0; --n) s += String(int(0, 9));
  switch (int(0, 4)) {
    case 0: return s;
    case 1: return s.slice(0, 5) + "." + s.slice(5);
    case 2: return s.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    case 3: return "-" + s + pick(["%", "px", "e10", "k", " km"]);
    default: return [...s].map((d) => String.fromCodePoint(pick([0x30, 0x660, 0x966, 0xff10]) + Number(d))).join("");
  }
}

function whitespace() {
  let s = "";
  for (let n = int(1, 6); n > 0; --n) s += pick([" ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", " \n", "\t\t", "\u00a0", "\u3000", "\r"]);
  return s;
}

function prose() {
  const lang = pick(Object.keys(seeds.words));
  const sep = ["zh", "ja", "th"].includes(lang) && random() < 0.6 ? "" : " ";
  const words = [];
  for (let n = int(1, 25); n > 0; --n) {
    let w = pick(seeds.words[lang]);
    const r = random();
    if (r < 0.08) w += pick([",", ".", "!", "?", ";", ":", "…", "。", "、", "،", "।"]);
    else if (r < 0.11) w = pick(["\"", "(", "«", "'", "“"]) + w + pick(["\"", ")", "»", "'", "”"]);
    else if (r < 0.14) w += pick(["'s", "'t", "'ll", "'RE", "'ve", "'m", "'d"]);
    else if (r < 0.16) w = w.toUpperCase();
    words.push(w);
  }
  return words.join(sep);
}

function code() {
  let lines = [];
  for (let n = int(1, 5); n > 0; --n) {
    lines.push(pick(seeds.code)
      .replace(/\{\{/g, "\u0001").replace(/\}\}/g, "\u0002")
      .replace(/\{id\}/g, () => identifier())
      .replace(/\{Id\}/g, () => { const i = identifier(); return i[0].toUpperCase() + i.slice(1); })
      .replace(/\{num\}/g, () => String(int(0, 4096)))
      .replace(/\{word\}/g, () => pick(seeds.words[pick(Object.keys(seeds.words))]))
      .replace(/\u0001/g, "{").replace(/\u0002/g, "}"));
  }
  return lines.join(pick(["\n", "\n", "\r\n", "\n\n", "\n    "]));
}

function randomScripts() {
  let s = "";
  const kinds = [pick(SCRIPTS), pick(SCRIPTS), "spaces", "latin"];
  for (let n = int(1, 40); n > 0; --n) s += charFrom(pick(kinds));
  return s;
}

function decomposed() {
  // Base letters followed by combining marks in random order: NFC must
  // reorder and compose exactly as the oracle does.
  let s = "";
  for (let n = int(1, 8); n > 0; --n) {
    s += pick(["a", "e", "o", "u", "A", "n", "c", "s", "ω", "α", "и", "ᄀ", "가", "\u0915", " "]);
    for (let m = int(0, 3); m > 0; --m) s += pick(["\u0301", "\u0300", "\u0308", "\u0303", "\u0323", "\u0327", "\u030a", "\u0342", "\u0345", "\u0306", "\u1161", "\u11a8", "\u093c", "\u0334", "\u05b0"]);
  }
  return s;
}

function mixed() {
  const parts = [];
  for (let n = int(2, 6); n > 0; --n) {
    parts.push(pick([prose, digits, whitespace, emoji, randomScripts, () => pick(SPECIALS), () => pick(seeds.strings), decomposed])());
  }
  return parts.join(pick(["", " ", "\n", ""]));
}

const encoder = new TextEncoder();
function breakUtf8(s) {
  // Valid text with bytes cut, inserted or replaced: partial sequences,
  // stray continuation bytes, overlong forms, surrogates, > U+10FFFF.
  let bytes = Array.from(encoder.encode(s));
  for (let n = int(1, 3); n > 0; --n) {
    const at = int(0, bytes.length);
    switch (int(0, 4)) {
      case 0: bytes.splice(at, 0, int(0x80, 0xff)); break;
      case 1: bytes = bytes.slice(0, Math.max(0, bytes.length - int(1, 3))); break;
      case 2: bytes.splice(at, 0, ...pick([[0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf0, 0x9f, 0x98]])); break;
      case 3: if (at < bytes.length) bytes[at] = int(0x80, 0xff); break;
      default: bytes.splice(at, 0, ...pick([[0xe4, 0xb8], [0xc3], [0xf0, 0x9f]])); break;
    }
  }
  return Buffer.from(bytes);
}

const entries = [];
for (const s of seeds.strings) entries.push(Buffer.from(s, "utf8"));
for (const h of seeds.invalid_utf8_hex) entries.push(Buffer.from(h.replace(/\s+/g, ""), "hex"));
const generators = [prose, prose, prose, code, digits, whitespace, emoji, randomScripts, randomScripts, decomposed, mixed, mixed, mixed];
while (entries.length < count) {
  const s = pick(generators)();
  entries.push(random() < 0.06 ? breakUtf8(s) : Buffer.from(s, "utf8"));
}
writeFileSync(out, entries.map((b) => b.toString("hex")).join("\n") + "\n");
console.log(`make-corpus: ${entries.length} strings -> ${out}`);
