//===- ExecCompare.cpp - setp -------------------------------------------===//
//
// setp.CmpOp[.BoolOp].type p, a, b[, c] for integers, f32, f64, f16 and bf16:
// the ordered float compares are false on NaN, the unordered (equ, ltu, ...)
// true; .and/.or/.xor fold in predicate c (which may be negated).
//
//===----------------------------------------------------------------------===//

#include "Exec.h"
#include "qfuse/sim/Half.h"
#include "PtxDecode.h"

#include <type_traits>

namespace qfuse::sim::ptx {
namespace {

enum Cmp : uint8_t {
  Eq, Ne, Lt, Le, Gt, Ge, Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan,
};
enum BoolOp : uint8_t { None, And, Or, Xor };

template <class T> bool compare(uint8_t cmp, T a, T b) {
  switch (cmp) {
  case Eq: return a == b;
  case Ne: // ordered: false on NaN, where C++'s != is true
    if constexpr (std::is_floating_point_v<T>)
      return a == a && b == b && a != b;
    else
      return a != b;
  case Lt: return a < b;
  case Le: return a <= b;
  case Gt: return a > b;
  case Ge: return a >= b;
  default: break;
  }
  // Floats only from here.
  bool unordered = a != a || b != b;
  switch (cmp) {
  case Equ: return unordered || a == b;
  case Neu: return unordered || a != b;
  case Ltu: return unordered || a < b;
  case Leu: return unordered || a <= b;
  case Gtu: return unordered || a > b;
  case Geu: return unordered || a >= b;
  case Num: return !unordered;
  case Nan: return unordered;
  }
  return false;
}

struct Half {};
struct BHalf {};

template <class T, class V> bool setp(Exec &x, const Instr &in) {
  V a, b;
  if constexpr (std::is_same_v<T, Half>) {
    a = halfToFloat(get<uint16_t>(x, in.op[1]));
    b = halfToFloat(get<uint16_t>(x, in.op[2]));
  } else if constexpr (std::is_same_v<T, BHalf>) {
    a = bf16ToFloat(get<uint16_t>(x, in.op[1]));
    b = bf16ToFloat(get<uint16_t>(x, in.op[2]));
  } else {
    a = get<T>(x, in.op[1]);
    b = get<T>(x, in.op[2]);
  }
  bool r = compare<V>(in.mode, a, b);
  if (in.flags != None) {
    bool c = (x.r[in.op[3]] & 1) != (in.aux != 0);
    r = in.flags == And ? (r && c) : in.flags == Or ? (r || c) : (r != c);
  }
  x.r[in.op[0]] = r;
  return true;
}

Handler pick(Ty t) {
  switch (t) {
  case Ty::S16: return setp<int16_t, int16_t>;
  case Ty::U16: case Ty::B16: return setp<uint16_t, uint16_t>;
  case Ty::S32: return setp<int32_t, int32_t>;
  case Ty::U32: case Ty::B32: return setp<uint32_t, uint32_t>;
  case Ty::S64: return setp<int64_t, int64_t>;
  case Ty::U64: case Ty::B64: return setp<uint64_t, uint64_t>;
  case Ty::F32: return setp<float, float>;
  case Ty::F64: return setp<double, double>;
  case Ty::F16: return setp<Half, float>;
  case Ty::BF16: return setp<BHalf, float>;
  default: return nullptr;
  }
}

} // namespace

Decoded decodeCompare(Decoder &d, const Statement &s, const Parts &p,
                      Instr &in) {
  if (p[0] != "setp")
    return Decoded::NotMine;
  static const std::pair<std::string_view, Cmp> cmps[] = {
      {"eq", Eq},   {"ne", Ne},   {"lt", Lt},   {"le", Le},   {"gt", Gt},
      {"ge", Ge},   {"lo", Lt},   {"ls", Le},   {"hi", Gt},   {"hs", Ge},
      {"equ", Equ}, {"neu", Neu}, {"ltu", Ltu}, {"leu", Leu}, {"gtu", Gtu},
      {"geu", Geu}, {"num", Num}, {"nan", Nan}};
  bool found = false;
  for (const auto &[name, c] : cmps)
    if (p.size() > 1 && p[1] == name) {
      in.mode = c;
      found = true;
    }
  if (p.has("and"))
    in.flags = And;
  else if (p.has("or"))
    in.flags = Or;
  else if (p.has("xor"))
    in.flags = Xor;
  Ty t = p.lastType();
  in.fn = pick(t);
  if (!found || !in.fn || !d.count(s, in.flags != None ? 4 : 3))
    return Decoded::Error;
  in.op[0] = d.dst(s.ops[0]);
  in.op[1] = d.src(s.ops[1], t);
  in.op[2] = d.src(s.ops[2], t);
  if (in.flags != None) {
    in.op[3] = d.src(s.ops[3], Ty::Pred);
    in.aux = s.ops[3].negated;
  }
  return d.error.empty() ? Decoded::Ok : Decoded::Error;
}

} // namespace qfuse::sim::ptx
