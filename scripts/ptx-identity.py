#!/usr/bin/env python3
"""Compiles every input the generators see and writes what comes out, so that
two trees can be compared byte for byte (a change meant to keep every kernel
as it was, such as a restructure, must leave this output identical).

    scripts/ptx-identity.py --build build --out /tmp/ptx-new
    scripts/ptx-identity.py --build build --out /tmp/ptx-new --against /tmp/ptx-old

What it compiles, from the repository root (relative paths, so that two
checkouts give the same bytes):
  - every lit RUN line whose first command is qfuse-compile or qfuse-opt
    (test/**/*.mlir), with its own flags; artifacts without cubins;
  - every file in test/Tools/qfuse-compile/Inputs and examples/ through
    qfuse-compile --emit=ptx at batches 1,3,8,17,100,512, and for sm_90a
    (wgmma) at 128,512;
  - the bench model steps (examples/configs through `python3 -m qfuse emit`)
    at batches 1,16,128, as bench/make-model-artifacts.sh compiles them.
--against DIR compares with an earlier output and exits 1 on any difference
(with --kernels-only: on any difference in the PTX an output carries)
or on an output the earlier tree had and this one lacks; inputs new here are
listed, not compared
(the serializer's own timing property, LLVMIRToISATimeInMs, is ignored).
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCHES = "1,3,8,17,100,512"


def run_lines(path):
    """The RUN commands of a lit file, continuation lines joined."""
    lines, current = [], ""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.search(r"(?://|#)\s*RUN:\s?(.*)$", line)
            if not m:
                continue
            text = m.group(1).rstrip()
            if text.endswith("\\"):
                current += text[:-1] + " "
                continue
            lines.append(current + text)
            current = ""
    return lines


def first_command(line):
    """The first command of a RUN pipeline if it runs a qfuse tool."""
    cmd = re.split(r"\s\|\s|\s&&\s|\s2>&1", line)[0].strip()
    words = cmd.split()
    if not words or words[0] not in ("qfuse-compile", "qfuse-opt"):
        return None
    return cmd


def lit_commands(build):
    """(name, argv) for every qfuse-compile / qfuse-opt RUN line."""
    out = []
    for dirpath, _, files in os.walk("test"):
        if "Inputs" in dirpath.split(os.sep):
            continue
        for fn in sorted(files):
            if not fn.endswith(".mlir"):
                continue
            path = os.path.join(dirpath, fn)
            for i, line in enumerate(run_lines(path)):
                cmd = first_command(line)
                if cmd is None:
                    continue
                cmd = (cmd.replace("%S", os.path.dirname(path))
                       .replace("%s", path).replace("%p", dirpath))
                argv = shlex.split(cmd)
                argv = drop_output(argv)
                if argv is None or any("%t" in a for a in argv):
                    continue  # reads a file an earlier RUN line wrote
                tool = argv[0]
                if tool == "qfuse-compile" and not any(
                        a.startswith("--emit") for a in argv):
                    argv.append("--no-cubin")
                argv[0] = os.path.join(build, "bin", tool)
                out.append((f"{path.replace(os.sep, '_')}.{i}", argv))
    return out


def drop_output(argv):
    """argv without its -o operand (the caller picks the output)."""
    result, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a.startswith("-o") and len(a) > 2 and not a.startswith("-opt"):
            continue
        if a.startswith(">") or a.startswith("<"):
            return None
        result.append(a)
    return result


def input_commands(build):
    compile_ = os.path.join(build, "bin", "qfuse-compile")
    out = []
    inputs = sorted(os.path.join("test/Tools/qfuse-compile/Inputs", f)
                    for f in os.listdir("test/Tools/qfuse-compile/Inputs"))
    inputs += sorted(os.path.join("examples", f) for f in os.listdir("examples")
                     if f.endswith(".mlir"))
    for path in inputs:
        base = path.replace(os.sep, "_")
        out.append((base + ".ptx", [compile_, path, "--emit=ptx",
                                    f"--batch-sizes={BATCHES}"]))
        out.append((base + ".sm_90a.ptx", [compile_, path, "--emit=ptx",
                                           "--chip=sm_90a",
                                           "--batch-sizes=128,512"]))
    return out


def model_commands(build, tmp):
    compile_ = os.path.join(build, "bin", "qfuse-compile")
    out = []
    for model in ("llama3-8b", "qwen2.5-1.5b"):
        for enc in ("int4-g128", "fp16"):
            mlir = os.path.join(tmp, f"{model}-{enc}.mlir")
            subprocess.run(
                [sys.executable, "-m", "qfuse", "emit", "--config",
                 f"examples/configs/{model}.json", "--encoding", enc,
                 "--batch", "dynamic", "--max-seq", "1024", "-o", mlir],
                check=True, env=dict(os.environ, PYTHONPATH="python-frontend"))
            out.append((f"model-{model}-{enc}.ptx",
                        [compile_, mlir, "--emit=ptx",
                         "--tuning-db=bench/tuning-db.json",
                         "--batch-sizes=1,16,128"]))
    return out


# gpu-module-to-binary records how long it took; that is not the kernel.
TIMING = re.compile(rb"LLVMIRToISATimeInMs = [0-9]+ : i64")


# Where a compiled output carries kernels: a .ptx file, an artifact's
# module.ptx (each variant's, for an artifact set), or the assembly strings
# of a gpu.binary in printed IR.
ASSEMBLY = re.compile(rb'assembly = "((?:[^"\\]|\\.)*)"')


def ptx_of(path):
    """The PTX in one output, or None when it carries none."""
    if not os.path.exists(path) or path.endswith(".status"):
        return None
    with open(path, "rb") as f:
        data = f.read()
    if data.lstrip().startswith(b"{"):
        try:
            doc = json.loads(data)
            # An artifact set: every variant's kernels, in file order.
            variants = (doc["variants"] if doc.get("format") == "qfuse-artifact-set"
                        else [doc])
            return b"\n".join(v["module"]["ptx"].encode() for v in variants)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
    found = ASSEMBLY.findall(data)
    if found:
        return b"\n".join(found)
    return data if b".visible .entry" in data else None


def same_output(a, b):
    if not (os.path.exists(a) and os.path.exists(b)):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return TIMING.sub(b"", fa.read()) == TIMING.sub(b"", fb.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", required=True)
    ap.add_argument("--against")
    ap.add_argument("--kernels-only", action="store_true",
                    help="fail only when some output's PTX differs (IR text, "
                         "plans and diagnostics may change)")
    args = ap.parse_args()
    os.chdir(ROOT)
    build = os.path.relpath(os.path.abspath(args.build), ROOT)
    os.makedirs(args.out, exist_ok=True)
    tmp = os.path.join(args.out, ".inputs")
    os.makedirs(tmp, exist_ok=True)
    commands = (lit_commands(build) + input_commands(build) +
                model_commands(build, tmp))
    for name, argv in commands:
        target = os.path.join(args.out, name)
        with open(target, "wb") as f:
            proc = subprocess.run(argv + ["-o", "-"], stdout=f,
                                  stderr=subprocess.PIPE)
        # Failing commands are part of the record: their diagnostics too.
        with open(target + ".status", "w") as f:
            f.write(f"{proc.returncode}\n")
            f.write(proc.stderr.decode("utf-8", "replace"))
    print(f"ptx-identity: {len(commands)} compilations in {args.out}")
    if not args.against:
        return 0
    ours = {n for n in os.listdir(args.out) if n != ".inputs"}
    theirs = {n for n in os.listdir(args.against) if n != ".inputs"}
    different = sorted(n for n in ours & theirs if not same_output(
        os.path.join(args.out, n), os.path.join(args.against, n)))
    missing = sorted(theirs - ours)
    added = sorted(ours - theirs)
    # What a change may touch without changing a kernel (the printed IR of
    # the passes, an artifact's plan or version, a diagnostic) is listed;
    # a kernel that changes is a failure.
    ptx_changed = [n for n in different if ptx_of(os.path.join(args.out, n))
                   != ptx_of(os.path.join(args.against, n))]
    for name in different:
        kind = "PTX differs" if name in ptx_changed else "differs, same PTX"
        print(f"  {kind}: {name}")
    for name in missing:
        print(f"  missing here: {name}")
    for name in added:
        print(f"  new here (not compared): {name}")
    print(f"ptx-identity: {len(different)} of {len(ours & theirs)} shared "
          f"outputs differ from {args.against}, {len(ptx_changed)} in their "
          f"PTX; {len(missing)} missing, {len(added)} new")
    if args.kernels_only:
        different = ptx_changed
    different += missing
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
