//===- ExecInt.cpp - integer arithmetic -----------------------------------===//
//
// add, sub, mul (.lo .hi .wide), mad, div, rem, min, max, abs, neg and
// .sat for 16-, 32- and 64-bit integers. Overflow wraps (computed unsigned);
// division by zero and INT_MIN / -1 give what the hardware gives instead of
// trapping the host.
//
//===----------------------------------------------------------------------===//

#include "Exec.h"
#include "PtxDecode.h"

#include <limits>
#include <type_traits>

namespace qfuse::sim::ptx {
namespace {

enum IntOp { Add, Sub, MulLo, MulHi, Min, Max, Div, Rem, AddSat, SubSat };

template <class T> struct Wide;
template <> struct Wide<int16_t> { using type = int32_t; };
template <> struct Wide<uint16_t> { using type = uint32_t; };
template <> struct Wide<int32_t> { using type = int64_t; };
template <> struct Wide<uint32_t> { using type = uint64_t; };
template <> struct Wide<int64_t> { using type = __int128; };
template <> struct Wide<uint64_t> { using type = unsigned __int128; };

template <class T, int OP> T binary(T a, T b) {
  using U = std::make_unsigned_t<T>;
  using W = typename Wide<T>::type;
  if constexpr (OP == Add)
    return T(U(a) + U(b));
  else if constexpr (OP == Sub)
    return T(U(a) - U(b));
  else if constexpr (OP == MulLo)
    return T(U(a) * U(b));
  else if constexpr (OP == MulHi)
    return T(W(a) * W(b) >> (8 * sizeof(T)));
  else if constexpr (OP == Min)
    return a < b ? a : b;
  else if constexpr (OP == Max)
    return a > b ? a : b;
  else if constexpr (OP == Div) {
    if (b == 0)
      return T(-1);
    if (std::is_signed_v<T> && b == T(-1))
      return T(U(0) - U(a));
    return T(a / b);
  } else if constexpr (OP == Rem) {
    if (b == 0)
      return a;
    if (std::is_signed_v<T> && b == T(-1))
      return 0;
    return T(a % b);
  } else {
    W r = OP == AddSat ? W(a) + W(b) : W(a) - W(b);
    if (r > W(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    if (r < W(std::numeric_limits<T>::min()))
      return std::numeric_limits<T>::min();
    return T(r);
  }
}

template <class T, int OP> bool intBin(Exec &x, const Instr &in) {
  set<T>(x, in.op[0], binary<T, OP>(get<T>(x, in.op[1]), get<T>(x, in.op[2])));
  return true;
}

// mad: a * b (lo or hi) + c.
template <class T, int OP> bool intMad(Exec &x, const Instr &in) {
  T p = binary<T, OP>(get<T>(x, in.op[1]), get<T>(x, in.op[2]));
  set<T>(x, in.op[0], binary<T, Add>(p, get<T>(x, in.op[3])));
  return true;
}

template <class T> bool mulWide(Exec &x, const Instr &in) {
  using W = typename Wide<T>::type;
  set<W>(x, in.op[0], W(get<T>(x, in.op[1])) * W(get<T>(x, in.op[2])));
  return true;
}

template <class T> bool madWide(Exec &x, const Instr &in) {
  using W = typename Wide<T>::type;
  using UW = std::make_unsigned_t<W>;
  W p = W(get<T>(x, in.op[1])) * W(get<T>(x, in.op[2]));
  set<W>(x, in.op[0], W(UW(p) + UW(get<W>(x, in.op[3]))));
  return true;
}

template <class T> bool intAbs(Exec &x, const Instr &in) {
  using U = std::make_unsigned_t<T>;
  T a = get<T>(x, in.op[1]);
  set<T>(x, in.op[0], a < 0 ? T(U(0) - U(a)) : a);
  return true;
}

template <class T> bool intNeg(Exec &x, const Instr &in) {
  using U = std::make_unsigned_t<T>;
  set<T>(x, in.op[0], T(U(0) - U(get<T>(x, in.op[1]))));
  return true;
}

template <template <class> class F> Handler byType(Ty t) {
  switch (t) {
  case Ty::S16: return F<int16_t>::get();
  case Ty::U16: case Ty::B16: return F<uint16_t>::get();
  case Ty::S32: return F<int32_t>::get();
  case Ty::U32: case Ty::B32: return F<uint32_t>::get();
  case Ty::S64: return F<int64_t>::get();
  case Ty::U64: case Ty::B64: return F<uint64_t>::get();
  default: return nullptr;
  }
}

template <int OP> struct BinOf {
  template <class T> struct F {
    static Handler get() { return intBin<T, OP>; }
  };
};
template <int OP> struct MadOf {
  template <class T> struct F {
    static Handler get() { return intMad<T, OP>; }
  };
};
template <class T> struct MulWideOf {
  static Handler get() { return mulWide<T>; }
};
template <> struct MulWideOf<int64_t> {
  static Handler get() { return nullptr; }
};
template <> struct MulWideOf<uint64_t> {
  static Handler get() { return nullptr; }
};
template <class T> struct MadWideOf {
  static Handler get() { return madWide<T>; }
};
template <> struct MadWideOf<int64_t> {
  static Handler get() { return nullptr; }
};
template <> struct MadWideOf<uint64_t> {
  static Handler get() { return nullptr; }
};
template <class T> struct AbsOf {
  static Handler get() {
    if constexpr (std::is_signed_v<T>)
      return intAbs<T>;
    return nullptr;
  }
};
template <class T> struct NegOf {
  static Handler get() { return intNeg<T>; }
};

bool isIntType(Ty t) {
  return t != Ty::None && !tyFloat(t) && t != Ty::Pred && tyBytes(t) >= 2 &&
         t != Ty::E4M3x2 && t != Ty::E5M2x2;
}

} // namespace

Decoded decodeInt(Decoder &d, const Statement &s, const Parts &p,
                  Instr &in) {
  std::string_view op = p[0];
  Ty t = p.lastType();
  if (!isIntType(t))
    return Decoded::NotMine;
  bool sat = p.has("sat");
  Handler h = nullptr;
  size_t n = 3;
  if (op == "add")
    h = sat ? byType<BinOf<AddSat>::F>(t) : byType<BinOf<Add>::F>(t);
  else if (op == "sub")
    h = sat ? byType<BinOf<SubSat>::F>(t) : byType<BinOf<Sub>::F>(t);
  else if (op == "min")
    h = byType<BinOf<Min>::F>(t);
  else if (op == "max")
    h = byType<BinOf<Max>::F>(t);
  else if (op == "div")
    h = byType<BinOf<Div>::F>(t);
  else if (op == "rem")
    h = byType<BinOf<Rem>::F>(t);
  else if (op == "mul" || op == "mul24")
    h = p.has("wide") ? byType<MulWideOf>(t)
        : p.has("hi") ? byType<BinOf<MulHi>::F>(t)
                      : byType<BinOf<MulLo>::F>(t);
  else if (op == "mad" || op == "mad24") {
    n = 4;
    h = p.has("wide") ? byType<MadWideOf>(t)
        : p.has("hi") ? byType<MadOf<MulHi>::F>(t)
                      : byType<MadOf<MulLo>::F>(t);
  } else if (op == "abs") {
    n = 2;
    h = byType<AbsOf>(t);
  } else if (op == "neg") {
    n = 2;
    h = byType<NegOf>(t);
  } else {
    return Decoded::NotMine;
  }
  return d.operands(s, in, h, n, t);
}

} // namespace qfuse::sim::ptx
