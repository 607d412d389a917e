#!/usr/bin/env python3
"""Mutation fuzzing of qf IR through the built qfuse-opt and qfuse-compile.

The compiler links the shared libMLIR of Debian's LLVM 22, which is built
without libFuzzer's coverage instrumentation, and a second, instrumented
MLIR build would cost CI far more than its budget; so IR is fuzzed
black-box (docs/fuzzing.md): the lit inputs are the corpus, each run with
the tool and flags of its own RUN line, mutated deterministically from a
fixed seed (byte flips, token edits, extreme numbers, swapped encodings
and shapes, dictionary tokens from fuzz/ir/dict, line edits).

A run is a finding when the tool crashes (killed by a signal, exit code
>= 128, "PLEASE submit a bug report", a stack dump, "LLVM ERROR") or hangs
(past --timeout seconds, or HANG_FACTOR times its unmutated seed's own
time where that is longer: some lit inputs compile dozens of kernels and
take most of --timeout on a loaded 2-core machine). Exit codes 0 and 1 with a diagnostic are fine:
rejecting bad IR is the point. Findings are written to --findings as
.mlir files whose first line, "// FUZZ-RUN: <tool> %s <flags>", says how
to run them; fixed ones go to fuzz/ir/crashes/, which every run replays
first. A crash inside upstream MLIR that qfuse cannot fix is listed, by a
function of its stack, in fuzz/ir/known-upstream.txt with its reproducer
in fuzz/ir/upstream/: it is counted and reported, not failed.

    fuzz/ir/mutate-ir.py --tools-dir build/bin --seconds 40
    fuzz/ir/mutate-ir.py --tools-dir build/bin --iterations 20000 --seed 7
    fuzz/ir/mutate-ir.py --tools-dir build/bin --seed 7 --only 1234   # one
"""
import argparse
import concurrent.futures
import glob
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "fuzz", "ir")
TOOLS = ("qfuse-opt", "qfuse-compile")
# Flags that change how diagnostics are reported or the input is split; the
# driver splits inputs itself and wants plain diagnostics.
DROPPED_FLAGS = {"-split-input-file", "--split-input-file", "-verify-diagnostics",
                 "--verify-diagnostics"}
EXTREME = ["0", "1", "-1", "2", "3", "7", "31", "33", "4097", "65535", "65536",
           "2147483647", "2147483648", "4294967296", "9223372036854775807",
           "9223372036854775808", "18446744073709551616",
           "1000000000000000000000000000000"]
# A mutated input is a hang only past this many times its seed's time.
HANG_FACTOR = 4
CRASH_MARKERS = ("PLEASE submit a bug report", "Stack dump:", "LLVM ERROR:",
                 "UNREACHABLE executed", "Assertion `")


# -- the corpus ---------------------------------------------------------------

def run_lines(text):
    """The RUN commands of a lit file, continuation lines joined."""
    lines, current = [], ""
    for line in text.splitlines():
        m = re.match(r"\s*//\s*RUN:\s?(.*)$", line)
        if not m:
            continue
        part = m.group(1)
        if part.rstrip().endswith("\\"):
            current += part.rstrip()[:-1] + " "
        else:
            lines.append(current + part)
            current = ""
    return lines


def tool_invocations(command, srcdir):
    """(tool, input token, flags) for each qfuse-opt / qfuse-compile in a
    RUN command; %S in flags becomes `srcdir` (%t stays: run_tool gives each
    run its own)."""
    out = []
    for segment in re.split(r"\|\||&&|\|", command):
        try:
            words = shlex.split(segment)
        except ValueError:
            continue
        while words and words[0] in ("not", "env"):
            words = words[1:]
        if not words or words[0] not in TOOLS:
            continue
        tool, rest = words[0], words[1:]
        inputs = [w for w in rest if w == "%s" or w.endswith(".mlir") and "%S" in w]
        if not inputs:
            continue
        flags, skip = [], False
        for w in rest:
            if skip:
                skip = False
                continue
            if w in ("-o", "--o"):
                skip = True
                continue
            if w in inputs or w in DROPPED_FLAGS or w.startswith(("2>", ">", "<")) \
                    or w.startswith("-o=") or w.startswith("--o="):
                continue
            flags.append(w.replace("%S", srcdir))
        if tool == "qfuse-compile" and "--no-cubin" not in flags:
            flags.append("--no-cubin")  # ptxas is not what is fuzzed
        out.append((tool, inputs[0], flags))
    return out


def corpus():
    """Seeds: (text, tool, flags), from every lit file's RUN lines."""
    seeds, seen = [], set()
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"), recursive=True)):
        if os.sep + "Inputs" + os.sep in path:
            continue
        text = open(path).read()
        for command in run_lines(text):
            for tool, source, flags in tool_invocations(command, os.path.dirname(path)):
                if source == "%s":
                    body = text
                else:
                    body = open(source.replace("%S", os.path.dirname(path))).read()
                chunks = body.split("// -----") if "split-input-file" in command else [body]
                for chunk in chunks:
                    key = (chunk, tool, tuple(flags))
                    if chunk.strip() and key not in seen:
                        seen.add(key)
                        seeds.append((chunk, tool, flags))
    return seeds


def read_dict(path):
    tokens = []
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line.startswith('"') and line.endswith('"'):
            tokens.append(bytes(line[1:-1], "utf-8").decode("unicode_escape"))
    return tokens


# -- mutations ----------------------------------------------------------------

class Mutator:
    def __init__(self, seeds, tokens):
        self.tokens = tokens
        self.encodings = sorted({e for text, _, _ in seeds
                                 for e in re.findall(r"#qf\.enc<[^<>]*(?:<[^<>]*>[^<>]*)*>", text)})
        self.ops = [self.number, self.number, self.insert_token, self.replace_token,
                    self.swap_encoding, self.shape, self.flip, self.delete_span,
                    self.line_edit]

    def mutate(self, rng, text):
        for _ in range(rng.randint(1, 4)):
            text = rng.choice(self.ops)(rng, text)
        return text

    @staticmethod
    def _pick(rng, text, pattern):
        matches = list(re.finditer(pattern, text))
        return rng.choice(matches) if matches else None

    def number(self, rng, text):
        m = self._pick(rng, text, r"(?<![\w%#])\d+(?![\w.])")
        if not m:
            return text
        value = rng.choice(EXTREME) if rng.random() < 0.7 else str(int(m.group()) + rng.choice([-1, 1]))
        return text[:m.start()] + value + text[m.end():]

    def insert_token(self, rng, text):
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice(self.tokens) + text[at:]

    def replace_token(self, rng, text):
        m = self._pick(rng, text, r"[\w.]+|[^\s\w]")
        if not m:
            return text
        return text[:m.start()] + rng.choice(self.tokens) + text[m.end():]

    def swap_encoding(self, rng, text):
        m = self._pick(rng, text, r"#qf\.enc<[^<>]*(?:<[^<>]*>[^<>]*)*>")
        if not m or not self.encodings:
            return text
        return text[:m.start()] + rng.choice(self.encodings) + text[m.end():]

    def shape(self, rng, text):
        m = self._pick(rng, text, r"(?<=[<x])\d+(?=x)")
        if not m:
            return text
        return text[:m.start()] + rng.choice(["0", "1", "3", "4097", "?", "65536",
                                              "2147483648"]) + text[m.end():]

    def flip(self, rng, text):
        if not text:
            return text
        at = rng.randrange(len(text))
        return text[:at] + chr(rng.choice([rng.randrange(32, 127), 0, 10, 0xff])) + text[at + 1:]

    def delete_span(self, rng, text):
        if not text:
            return text
        at = rng.randrange(len(text))
        return text[:at] + text[at + rng.randint(1, 40):]

    def line_edit(self, rng, text):
        lines = text.split("\n")
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        kind = rng.randrange(3)
        if kind == 0:
            del lines[i]
        elif kind == 1:
            lines.insert(j, lines[i])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines)


# -- running ------------------------------------------------------------------

def known_upstream():
    """{stack signature: why} of fuzz/ir/known-upstream.txt."""
    known = {}
    for line in open(os.path.join(HERE, "known-upstream.txt")):
        line = line.strip()
        if line and not line.startswith("#"):
            signature, _, why = line.partition(" # ")
            known[signature.strip()] = why.strip()
    return known


KNOWN_UPSTREAM = known_upstream()


def crash_marked(output, text):
    """Whether the tool's output carries a crash marker on a line of its
    own: a diagnostic echoes the input's line, and the lit seeds hold the
    markers in their CHECK-NOT lines."""
    source = set(text.splitlines())
    return any(m in line for line in output.splitlines() if line not in source
               for m in CRASH_MARKERS)


def run_tool(tools_dir, tool, flags, text, timeout, scratch):
    """('ok' | 'crash' | 'upstream' | 'hang', exit code, output tail)."""
    fd, path = tempfile.mkstemp(suffix=".mlir", dir=scratch)
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
    # %t: a name of this run's own, as lit gives each test.
    argv = [os.path.join(tools_dir, tool), path] + [f.replace("%t", path + ".t") for f in flags]
    if tool == "qfuse-compile":
        argv += ["-o", path + ".out"]
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        output = proc.stderr.decode(errors="replace")
        code = proc.returncode
        if code < 0 or code >= 128 or crash_marked(output, text):
            if any(signature in output for signature in KNOWN_UPSTREAM):
                return "upstream", code, ""
            return "crash", code, output[-3000:]
        return "ok", code, ""
    except subprocess.TimeoutExpired:
        return "hang", None, f"no exit after {timeout} s"
    finally:
        for p in glob.glob(glob.escape(path) + "*"):
            if os.path.isdir(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                os.remove(p)


def header(tool, flags):
    return f"// FUZZ-RUN: {tool} %s {' '.join(shlex.quote(f) for f in flags)}".rstrip() + "\n"


def parse_header(text):
    m = re.match(r"// FUZZ-RUN: (\S+) %s ?(.*)\n", text)
    if not m or m.group(1) not in TOOLS:
        raise ValueError("first line must be '// FUZZ-RUN: qfuse-opt|qfuse-compile %s FLAGS'")
    return m.group(1), shlex.split(m.group(2))


def replay(args, scratch):
    """Every fuzz/ir/crashes input must now run cleanly; every fuzz/ir/upstream
    one must run cleanly or crash as known-upstream.txt says."""
    files = sorted(glob.glob(os.path.join(HERE, "crashes", "*.mlir")) +
                   glob.glob(os.path.join(HERE, "upstream", "*.mlir")))
    failed = 0
    for path in files:
        text = open(path, encoding="utf-8", errors="surrogateescape").read()
        tool, flags = parse_header(text)
        verdict, code, output = run_tool(args.tools_dir, tool, flags, text,
                                         args.timeout, scratch)
        upstream = os.path.basename(os.path.dirname(path)) == "upstream"
        if verdict == "ok" and upstream:
            print(f"mutate-ir: {os.path.relpath(path, ROOT)} no longer crashes: "
                  "move it to fuzz/ir/crashes/ and drop its line of "
                  "known-upstream.txt")
        elif verdict != "ok" and not (upstream and verdict == "upstream"):
            failed += 1
            print(f"mutate-ir: FAILED: {os.path.relpath(path, ROOT)}: {verdict} "
                  f"(exit {code})\n{output}", file=sys.stderr)
    print(f"mutate-ir: replayed {len(files)} inputs of fuzz/ir/crashes and "
          f"fuzz/ir/upstream, {failed} failed")
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tools-dir", required=True, help="folder of qfuse-opt, qfuse-compile")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--iterations", type=int, help="stop after this many (default: --seconds)")
    parser.add_argument("--only", type=int, help="run mutation number N alone")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=20, help="seconds before a run is a hang")
    parser.add_argument("--findings", default="fuzz-ir-findings")
    parser.add_argument("--replay-only", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="qfuse-fuzz-ir-") as scratch:
        failed = replay(args, scratch)
        if args.replay_only:
            return 1 if failed else 0
        seeds = corpus()
        mutator = Mutator(seeds, read_dict(os.path.join(HERE, "dict")))
        print(f"mutate-ir: {len(seeds)} seeds from the lit inputs, seed {args.seed}, "
              f"{'%d iterations' % args.iterations if args.iterations else '%g s' % args.seconds}")

        seed_seconds, seed_lock = {}, threading.Lock()

        def seed_time(text, tool, flags):
            """Seconds the unmutated seed takes (measured once, on demand)."""
            key = (text, tool, tuple(flags))
            with seed_lock:
                if key in seed_seconds:
                    return seed_seconds[key]
            start = time.monotonic()
            run_tool(args.tools_dir, tool, flags, text, 10 * args.timeout, scratch)
            with seed_lock:
                seed_seconds[key] = time.monotonic() - start
                return seed_seconds[key]

        def one(i):
            rng = random.Random(f"{args.seed}:{i}")
            text, tool, flags = rng.choice(seeds)
            mutated = mutator.mutate(rng, text)
            result = run_tool(args.tools_dir, tool, flags, mutated, args.timeout, scratch)
            if result[0] == "hang":
                # Slow seeds get HANG_FACTOR times their own time before a
                # mutation of theirs counts as a hang.
                limit = HANG_FACTOR * seed_time(text, tool, flags)
                if limit > args.timeout:
                    result = run_tool(args.tools_dir, tool, flags, mutated, limit, scratch)
            return (i, tool, flags, mutated) + result

        indices = [args.only] if args.only is not None else None
        deadline = time.monotonic() + args.seconds
        counts, findings, lock = {}, [], threading.Lock()
        os.makedirs(args.findings, exist_ok=True)

        def record(result):
            i, tool, flags, text, verdict, code, output = result
            with lock:
                counts[(tool, verdict, code)] = counts.get((tool, verdict, code), 0) + 1
                if verdict in ("ok", "upstream"):
                    return
                path = os.path.join(args.findings, f"{verdict}-seed{args.seed}-{i}.mlir")
                with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(header(tool, flags) + text)
                findings.append(path)
                print(f"mutate-ir: FINDING #{i}: {tool} {verdict} (exit {code}), saved to "
                      f"{path}\n{output}", file=sys.stderr)

        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            pending, i = set(), 0
            while True:
                if indices is not None:
                    if not indices:
                        break
                    n = indices.pop()
                elif (args.iterations is not None and i >= args.iterations) or \
                        (args.iterations is None and time.monotonic() > deadline):
                    break
                else:
                    n = i
                i += 1
                pending.add(pool.submit(one, n))
                if len(pending) >= 2 * args.jobs:
                    done, pending = concurrent.futures.wait(
                        pending, return_when=concurrent.futures.FIRST_COMPLETED)
                    for future in done:
                        record(future.result())
            for future in concurrent.futures.as_completed(pending):
                record(future.result())

        total = sum(counts.values())
        summary = ", ".join(f"{tool} {verdict}{'' if code is None else ' exit %d' % code}: {n}"
                            for (tool, verdict, code), n in sorted(counts.items(), key=str))
        print(f"mutate-ir: {total} runs ({summary}); {len(findings)} findings")
        if findings:
            print("mutate-ir: reproduce with --seed %d --only N; once fixed, move the file "
                  "to fuzz/ir/crashes/ (docs/fuzzing.md)" % args.seed, file=sys.stderr)
        return 1 if failed or findings else 0


if __name__ == "__main__":
    sys.exit(main())
