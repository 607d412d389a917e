"""The command line's error, value types and shared options (argparse), for
cli.py and the cli_*.py modules of its commands."""
import argparse

from .tools import CHIPS, DEFAULT_CHIPS, DEFAULT_EMIT_CHIP


class CliError(Exception):
    """A command's input it cannot use; main() prints it as `qfuse CMD: error: ...`."""


def add_chip_arg(p, what="target chip", emit=False):
    """--chip of a command that compiles (None: tools.compile_ir's default,
    which also checks the value); `emit`: the command has --emit."""
    p.add_argument("--chip", default=None, metavar="CHIP[,CHIP...]",
                   help=f"{what}: one of {', '.join(CHIPS)}, or a comma-separated list "
                        "compiled into one artifact set whose variant for the device "
                        f"runs (default {DEFAULT_CHIPS}: sm_80 on Ampere and Ada, "
                        "wgmma on H100/H200 through sm_90a, sm_90 on newer GPUs"
                        + (f"; --emit mlir/ptx: {DEFAULT_EMIT_CHIP})" if emit else ")"))


def batch(text):
    """--batch: a positive row count, or 'dynamic' (None: M is `?`)."""
    if text == "dynamic":
        return "dynamic"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of rows or 'dynamic', got {text!r}") from None


def prompt_ids(text):
    """--prompt-ids: comma-separated non-negative token ids."""
    ids = []
    for part in text.split(","):
        try:
            value = int(part.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated token ids such as 1,2,3, got {text!r}") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"token id {value} in {text!r} is negative")
        ids.append(value)
    return ids


def damp(text):
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive fraction such as 0.01, "
                                         f"got {text!r}")
    return value


def positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value
