//===- ExecWarp.cpp - shfl, vote, redux, match, bar.warp.sync -------------===//
//
// Warp collectives run once every lane of the member mask has arrived (the
// interpreter parks each lane until then); each lane's operands come from
// its own registers and instruction, and every result is computed before
// any is written, as if the lanes ran in lock step.
//
//===----------------------------------------------------------------------===//

#include "Exec.h"
#include "PtxDecode.h"

namespace qfuse::sim::ptx {
namespace {

enum ShflMode : uint8_t { Up, Down, Bfly, Idx };

const Instr &instrOf(const Exec &x, const Thread *t) {
  return x.fn->code[t->pc];
}

// shfl.sync.mode.b32 d[|p], a, b, c, mask: op[0] d, op[1] a, op[2] b,
// op[3] c, op[4] p (kNone: none).
bool shfl(Exec &x, Thread *const *lanes, uint32_t mask, const Instr &) {
  uint32_t value[32], result[32];
  bool valid[32];
  for (int l = 0; l < 32; ++l)
    if (lanes[l] && (mask >> l & 1))
      value[l] = getAt<uint32_t>(lanes[l]->r, instrOf(x, lanes[l]).op[1]);
  for (int l = 0; l < 32; ++l) {
    if (!lanes[l] || !(mask >> l & 1))
      continue;
    const Instr &in = instrOf(x, lanes[l]);
    uint64_t *r = lanes[l]->r;
    int b = int(getAt<uint32_t>(r, in.op[2]) & 31);
    uint32_t c = getAt<uint32_t>(r, in.op[3]);
    int clamp = int(c & 31), seg = int((c >> 8) & 31);
    int maxLane = (l & seg) | (clamp & ~seg), minLane = l & seg;
    int j = l;
    bool p = false;
    switch (in.mode) {
    case Up: j = l - b; p = j >= maxLane; break;
    case Down: j = l + b; p = j <= maxLane; break;
    case Bfly: j = l ^ b; p = j <= maxLane; break;
    case Idx: j = minLane | (b & ~seg); p = j <= maxLane; break;
    }
    if (!p || j < 0 || j > 31)
      j = l;
    // A source outside the mask reads an undefined value: its own.
    result[l] = (lanes[j] && (mask >> j & 1)) ? value[j] : value[l];
    valid[l] = p;
  }
  for (int l = 0; l < 32; ++l) {
    if (!lanes[l] || !(mask >> l & 1))
      continue;
    const Instr &in = instrOf(x, lanes[l]);
    setAt<uint32_t>(lanes[l]->r, in.op[0], result[l]);
    if (in.op[4] != kNone)
      lanes[l]->r[in.op[4]] = valid[l];
  }
  return true;
}

enum VoteMode : uint8_t { All, Any, Uni, Ballot };

// vote.sync.mode d, {!}a, mask: op[0] d, op[1] a (aux: negated).
bool vote(Exec &x, Thread *const *lanes, uint32_t mask, const Instr &) {
  uint32_t ballot = 0;
  for (int l = 0; l < 32; ++l)
    if (lanes[l] && (mask >> l & 1)) {
      const Instr &in = instrOf(x, lanes[l]);
      bool v = (lanes[l]->r[in.op[1]] & 1) != (in.aux != 0);
      ballot |= uint32_t(v) << l;
    }
  for (int l = 0; l < 32; ++l) {
    if (!lanes[l] || !(mask >> l & 1))
      continue;
    const Instr &in = instrOf(x, lanes[l]);
    uint64_t r = in.mode == All   ? (ballot == mask)
                 : in.mode == Any ? (ballot != 0)
                 : in.mode == Uni ? (ballot == 0 || ballot == mask)
                                  : ballot;
    lanes[l]->r[in.op[0]] = r;
  }
  return true;
}

enum ReduxOp : uint8_t { RAdd, RMin, RMax, RAnd, ROr, RXor };

bool redux(Exec &x, Thread *const *lanes, uint32_t mask, const Instr &first) {
  bool sign = first.flags;
  int64_t acc = 0;
  bool any = false;
  for (int l = 0; l < 32; ++l) {
    if (!lanes[l] || !(mask >> l & 1))
      continue;
    const Instr &in = instrOf(x, lanes[l]);
    uint32_t u = getAt<uint32_t>(lanes[l]->r, in.op[1]);
    int64_t v = sign ? int64_t(int32_t(u)) : int64_t(u);
    if (!any) {
      acc = v;
      any = true;
      continue;
    }
    switch (first.mode) {
    case RAdd: acc += v; break;
    case RMin: acc = v < acc ? v : acc; break;
    case RMax: acc = v > acc ? v : acc; break;
    case RAnd: acc &= v; break;
    case ROr: acc |= v; break;
    case RXor: acc ^= v; break;
    }
  }
  for (int l = 0; l < 32; ++l)
    if (lanes[l] && (mask >> l & 1))
      setAt<uint32_t>(lanes[l]->r, instrOf(x, lanes[l]).op[0], uint32_t(acc));
  return true;
}

// match.sync.{any,all}.{b32,b64} d[|p], a, mask.
bool match(Exec &x, Thread *const *lanes, uint32_t mask, const Instr &first) {
  uint64_t v[32];
  for (int l = 0; l < 32; ++l)
    if (lanes[l] && (mask >> l & 1)) {
      v[l] = lanes[l]->r[instrOf(x, lanes[l]).op[1]];
      if (first.width == 4)
        v[l] &= 0xffffffffull;
    }
  for (int l = 0; l < 32; ++l) {
    if (!lanes[l] || !(mask >> l & 1))
      continue;
    uint32_t same = 0;
    for (int k = 0; k < 32; ++k)
      if (lanes[k] && (mask >> k & 1) && v[k] == v[l])
        same |= 1u << k;
    const Instr &in = instrOf(x, lanes[l]);
    bool all = same == mask;
    lanes[l]->r[in.op[0]] = first.mode ? (all ? mask : 0) : same;
    if (in.op[4] != kNone)
      lanes[l]->r[in.op[4]] = all;
  }
  return true;
}

bool warpSync(Exec &, Thread *const *, uint32_t, const Instr &) { return true; }

/// d or d|p: the destination and the predicate (kNone).
void destAndPred(Decoder &d, const Operand &o, Instr &in) {
  in.op[0] = d.dst(o);
  in.op[4] = o.elems.empty() ? kNone : d.dst(o.elems[0]);
}

} // namespace

Decoded decodeWarp(Decoder &d, const Statement &s, const Parts &p,
                   Instr &in) {
  std::string_view op = p[0];
  in.ctl = Ctl::Warp;
  if (op == "shfl") {
    if (!p.has("sync") || !d.count(s, 5))
      return Decoded::Error;
    in.coll = shfl;
    in.mode = p.has("up") ? Up : p.has("down") ? Down : p.has("bfly") ? Bfly : Idx;
    destAndPred(d, s.ops[0], in);
    for (int i = 1; i < 4; ++i)
      in.op[i] = d.src(s.ops[i], Ty::B32);
    in.target = d.src(s.ops[4], Ty::B32);
  } else if (op == "vote") {
    if (!d.count(s, 3))
      return Decoded::Error;
    in.coll = vote;
    in.mode = p.has("all") ? All : p.has("any") ? Any : p.has("uni") ? Uni : Ballot;
    in.op[0] = d.dst(s.ops[0]);
    in.op[1] = d.src(s.ops[1], Ty::Pred);
    in.aux = s.ops[1].negated;
    in.target = d.src(s.ops[2], Ty::B32);
  } else if (op == "redux") {
    if (!d.count(s, 3))
      return Decoded::Error;
    in.coll = redux;
    in.mode = p.has("add") ? RAdd : p.has("min") ? RMin : p.has("max") ? RMax
              : p.has("and") ? RAnd : p.has("or") ? ROr : RXor;
    in.flags = p.lastType() == Ty::S32;
    in.op[0] = d.dst(s.ops[0]);
    in.op[1] = d.src(s.ops[1], Ty::B32);
    in.target = d.src(s.ops[2], Ty::B32);
  } else if (op == "match") {
    if (!d.count(s, 3))
      return Decoded::Error;
    in.coll = match;
    in.mode = p.has("all");
    in.width = uint8_t(tyBytes(p.lastType()));
    destAndPred(d, s.ops[0], in);
    in.op[1] = d.src(s.ops[1], p.lastType());
    in.target = d.src(s.ops[2], Ty::B32);
  } else if (op == "bar" && p.has("warp") && p.has("sync")) {
    if (!d.count(s, 1))
      return Decoded::Error;
    in.coll = warpSync;
    in.target = d.src(s.ops[0], Ty::B32);
  } else {
    in.ctl = Ctl::Simple;
    return Decoded::NotMine;
  }
  return d.error.empty() ? Decoded::Ok : Decoded::Error;
}

} // namespace qfuse::sim::ptx
