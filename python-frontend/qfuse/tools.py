"""Finding and running the qfuse tools: the compiler's (qfuse-opt,
qfuse-compile) and the runtime's (qfuse-quantize, ...).

Search order for a tool `qfuse-X`: the environment variable QFUSE_X
(QFUSE_OPT, QFUSE_COMPILE: a path), $QFUSE_BUILD_DIR/bin, PATH, then the
repository's build*/bin directories (most recently built first).
"""
import glob
import os
import shutil
import subprocess

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


def resolve_tuning_db(value):
    """--tuning-db's value as a path or None: 'shipped' (the default) is
    SHIPPED_TUNING_DB where it exists, 'none' the cost model alone, anything
    else a user's own database, which must exist."""
    if value in (None, "none"):
        return None
    if value == "shipped":
        return SHIPPED_TUNING_DB if os.path.isfile(SHIPPED_TUNING_DB) else None
    if not os.path.isfile(value):
        raise ToolError(f"--tuning-db {value}: no such file (use 'shipped' for "
                        f"the database that ships with qfuse, 'none' for the "
                        f"cost model alone)")
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
