//===- ExecBits.cpp - logic, shifts, bit fields, moves and selects --------===//

#include "Exec.h"
#include "PtxDecode.h"

#include <type_traits>

namespace qfuse::sim::ptx {
namespace {

enum LogicOp { And, Or, Xor };

template <class T, int OP> bool logic(Exec &x, const Instr &in) {
  T a = get<T>(x, in.op[1]), b = get<T>(x, in.op[2]);
  set<T>(x, in.op[0], OP == And ? T(a & b) : OP == Or ? T(a | b) : T(a ^ b));
  return true;
}
template <class T> bool bitNot(Exec &x, const Instr &in) {
  set<T>(x, in.op[0], T(~get<T>(x, in.op[1])));
  return true;
}
template <class T> bool cnot(Exec &x, const Instr &in) {
  set<T>(x, in.op[0], T(get<T>(x, in.op[1]) == 0));
  return true;
}
bool predNot(Exec &x, const Instr &in) {
  x.r[in.op[0]] = !(x.r[in.op[1]] & 1);
  return true;
}
template <int OP> bool predLogic(Exec &x, const Instr &in) {
  uint64_t a = x.r[in.op[1]] & 1, b = x.r[in.op[2]] & 1;
  x.r[in.op[0]] = OP == And ? a & b : OP == Or ? a | b : a ^ b;
  return true;
}

template <class T> bool shl(Exec &x, const Instr &in) {
  uint32_t n = get<uint32_t>(x, in.op[2]);
  T a = get<T>(x, in.op[1]);
  set<T>(x, in.op[0], n >= 8 * sizeof(T) ? T(0) : T(a << n));
  return true;
}
template <class T> bool shr(Exec &x, const Instr &in) {
  uint32_t n = get<uint32_t>(x, in.op[2]);
  T a = get<T>(x, in.op[1]);
  if (n >= 8 * sizeof(T))
    n = 8 * sizeof(T) - 1, a = std::is_signed_v<T> ? T(a >> n) : T(0);
  else
    a = T(a >> n);
  set<T>(x, in.op[0], a);
  return true;
}

// shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: a funnel shift of b:a.
template <bool LEFT, bool WRAP> bool shf(Exec &x, const Instr &in) {
  uint64_t v = (uint64_t(get<uint32_t>(x, in.op[2])) << 32) |
               get<uint32_t>(x, in.op[1]);
  uint32_t n = get<uint32_t>(x, in.op[3]);
  n = WRAP ? n & 31 : (n > 32 ? 32 : n);
  set<uint32_t>(x, in.op[0],
                LEFT ? uint32_t((v << n) >> 32) : uint32_t(v >> n));
  return true;
}

template <class T> bool bfe(Exec &x, const Instr &in) {
  using U = std::make_unsigned_t<T>;
  const unsigned msb = 8 * sizeof(T) - 1;
  U a = U(get<T>(x, in.op[1]));
  unsigned pos = get<uint32_t>(x, in.op[2]) & 0xff;
  unsigned len = get<uint32_t>(x, in.op[3]) & 0xff;
  unsigned sbit = 0;
  if (std::is_signed_v<T> && len != 0)
    sbit = (a >> (pos + len - 1 < msb ? pos + len - 1 : msb)) & 1;
  U d = 0;
  for (unsigned i = 0; i <= msb; ++i) {
    unsigned bit = (i < len && pos + i <= msb) ? (a >> (pos + i)) & 1 : sbit;
    d |= U(bit) << i;
  }
  set<T>(x, in.op[0], T(d));
  return true;
}

template <class T> bool bfi(Exec &x, const Instr &in) {
  const unsigned msb = 8 * sizeof(T) - 1;
  T f = get<T>(x, in.op[1]), d = get<T>(x, in.op[2]);
  unsigned pos = get<uint32_t>(x, in.op[3]) & 0xff;
  unsigned len = get<uint32_t>(x, in.op[4]) & 0xff;
  for (unsigned i = 0; i < len && pos + i <= msb; ++i)
    d = T((d & ~(T(1) << (pos + i))) | (((f >> i) & 1) << (pos + i)));
  set<T>(x, in.op[0], d);
  return true;
}

bool prmt(Exec &x, const Instr &in) {
  uint64_t src = (uint64_t(get<uint32_t>(x, in.op[2])) << 32) |
                 get<uint32_t>(x, in.op[1]);
  uint32_t c = get<uint32_t>(x, in.op[3]);
  uint32_t d = 0;
  if (in.mode == 0) {
    for (int i = 0; i < 4; ++i) {
      uint32_t sel = (c >> (4 * i)) & 15;
      uint32_t byte = uint32_t(src >> (8 * (sel & 7))) & 0xff;
      if (sel & 8)
        byte = (byte & 0x80) ? 0xff : 0;
      d |= byte << (8 * i);
    }
  } else {
    // Byte indices d.b0..d.b3 for each mode and c[1:0] (PTX ISA's table).
    static const uint8_t table[6][4][4] = {
        {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}}, // f4e
        {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}}, // b4e
        {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}}, // rc8
        {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}}, // ecl
        {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}}, // ecr
        {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}}, // rc16
    };
    const uint8_t *sel = table[in.mode - 1][c & 3];
    for (int i = 0; i < 4; ++i)
      d |= (uint32_t(src >> (8 * sel[i])) & 0xff) << (8 * i);
  }
  set<uint32_t>(x, in.op[0], d);
  return true;
}

bool lop3(Exec &x, const Instr &in) {
  uint32_t a = get<uint32_t>(x, in.op[1]), b = get<uint32_t>(x, in.op[2]),
           c = get<uint32_t>(x, in.op[3]);
  uint32_t lut = get<uint32_t>(x, in.op[4]);
  uint32_t d = 0;
  for (int i = 0; i < 8; ++i)
    if (lut >> i & 1)
      d |= (i & 4 ? a : ~a) & (i & 2 ? b : ~b) & (i & 1 ? c : ~c);
  set<uint32_t>(x, in.op[0], d);
  return true;
}

template <class T> bool popc(Exec &x, const Instr &in) {
  set<uint32_t>(x, in.op[0], uint32_t(__builtin_popcountll(get<T>(x, in.op[1]))));
  return true;
}
template <class T> bool clz(Exec &x, const Instr &in) {
  uint64_t a = get<T>(x, in.op[1]);
  unsigned bits = 8 * sizeof(T);
  set<uint32_t>(x, in.op[0],
                a ? uint32_t(__builtin_clzll(a) - (64 - bits)) : bits);
  return true;
}
template <class T> bool brev(Exec &x, const Instr &in) {
  T a = get<T>(x, in.op[1]), d = 0;
  for (unsigned i = 0; i < 8 * sizeof(T); ++i)
    d = T(d | (((a >> i) & 1) << (8 * sizeof(T) - 1 - i)));
  set<T>(x, in.op[0], d);
  return true;
}

template <class T> bool mov(Exec &x, const Instr &in) {
  set<T>(x, in.op[0], get<T>(x, in.op[1]));
  return true;
}
// mov.bN d, {a, b, ...}: elements packed low first.
bool pack(Exec &x, const Instr &in) {
  uint64_t v = 0;
  unsigned bits = 8 * in.width;
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  for (unsigned i = 0; i < in.vec; ++i)
    v |= (x.r[in.op[1 + i]] & mask) << (bits * i);
  x.r[in.op[0]] = v;
  return true;
}
// mov.bN {a, b, ...}, s: the reverse; op[0..vec) are the destinations.
bool unpack(Exec &x, const Instr &in) {
  uint64_t v = x.r[in.op[in.vec]];
  unsigned bits = 8 * in.width;
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  for (unsigned i = 0; i < in.vec; ++i)
    x.r[in.op[i]] = (v >> (bits * i)) & mask;
  return true;
}
bool readClock(Exec &x, const Instr &in) {
  x.r[in.op[0]] = x.clock += 16;
  return true;
}
template <class T> bool selp(Exec &x, const Instr &in) {
  set<T>(x, in.op[0], get<T>(x, (x.r[in.op[3]] & 1) ? in.op[1] : in.op[2]));
  return true;
}

template <template <class> class F> Handler sized(Ty t, bool sign = false) {
  switch (tyBytes(t)) {
  case 1: return F<uint8_t>::get();
  case 2: return sign ? F<int16_t>::get() : F<uint16_t>::get();
  case 4: return sign ? F<int32_t>::get() : F<uint32_t>::get();
  case 8: return sign ? F<int64_t>::get() : F<uint64_t>::get();
  default: return nullptr;
  }
}
#define QFUSE_HANDLER_OF(NAME, FN)                                             \
  template <class T> struct NAME {                                             \
    static Handler get() { return FN<T>; }                                     \
  };
QFUSE_HANDLER_OF(NotOf, bitNot)
QFUSE_HANDLER_OF(CnotOf, cnot)
QFUSE_HANDLER_OF(ShlOf, shl)
QFUSE_HANDLER_OF(ShrOf, shr)
QFUSE_HANDLER_OF(BfeOf, bfe)
QFUSE_HANDLER_OF(BfiOf, bfi)
QFUSE_HANDLER_OF(PopcOf, popc)
QFUSE_HANDLER_OF(ClzOf, clz)
QFUSE_HANDLER_OF(BrevOf, brev)
QFUSE_HANDLER_OF(MovOf, mov)
QFUSE_HANDLER_OF(SelpOf, selp)
template <int OP> struct LogicOf {
  template <class T> struct F {
    static Handler get() { return logic<T, OP>; }
  };
};

Decoded decodeMov(Decoder &d, const Statement &s, Ty t, Instr &in) {
  if (!d.count(s, 2))
    return Decoded::Error;
  const Operand &a = s.ops[0], &b = s.ops[1];
  if (b.kind == Operand::Vector || a.kind == Operand::Vector) {
    const Operand &vec = b.kind == Operand::Vector ? b : a;
    unsigned n = unsigned(vec.elems.size());
    if (n < 2 || n > 8 || tyBytes(t) % n)
      return Decoded::Error;
    in.vec = uint8_t(n);
    in.width = uint8_t(tyBytes(t) / n);
    if (b.kind == Operand::Vector) {
      in.fn = pack;
      in.op[0] = d.dst(a);
      for (unsigned i = 0; i < n; ++i)
        in.op[1 + i] = d.src(vec.elems[i], Ty::None);
    } else {
      in.fn = unpack;
      for (unsigned i = 0; i < n; ++i)
        in.op[i] = d.dst(vec.elems[i]);
      in.op[n] = d.src(b, t);
    }
    return d.error.empty() ? Decoded::Ok : Decoded::Error;
  }
  in.fn = t == Ty::Pred ? MovOf<uint8_t>::get() : sized<MovOf>(t);
  if (b.kind == Operand::Name &&
      (b.text == "%clock" || b.text == "%clock64" || b.text == "%globaltimer" ||
       b.text == "%clock_hi" || b.text == "%globaltimer_lo"))
    in.fn = readClock; // an increasing counter per worker
  in.op[0] = d.dst(a);
  in.op[1] = d.src(b, t);
  return in.fn && d.error.empty() ? Decoded::Ok : Decoded::Error;
}

} // namespace

Decoded decodeBits(Decoder &d, const Statement &s, const Parts &p,
                   Instr &in) {
  std::string_view op = p[0];
  Ty t = p.lastType();
  bool sign = tySigned(t);
  size_t n = 3;
  Handler h = nullptr;
  if (op == "mov")
    return decodeMov(d, s, t, in);
  if ((op == "and" || op == "or" || op == "xor") && t == Ty::Pred) {
    h = op == "and" ? predLogic<And> : op == "or" ? predLogic<Or> : predLogic<Xor>;
  } else if (op == "and") {
    h = sized<LogicOf<And>::F>(t);
  } else if (op == "or") {
    h = sized<LogicOf<Or>::F>(t);
  } else if (op == "xor") {
    h = sized<LogicOf<Xor>::F>(t);
  } else if (op == "not" || op == "cnot") {
    n = 2;
    h = t == Ty::Pred ? predNot : op == "not" ? sized<NotOf>(t) : sized<CnotOf>(t);
  } else if (op == "shl") {
    h = sized<ShlOf>(t);
  } else if (op == "shr") {
    h = sized<ShrOf>(t, sign);
  } else if (op == "shf") {
    n = 4;
    bool left = p.has("l"), wrap = p.has("wrap");
    h = left ? (wrap ? shf<true, true> : shf<true, false>)
             : (wrap ? shf<false, true> : shf<false, false>);
  } else if (op == "bfe") {
    n = 4;
    h = tyBytes(t) >= 4 ? sized<BfeOf>(t, sign) : nullptr;
  } else if (op == "bfi") {
    n = 5;
    h = tyBytes(t) >= 4 ? sized<BfiOf>(t) : nullptr;
  } else if (op == "prmt") {
    n = 4;
    h = prmt;
    static const char *modes[] = {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
    for (int m = 0; m < 6; ++m)
      if (p.has(modes[m]))
        in.mode = uint8_t(m + 1);
  } else if (op == "lop3" && s.ops.size() == 5) {
    n = 5;
    h = lop3;
  } else if (op == "popc" || op == "clz" || op == "brev") {
    n = 2;
    h = op == "popc" ? sized<PopcOf>(t)
        : op == "clz" ? sized<ClzOf>(t)
                      : sized<BrevOf>(t);
  } else if (op == "selp") {
    n = 4;
    h = sized<SelpOf>(t);
  } else {
    return Decoded::NotMine;
  }
  if (!h || !d.count(s, n))
    return Decoded::Error;
  in.fn = h;
  in.op[0] = d.dst(s.ops[0]);
  for (size_t i = 1; i < n; ++i) {
    // Shift amounts, bit positions and selectors are .u32.
    Ty ty = (op == "selp" && i == 3) ? Ty::Pred
            : (i >= 2 && (op == "shl" || op == "shr" || op == "bfe")) ||
                    (i >= 3 && (op == "bfi" || op == "prmt" || op == "shf"))
                ? Ty::U32
                : t;
    in.op[i] = d.src(s.ops[i], ty);
  }
  in.nops = uint8_t(n);
  return d.error.empty() ? Decoded::Ok : Decoded::Error;
}

} // namespace qfuse::sim::ptx
