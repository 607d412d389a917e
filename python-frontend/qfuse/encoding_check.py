"""Checks an EncodingPlan's #qf.enc texts before any IR is written.

The fixed names (encodings.NAMED_ENCODINGS) need no check: tests hold them to
the runtime's table and parser. Every other text (a literal #qf.enc<...>, a
family name such as int4-g1) is parsed and verified by, in order:

1. qfuse-opt: the compiler's own parser and EncodingAttr verifier, so a text
   it accepts is one the compiler reads back;
2. libqfuse_c (qfuse_canonical_encoding): the runtime's format library,
   whose parser and verifier follow the dialect's;
3. neither found: only the brackets are checked here (where the body of
   #qf.enc<...> ends), and a note on stderr says the text was not verified.

    check_plan(EncodingPlan("#qf.enc<int4, group = 0, scale = f16>"))
    # EncodingError: --encoding '#qf.enc<int4, group = 0, scale = f16>' is not a
    # valid encoding: <stdin>:2:...: group size must be at least 2 ...
"""
import os
import re
import subprocess
import sys

from .encodings import ALIASES, NAMED_ENCODINGS, EncodingError, encoding_text
from .tools import ToolError, find_tool

_OPENERS = {"<": ">", "[": "]", "(": ")", "{": "}"}


def _option_label(key, name):
    return f"--encoding '{name}'" if key is None else f"--override '{key}={name}'"


def _needs_check(name):
    key = name.strip().lower()
    return ALIASES.get(key, key) not in NAMED_ENCODINGS


def check_brackets(text):
    """None when `text` nests its brackets (outside strings) and so cannot end
    its #qf.enc<...> early; else what is wrong."""
    stack, in_string, escaped = [], False, False
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in _OPENERS:
            stack.append(_OPENERS[c])
        elif c in _OPENERS.values():
            if not stack or stack.pop() != c:
                return f"unmatched '{c}' at offset {i}"
    if in_string:
        return "unterminated string"
    if stack:
        return f"'{stack[-1]}' missing at the end"
    return None


def _check_with_qfuse_opt(tool, texts):
    """{text: error} from one qfuse-opt run over a module holding every text
    as an attribute, one per line (the line of a diagnostic names the text)."""
    lines = [f"  qfuse.check{i} = #qf.enc<{' '.join(t.split())}>"
             for i, t in enumerate(texts)]
    module = "module attributes {\n" + ",\n".join(lines) + "\n} {}\n"
    proc = subprocess.run([tool, "-", "-o", os.devnull], input=module, capture_output=True,
                          text=True)
    if proc.returncode == 0:
        return {}
    # "<stdin>:LINE:COL: error: message": line 2 holds texts[0].
    for line in proc.stderr.splitlines():
        m = re.match(r"^<stdin>:(\d+):\d+: error: (.*)$", line)
        if m and 2 <= int(m.group(1)) < 2 + len(texts):
            return {texts[int(m.group(1)) - 2]: f"qfuse-opt: {m.group(2)}"}
    return {texts[0] if len(texts) == 1 else " | ".join(texts):
            f"qfuse-opt ({tool}) failed: {proc.stderr.strip()}"}


def _check_with_library(lib, texts):
    """{text: error}. qfuse_canonical_encoding reads a name before a body, so
    a body spelled as a name (nf4, int8: never valid bodies, they lack a
    scale granularity) is refused here rather than read as the name."""
    errors = {}
    for text in texts:
        body = text.strip()
        try:
            named = not body.startswith("#") and encoding_text(body) != body
        except EncodingError:
            named = False
        if named:
            errors[text] = (f"libqfuse_c: '{body}' is an encoding name, not the body of "
                            f"a #qf.enc<...>; write --encoding {body}, or "
                            f"#qf.enc<{encoding_text(body)}>")
            break
        try:
            lib.canonical_encoding(text)
        except Exception as e:  # QfuseError: the parser's message
            m = re.search(r"nor an encoding \((.*)\)$", str(e))
            errors[text] = "libqfuse_c: " + (m.group(1) if m else str(e))
            break
    return errors


def _checker():
    """(name, function(texts) -> {text: error}), or (None, None)."""
    try:
        tool = find_tool("qfuse-opt")
        return "qfuse-opt", lambda texts: _check_with_qfuse_opt(tool, texts)
    except ToolError:
        pass
    try:
        from .runtime import Library, QfuseError
        lib = Library()
        return "libqfuse_c", lambda texts: _check_with_library(lib, texts)
    except (QfuseError, OSError):
        return None, None


def check_plan(plan, note=sys.stderr):
    """Raises EncodingError naming the option whose encoding does not parse
    or verify; returns what checked ("qfuse-opt", "libqfuse_c", "brackets"
    or None when every encoding is a fixed name)."""
    options = [(None, plan.default)] + list(plan.overrides)
    pending = {}
    for key, name in options:
        if not _needs_check(name):
            continue
        text = encoding_text(name)
        label = _option_label(key, name)
        problem = check_brackets(text)
        if problem:
            raise EncodingError(f"{label} is not a valid encoding: {problem}")
        pending.setdefault(text, label)
    if not pending:
        return None
    name, check = _checker()
    if check is None:
        if note:
            print("qfuse: note: " + ", ".join(pending.values()) + " not verified: "
                  "neither qfuse-opt nor libqfuse_c was found (build one, or set "
                  "QFUSE_OPT / QFUSE_C_LIBRARY)", file=note)
        return "brackets"
    errors = check(list(pending))
    for text, error in errors.items():
        label = pending.get(text, ", ".join(pending.values()))
        raise EncodingError(f"{label} is not a valid encoding: {error}")
    return name
