"""Finding and running the qfuse tools: the compiler's (qfuse-opt,
qfuse-compile) and the runtime's (qfuse-quantize, ...).

Search order for a tool `qfuse-X`: the environment variable QFUSE_X
(QFUSE_OPT, QFUSE_COMPILE: a path), $QFUSE_BUILD_DIR/bin, PATH, then the
repository's build*/bin directories (most recently built first).
"""
import glob
import json
import os
import shutil
import subprocess
import tempfile

from .progress import Progress

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class ToolError(RuntimeError):
    """A tool that is missing or that failed; the message says which and why."""


def _env_var(tool):
    return tool.replace("qfuse-", "QFUSE_").replace("-", "_").upper()


def build_dirs():
    """$QFUSE_BUILD_DIR, then the repository's build*/ (newest first)."""
    dirs = []
    if os.environ.get("QFUSE_BUILD_DIR"):
        dirs.append(os.environ["QFUSE_BUILD_DIR"])
    found = [d for d in glob.glob(os.path.join(REPO_ROOT, "build*")) if os.path.isdir(d)]
    found.sort(key=lambda d: -os.path.getmtime(d))
    return dirs + found


def find_tool(tool):
    """The path of `tool`; ToolError listing every place looked at."""
    tried = []
    var = _env_var(tool)
    if os.environ.get(var):
        path = os.environ[var]
        if os.access(path, os.X_OK) and os.path.isfile(path):
            return path
        raise ToolError(f"{var}={path} is not an executable {tool}")
    tried.append(f"${var} (unset)")
    if os.environ.get("QFUSE_BUILD_DIR"):
        path = os.path.join(os.environ["QFUSE_BUILD_DIR"], "bin", tool)
        if os.access(path, os.X_OK):
            return path
        tried.append(path)
    found = shutil.which(tool)
    if found:
        return found
    tried.append("PATH")
    for d in build_dirs():
        path = os.path.join(d, "bin", tool)
        if os.access(path, os.X_OK) and os.path.isfile(path):
            return path
        tried.append(path)
    raise ToolError(f"{tool} not found; looked at {', '.join(tried)}. Build it "
                    f"(make build, or cmake --build <dir> --target {tool}) and set "
                    f"QFUSE_BUILD_DIR=<dir> or {var}=<path>")


def run_tool(tool, args, input_text=None, label=None):
    """Runs `tool args`; returns stdout. ToolError with its stderr on failure."""
    path = find_tool(tool)
    cmd = [path] + list(args)
    with Progress(label or f"{tool}"):
        proc = subprocess.run(cmd, input=input_text, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ToolError(f"{tool} failed (exit {proc.returncode}): {' '.join(cmd)}\n"
                        f"{proc.stderr.strip()}")
    return proc.stdout, proc.stderr


def verify(ir_path):
    """Parses and verifies IR with qfuse-opt (no passes)."""
    return run_tool("qfuse-opt", [ir_path, "-o", os.devnull], label="verifying")


# The chips qfuse-compile knows (#qf.target's table, KnownTargets.cpp).
CHIPS = ("sm_80", "sm_89", "sm_90", "sm_90a")

# What the frontend compiles for unless told otherwise: one artifact set
# (docs/artifact.md, Artifact sets) whose variant for the device runs:
# sm_80 on Ampere and Ada, sm_90a (the wgmma kernel) on H100/H200, sm_90's
# PTX on newer GPUs. qfuse-compile's own default stays sm_90 alone, and
# so does --emit mlir / ptx (one chip's IR or PTX) when no chip is given.
DEFAULT_CHIPS = "sm_80,sm_90,sm_90a"
DEFAULT_EMIT_CHIP = "sm_90"


def parse_chips(text):
    """--chip's value, a chip or a comma-separated list of them, as a list:
    each one of CHIPS, none twice; ToolError otherwise."""
    chips = [c.strip() for c in str(text).split(",")]
    for chip in chips:
        if chip not in CHIPS:
            raise ToolError(f"target '{chip}' is not supported by qfuse-compile; expected "
                            f"one of {', '.join(CHIPS)} or a comma-separated list of "
                            f"them (default {DEFAULT_CHIPS})")
    if len(set(chips)) != len(chips):
        raise ToolError(f"--chip {text}: a chip is listed twice (an artifact set holds "
                        "one artifact per chip)")
    return chips

# The tuning database that ships with qfuse: the measured tilings of the
# reference models' shapes. Compiles use it unless told otherwise; shapes it
# does not list get the cost model's tiling.
SHIPPED_TUNING_DB = os.path.join(REPO_ROOT, "bench", "tuning-db.json")


# The database `python3 -m qfuse tune` writes beside a model's config.json:
# compiles of that model (compile --config, generate, quantize) read it over
# the shipped one.
USER_TUNING_DB = "qfuse-tuning-db.json"

TUNING_DB_HELP = ("tuning database: 'auto' (default) is the model's own "
                  f"({USER_TUNING_DB} beside its config.json, written by `qfuse tune`) "
                  "over the one that ships with qfuse, or the shipped one alone where "
                  "the model has none; 'shipped' the shipped one alone, 'none' the cost "
                  "model alone, or a FILE")


def model_tuning_db(config_path):
    """The model's own database beside `config_path`, or None."""
    if not config_path:
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(config_path)), USER_TUNING_DB)
    return path if os.path.isfile(path) else None


def _entry_key(entry):
    # Encodings are the dialect's canonical text on both sides; spaces are
    # not significant.
    return (entry["m"], entry["n"], entry["k"], "".join(entry["encoding"].split()),
            entry.get("chip"))


def read_tuning_db(path):
    """The entries of a tuning database file (a JSON array of {m, n, k,
    encoding, tiling, ...}); ToolError naming the file otherwise."""
    try:
        with open(path) as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        raise ToolError(f"tuning database {path}: cannot read it ({e})") from None
    if not isinstance(entries, list) or not all(
            isinstance(e, dict) and {"m", "n", "k", "encoding", "tiling"} <= set(e)
            for e in entries):
        raise ToolError(f"tuning database {path}: expected a JSON array of {{m, n, k, "
                        "encoding, tiling, measured_us}} entries")
    return entries


def merge_tuning_entries(over, under):
    """The entries of `over` and those of `under` whose shape (m, n, k,
    encoding, chip) `over` does not have; sorted."""
    table = {_entry_key(e): e for e in under}
    table.update((_entry_key(e), e) for e in over)
    return sorted(table.values(), key=lambda e: (e.get("chip") or "", e["encoding"],
                                                 e["n"], e["k"], e["m"]))


def resolve_tuning_db(value, config=None, workdir=None):
    """--tuning-db's value as a path or None.

    'auto' (the default): the model's own database (USER_TUNING_DB beside
    `config`, which `qfuse tune` writes) over SHIPPED_TUNING_DB, merged into
    a file in `workdir` (the model's entries win where both have a shape);
    the shipped database alone where the model has none. 'shipped':
    SHIPPED_TUNING_DB where it exists. 'none': the cost model alone.
    Anything else: a user's own database, which must exist, alone."""
    if value in (None, "none"):
        return None
    shipped = SHIPPED_TUNING_DB if os.path.isfile(SHIPPED_TUNING_DB) else None
    if value == "shipped":
        return shipped
    if value == "auto":
        own = model_tuning_db(config)
        if not own:
            return shipped
        entries = read_tuning_db(own)
        if shipped:
            entries = merge_tuning_entries(entries, read_tuning_db(shipped))
        path = os.path.join(workdir or tempfile.mkdtemp(prefix="qfuse-"),
                            "tuning-db.json")
        with open(path, "w") as f:
            json.dump(entries, f, indent=1)
        return path
    if not os.path.isfile(value):
        raise ToolError(f"--tuning-db {value}: no such file (use 'auto' for the model's "
                        f"own database over the shipped one, 'shipped' for the "
                        f"database that ships with qfuse, 'none' for the cost model "
                        f"alone)")
    return value


def compile_ir(ir_path, output, chip=None, batch_sizes=None, emit="artifact",
               tuning_db=None, extra=()):
    """qfuse-compile `ir_path` -o `output` for `chip`: one chip, or a comma-
    separated list compiled into one artifact set. None: DEFAULT_CHIPS for an
    artifact, DEFAULT_EMIT_CHIP for --emit mlir / ptx."""
    if emit not in ("artifact", "mlir", "ptx"):
        raise ToolError(f"--emit {emit}: expected artifact, mlir or ptx")
    if chip is None:
        chip = DEFAULT_CHIPS if emit == "artifact" else DEFAULT_EMIT_CHIP
    chips = parse_chips(chip)
    if emit != "artifact" and len(chips) > 1:
        raise ToolError(f"--emit {emit} takes one --chip (a list, {chip}, makes an "
                        "artifact set); pass e.g. --chip sm_90a")
    args = [ir_path, "-o", output, f"--chip={','.join(chips)}", f"--emit={emit}"]
    if batch_sizes:
        args.append("--batch-sizes=" + ",".join(str(b) for b in batch_sizes))
    if tuning_db:
        args.append(f"--tuning-db={tuning_db}")
    return run_tool("qfuse-compile", args + list(extra), label=f"compiling {ir_path}")
