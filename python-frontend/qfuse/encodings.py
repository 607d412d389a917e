"""Encoding names users know ("int4-g128", "nf4", "nvfp4", ...) -> #qf.enc text.

The one Python definition of these names; bench/decode_step_ir.py and the
emitters use it. The runtime's C++ table (format/src/NamedEncodings.cpp,
reachable through qfuse_canonical_encoding) holds the same fixed names; a test
(tests/test_encodings.py) checks both agree whenever libqfuse_c.so loads.

    >>> encoding_text("int4-g128")
    'int4, group = 128, scale = f16'
    >>> encoding_text("uint8-g32-asym")
    'uint8, group = 32, scale = f16, zero = int'
"""
import fnmatch
import re

# name -> body of #qf.enc<...>, in the dialect printer's canonical order.
NAMED_ENCODINGS = {
    "int4-g128": "int4, group = 128, scale = f16",                 # GPTQ sym
    "uint4-g128-asym": "uint4, group = 128, scale = f16, zero = int",  # GPTQ/AWQ
    "nf4": "nf4, group = 64, scale = f32",                          # bitsandbytes
    "nvfp4": "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale",
    "mxfp4": "fp4e2m1, group = 32, scale = f8E8M0FNU",
    "fp8": "fp8e4m3, per_channel, scale = f32",
    "int8": "int8, per_channel, scale = f16",
    "2:4": "f16, sparse = 2:4",
    "2:4+int4": "int4, group = 128, scale = f16, sparse = 2:4",
    "fp16": "f16",
    "bf16": "bf16",
}

# Other spellings of the names above (bench/ has always said sparse24-f16).
ALIASES = {
    "sparse24-f16": "2:4",
    "f16": "fp16",
    "int4": "int4-g128",
    "int8-pc": "int8",
}

# {int4,int8}-g<G>, {uint4,uint8}-g<G>-asym, {int4,int8}-pc, {uint4,uint8}-pc-asym.
_FAMILY = re.compile(r"^(u?int[48])-(g([1-9][0-9]{0,8})|pc)(-asym)?$")

FAMILY_HELP = ("{int4,int8}-g<G>, {uint4,uint8}-g<G>-asym (group scales), "
               "{int4,int8}-pc, {uint4,uint8}-pc-asym (per-channel scales), "
               "or a literal #qf.enc<...>")

# Encodings without scales: their weights are dense tensors.
UNQUANTIZED = ("f16", "bf16")


class EncodingError(ValueError):
    """An encoding name or override that is not known."""


def valid_names():
    """The fixed names and aliases, sorted, for help texts and errors."""
    return sorted(set(NAMED_ENCODINGS) | set(ALIASES))


def _family_text(name):
    match = _FAMILY.match(name)
    if not match:
        return None
    fmt, _, group, asym = match.groups()
    unsigned = fmt.startswith("u")
    if unsigned != bool(asym):
        return None  # uint needs -asym (zero points); int must not have it
    body = fmt + (", group = " + group if group else ", per_channel") + ", scale = f16"
    return body + (", zero = int" if unsigned else "")


def encoding_text(name):
    """The body of #qf.enc<...> for an encoding name (or a literal #qf.enc).

    Raises EncodingError naming the valid names when `name` is unknown.
    """
    key = name.strip()
    if key.startswith("#qf.enc<") and key.endswith(">"):
        return key[len("#qf.enc<"):-1].strip()
    key = key.lower()
    key = ALIASES.get(key, key)
    if key in NAMED_ENCODINGS:
        return NAMED_ENCODINGS[key]
    text = _family_text(key)
    if text is None:
        raise EncodingError(
            f"unknown encoding '{name}'; expected one of "
            f"{', '.join(valid_names())}, or {FAMILY_HELP}")
    return text


def encoding_attr(name):
    """'#qf.enc<...>' for an encoding name."""
    return f"#qf.enc<{encoding_text(name)}>"


def is_quantized(text):
    """False for the unquantized dense formats (f16, bf16 without 2:4)."""
    return text.strip() not in UNQUANTIZED


def alias_name(text):
    """A short alias for an encoding text: 'int4, group = 128, ...' -> int4_g128."""
    parts = [p.strip() for p in text.split(",")]
    alias = parts[0].replace(":", "of")
    for p in parts[1:]:
        if p.startswith("group = "):
            alias += "_g" + p.split("=")[1].strip()
        elif p == "per_channel":
            alias += "_pc"
        elif p.startswith("sparse"):
            alias += "_2of4"
        elif p.startswith("zero"):
            alias += "_asym"
    return re.sub(r"[^A-Za-z0-9_]", "_", alias)


PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj",
               "gate_proj", "up_proj", "down_proj", "lm_head")


class EncodingPlan:
    """The encoding of every linear weight: a default plus overrides.

        plan = EncodingPlan("int4-g128", ["lm_head=fp16,down_proj=int8"])
        plan.name_for("model.layers.3.mlp.down_proj", "down_proj")  # 'int8'

    An override key is a projection kind (q_proj, ..., lm_head), a full weight
    name, or a shell pattern over weight names ("model.layers.0.*").
    """

    def __init__(self, default, overrides=()):
        encoding_text(default)  # validates
        self.default = default
        self.overrides = []
        for spec in overrides or ():
            for item in spec.split(","):
                item = item.strip()
                if not item:
                    continue
                if "=" not in item:
                    raise EncodingError(
                        f"override '{item}' is not KEY=ENCODING; expected e.g. "
                        "lm_head=fp16,down_proj=int8")
                key, enc = (s.strip() for s in item.split("=", 1))
                if not any(c in key for c in ".*?[") and key not in PROJECTIONS:
                    raise EncodingError(
                        f"override key '{key}' is not a projection; expected one "
                        f"of {', '.join(PROJECTIONS)}, a weight name or a pattern "
                        "such as 'model.layers.0.*'")
                try:
                    encoding_text(enc)
                except EncodingError as e:
                    raise EncodingError(f"override '{item}': {e}") from None
                self.overrides.append((key, enc))

    def name_for(self, weight, kind):
        """The encoding name of `weight` (of projection `kind`); last match wins."""
        chosen = self.default
        for key, enc in self.overrides:
            if key == kind or key == weight or fnmatch.fnmatchcase(weight, key):
                chosen = enc
        return chosen

    def text_for(self, weight, kind):
        return encoding_text(self.name_for(weight, kind))

    def describe(self):
        if not self.overrides:
            return self.default
        return self.default + " (" + ", ".join(f"{k}={e}" for k, e in self.overrides) + ")"
