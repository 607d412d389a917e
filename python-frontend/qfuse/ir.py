"""A small builder for `qf` dialect IR text (include/qfuse/Dialect/QF/IR/QFOps.td).

Values carry their type; each op method checks shapes the way the op's
verifier does, so a mistake is reported in Python with the op's name rather
than later by qfuse-opt.

    m = Module()
    f = m.func("proj")
    x = f.arg("x", tensor(1, 4096), "x")
    y = f.linear(x, "model.layers.0.self_attn.q_proj", 4096,
                 "int4, group = 128, scale = f16")
    f.ret([y])
    print(m.text())
"""
import math

from .encodings import alias_name, is_quantized


class IRError(ValueError):
    """An op built with operands its verifier would reject."""


def fmt_float(value):
    """An MLIR float literal: always with a '.' (1e-05 -> 1.0e-05)."""
    value = float(value)
    if not math.isfinite(value):
        raise IRError(f"attribute value {value} is not finite")
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def _dim(d):
    return "?" if d is None else str(d)


class TensorType:
    def __init__(self, shape, elt="f16"):
        self.shape = tuple(shape)
        self.elt = elt

    def __str__(self):
        return "tensor<" + "".join(_dim(d) + "x" for d in self.shape) + self.elt + ">"

    def __eq__(self, other):
        return isinstance(other, TensorType) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))


def tensor(*shape, elt="f16"):
    return TensorType(shape, elt)


class WeightType:
    """!qf.weight<NxK, #alias>: `alias` names the module's #qf.enc alias."""

    def __init__(self, n, k, enc_text, alias):
        self.n, self.k, self.enc_text, self.alias = n, k, enc_text, alias

    def __str__(self):
        return f"!qf.weight<{self.n}x{self.k}, #{self.alias}>"


class Value:
    def __init__(self, name, type_):
        self.name = name
        self.type = type_

    def __str__(self):
        return self.name


class Module:
    """Encoding aliases (one per distinct #qf.enc) and functions."""

    def __init__(self, comments=()):
        self.comments = list(comments)
        self.aliases = {}  # enc text -> alias
        self.funcs = []
        self.attributes = {}  # module attribute name -> attribute text

    def alias(self, enc_text):
        if enc_text not in self.aliases:
            base = alias_name(enc_text)
            name, i = base, 1
            while name in self.aliases.values():
                i += 1
                name = f"{base}_{i}"
            self.aliases[enc_text] = name
        return self.aliases[enc_text]

    def func(self, name):
        f = Function(self, name)
        self.funcs.append(f)
        return f

    def text(self):
        lines = [f"// {c}" for c in self.comments]
        lines += [f"#{a} = #qf.enc<{t}>" for t, a in self.aliases.items()]
        body = []
        for f in self.funcs:
            body += f.lines()
        if self.attributes:
            attrs = ", ".join(f"{k} = {v}" for k, v in self.attributes.items())
            lines.append(f"module attributes {{{attrs}}} {{")
            lines += ["  " + line for line in body]
            lines.append("}")
        else:
            lines += body
        return "\n".join(lines) + "\n"


def attribute_text(value):
    """A Python value as MLIR attribute text: dict -> dictionary, str,
    bool, int (i64), float (f64), list -> array."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {attribute_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{fmt_float(value)} : f64"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(attribute_text(v) for v in value) + "]"
    raise IRError(f"no attribute form for {value!r}")


class Function:
    def __init__(self, module, name):
        self.module = module
        self.name = name
        self.args = []       # (Value, qf.name or None)
        self.body = []
        self.results = None
        self._names = set()

    # -- values ---------------------------------------------------------------
    def _fresh(self, hint):
        hint = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "v"
        if hint[0].isdigit():
            hint = "v" + hint
        name, i = hint, 0
        while name in self._names:
            i += 1
            name = f"{hint}_{i}"
        self._names.add(name)
        return "%" + name

    def arg(self, hint, type_, qf_name=None):
        v = Value(self._fresh(hint), type_)
        self.args.append((v, qf_name))
        return v

    def comment(self, text):
        self.body.append(f"// {text}")

    def _op(self, hint, type_, text):
        v = Value(self._fresh(hint), type_)
        self.body.append(f"{v} = {text}")
        return v

    # -- references -----------------------------------------------------------
    def weight_ref(self, name, n, k, enc_text, hint="w", attrs=""):
        """A weight resolved by name at run time. Packed encodings are decoded
        in the fused kernels; a dense `f16` weight becomes a cuBLAS step (the
        fp16 baseline)."""
        if not is_quantized(enc_text) and enc_text.strip() != "f16":
            raise IRError(f"weight '{name}': unquantized #qf.enc<{enc_text}> "
                          "weights are dense tensors (only f16 has a cuBLAS "
                          "lowering); use tensor_ref")
        wt = WeightType(n, k, enc_text, self.module.alias(enc_text))
        extra = f" {{{attrs}}}" if attrs else ""
        return self._op(hint, wt, f'qf.weight_ref "{name}"{extra} : {wt}')

    def tensor_ref(self, name, type_, hint="t", attrs=""):
        extra = f" {{{attrs}}}" if attrs else ""
        return self._op(hint, type_, f'qf.tensor_ref "{name}"{extra} : {type_}')

    # -- ops ------------------------------------------------------------------
    @staticmethod
    def _matrix(v, what, op):
        if not isinstance(v.type, TensorType) or len(v.type.shape) != 2:
            raise IRError(f"{op}: {what} {v} must be a 2-D tensor, got {v.type}")
        return v.type.shape

    def matmul(self, x, w, hint="y"):
        m, k = self._matrix(x, "input", "qf.matmul")
        if isinstance(w.type, WeightType):
            n, wk = w.type.n, w.type.k
        else:
            n, wk = self._matrix(w, "weight", "qf.matmul")
        if wk != k:
            raise IRError(f"qf.matmul: input has K = {k} but weight {w} has K = {wk}")
        out = TensorType((m, n), x.type.elt)
        return self._op(hint, out, f"qf.matmul {x}, {w} : {x.type}, {w.type} -> {out}")

    def fused_matmul(self, x, w, bias=None, hint="y"):
        """A packed-weight matmul with its bias epilogue ([N] bias)."""
        m, k = self._matrix(x, "input", "qf.fused_matmul")
        if not isinstance(w.type, WeightType):
            raise IRError("qf.fused_matmul: the weight must be a packed !qf.weight")
        if w.type.k != k:
            raise IRError(f"qf.fused_matmul: input has K = {k} but weight has K = {w.type.k}")
        out = TensorType((m, w.type.n), x.type.elt)
        extra = f" bias({bias} : {bias.type})" if bias is not None else ""
        return self._op(hint, out, f"qf.fused_matmul {x}, {w}{extra} : "
                                   f"{x.type}, {w.type} -> {out}")

    def add_bias(self, y, bias, hint="yb"):
        """y + broadcast(bias) for a dense matmul (no fused epilogue exists)."""
        m, n = self._matrix(y, "input", "bias add")
        empty = self._op("e", y.type, f"tensor.empty() : {y.type}")
        if bias.type.shape != (n,):
            raise IRError(f"bias add: bias must be [{n}], got {bias.type}")
        bcast = self._op("bb", y.type,
                         f"linalg.broadcast ins({bias} : {bias.type}) outs({empty} : "
                         f"{y.type}) dimensions = [0]")
        return self.add(y, bcast, hint)

    def linear(self, x, weight, n, enc_text, bias=None, hint="y"):
        """A linear layer y = x W^T (+ b) with W [n, K] named `weight` in
        `enc_text`; `bias` names a [n] tensor.

        Packed encodings, and dense f16 (run by cuBLAS), give qf.weight_ref +
        qf.matmul (qf.fused_matmul with bias(...) when there is a bias); bf16
        a dense qf.tensor_ref "<weight>.weight" + qf.matmul (+ broadcast
        qf.add), which has no GPU lowering.
        """
        k = self._matrix(x, "input", "linear")[1]
        elt = x.type.elt
        b = self.tensor_ref(bias, TensorType((n,), elt), hint + "_b") if bias else None
        if is_quantized(enc_text) or (enc_text.strip() == "f16" and elt == "f16"):
            w = self.weight_ref(weight, n, k, enc_text, hint="w" + hint)
            return self.fused_matmul(x, w, b, hint) if b is not None else self.matmul(x, w, hint)
        if enc_text.strip() != elt:
            raise IRError(f"linear '{weight}': an unquantized {enc_text} weight needs "
                          f"{enc_text} activations, got {elt}")
        w = self.tensor_ref(f"{weight}.weight", TensorType((n, k), elt), "w" + hint)
        y = self.matmul(x, w, hint)
        return self.add_bias(y, b, hint + "_biased") if b is not None else y

    def rms_norm(self, x, gamma, eps, hint="n"):
        m, h = self._matrix(x, "input", "qf.rms_norm")
        if gamma.type.shape != (h,):
            raise IRError(f"qf.rms_norm: gamma must be [{h}], got {gamma.type}")
        return self._op(hint, x.type, f"qf.rms_norm {x}, {gamma} {{eps = {fmt_float(eps)} : f32}}"
                                      f" : {x.type}, {gamma.type} -> {x.type}")

    def rotary(self, x, positions, head_dim, theta, llama3=None, hint="r"):
        """llama3: dict(factor, low_freq_factor, high_freq_factor,
        original_max_position_embeddings) or None."""
        m, width = self._matrix(x, "input", "qf.rotary")
        if head_dim % 2 or width % head_dim:
            raise IRError(f"qf.rotary: width {width} must be a multiple of an even "
                          f"head_dim, got head_dim = {head_dim}")
        attrs = [f"head_dim = {head_dim} : i64", f"theta = {fmt_float(theta)} : f64"]
        if llama3:
            attrs += [f"scaling_factor = {fmt_float(llama3['factor'])} : f64",
                      f"low_freq_factor = {fmt_float(llama3['low_freq_factor'])} : f64",
                      f"high_freq_factor = {fmt_float(llama3['high_freq_factor'])} : f64",
                      "original_max_position = "
                      f"{int(llama3['original_max_position_embeddings'])} : i64"]
        return self._op(hint, x.type, f"qf.rotary {x}, {positions} {{{', '.join(attrs)}}}"
                                      f" : {x.type}, {positions.type} -> {x.type}")

    def attention(self, q, k, v, key_cache, value_cache, positions,
                  num_heads, num_kv_heads, head_dim, hint="attn"):
        if num_heads % num_kv_heads:
            raise IRError(f"qf.attention: num_heads = {num_heads} must be a multiple "
                          f"of num_kv_heads = {num_kv_heads}")
        m = self._matrix(q, "query", "qf.attention")[0]
        for val, width, what in ((q, num_heads * head_dim, "query"),
                                 (k, num_kv_heads * head_dim, "key"),
                                 (v, num_kv_heads * head_dim, "value")):
            if val.type.shape != (m, width):
                raise IRError(f"qf.attention: {what} must be [{m}, {width}], got {val.type}")
        if key_cache.type.shape[1] != num_kv_heads * head_dim:
            raise IRError("qf.attention: caches must be [S, num_kv_heads * head_dim]")
        o = Value(self._fresh(hint), q.type)
        kc = Value(self._fresh(hint + "_kc"), key_cache.type)
        vc = Value(self._fresh(hint + "_vc"), value_cache.type)
        ins = (q, k, v, key_cache, value_cache, positions)
        self.body.append(
            f"{o}, {kc}, {vc} = qf.attention {', '.join(str(i) for i in ins)} "
            f"{{num_heads = {num_heads} : i64, num_kv_heads = {num_kv_heads} : i64, "
            f"head_dim = {head_dim} : i64}} : ({', '.join(str(i.type) for i in ins)}) -> "
            f"({q.type}, {key_cache.type}, {value_cache.type})")
        return o, kc, vc

    def silu_mul(self, gate, up, hint="act"):
        if gate.type != up.type:
            raise IRError(f"qf.silu_mul: gate {gate.type} and up {up.type} differ")
        return self._op(hint, gate.type, f"qf.silu_mul {gate}, {up} : {gate.type}")

    def add(self, a, b, hint="sum"):
        if a.type != b.type:
            raise IRError(f"qf.add: operands {a.type} and {b.type} differ")
        return self._op(hint, a.type, f"qf.add {a}, {b} : {a.type}")

    def embedding(self, table, ids, hint="emb"):
        v, h = self._matrix(table, "table", "qf.embedding")
        out = TensorType((ids.type.shape[0], h), table.type.elt)
        return self._op(hint, out, f"qf.embedding {table}, {ids} : {table.type}, "
                                   f"{ids.type} -> {out}")

    def argmax(self, x, hint="next"):
        m, _ = self._matrix(x, "input", "qf.argmax")
        out = TensorType((m,), "i32")
        return self._op(hint, out, f"qf.argmax {x} : {x.type} -> {out}")

    def sample(self, logits, params, mask, counters, hint="next"):
        """qf.sample: one token per row, drawn with the per-row (or shared
        [1, 8]) parameters, penalty mask [R, V] i8 and Philox counters [M]
        (docs/sampling.md)."""
        m, v = self._matrix(logits, "logits", "qf.sample")
        if params.type.shape[1:] != (8,) or params.type.elt != "i32":
            raise IRError(f"qf.sample: params must be [R, 8] i32, got {params.type}")
        if mask.type.shape[1:] != (v,) or mask.type.elt != "i8":
            raise IRError(f"qf.sample: penalty_mask must be [R, {v}] i8, got {mask.type}")
        out = TensorType((m,), "i32")
        ins = (logits, params, mask, counters)
        return self._op(hint, out, f"qf.sample {', '.join(str(i) for i in ins)} : "
                                   f"{', '.join(str(i.type) for i in ins)} -> {out}")

    def ret(self, values, names=()):
        """Returns `values`; `names[i]` (when given) is result i's qf.name,
        the buffer name the runtime reads it by."""
        self.results = list(values)
        self.result_names = list(names) + [None] * (len(values) - len(names))

    # -- text -----------------------------------------------------------------
    def lines(self):
        args = ", ".join(f"{v}: {v.type}" + (f' {{qf.name = "{n}"}}' if n else "")
                         for v, n in self.args)
        results = self.results or []
        types = ", ".join(str(v.type) for v in results)
        names = getattr(self, "result_names", [None] * len(results))
        signature = ", ".join(str(v.type) + (f' {{qf.name = "{n}"}}' if n else "")
                              for v, n in zip(results, names))
        out = [f"func.func @{self.name}({args}) -> ({signature}) {{"]
        out += ["  " + line for line in self.body]
        out.append(f"  return {', '.join(str(v) for v in results)} : {types}"
                   if results else "  return")
        out.append("}")
        return out
