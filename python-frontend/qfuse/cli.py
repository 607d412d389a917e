"""python3 -m qfuse {emit,compile,compile-gptq,report,run,bench,generate,quantize,tune,encodings}.

Each command's options and work are in cli_<command>.py (run and bench in
cli_run.py, compile-gptq in cli_compile.py); this module builds the parser
from them and runs the command given (main).
"""
import argparse
import sys

from . import __version__
from .cli_args import CliError  # noqa: F401  (raised by every command)
from .cli_compile import add_compile_gptq_parser, add_compile_parser
from .cli_emit import add_emit_parser
from .cli_generate import add_generate_parser
from .cli_quantize import add_quantize_parser
from .cli_report import add_report_parser
from .cli_run import add_run_parsers
from .cli_tune import add_tune_parser
from .encodings import ALIASES, FAMILY_HELP, EncodingError, encoding_text, valid_names
from .ir import IRError
from .model import ConfigError
from .tools import ToolError


def cmd_encodings(args):
    for name in valid_names():
        target = f" (= {ALIASES[name]})" if name in ALIASES else ""
        print(f"{name:16s} #qf.enc<{encoding_text(name)}>{target}")
    print(f"and {FAMILY_HELP}")


def add_encodings_parser(sub):
    """The `encodings` command."""
    n = sub.add_parser("encodings", help="list the encoding names")
    n.set_defaults(func=cmd_encodings)


def build_parser():
    p = argparse.ArgumentParser(prog="qfuse", description=(
        "The qfuse Python frontend: emit qf IR from a Hugging Face config.json, "
        "compile it with qfuse-compile, report its roofline, and run artifacts "
        "through the runtime's C API."))
    p.add_argument("--version", action="version", version=f"qfuse {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    add_emit_parser(sub)
    add_compile_parser(sub)
    add_compile_gptq_parser(sub)
    add_report_parser(sub)
    add_run_parsers(sub)
    add_generate_parser(sub)
    add_quantize_parser(sub)
    add_tune_parser(sub)
    add_encodings_parser(sub)
    return p


def main(argv=None):
    from .runtime import QfuseError
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.func(args)
    except (CliError, ConfigError, EncodingError, IRError, ToolError, QfuseError,
            ValueError, OSError) as e:  # TuneError is a ValueError
        print(f"qfuse {args.command}: error: {e}", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"qfuse {args.command}: error: out of host memory (MemoryError); "
              "no file was left half-written", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
