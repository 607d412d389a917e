//===- ExecSync.cpp - barriers and mbarriers -----------------------------===//
//
// bar.sync / barrier.sync and barrier.cluster are decoded here and run by
// the interpreter's scheduler. mbarrier objects live in shared memory as 64
// bits: pending arrivals (bits 0-20), expected arrivals (21-41), pending
// transaction bytes (42-62) and the phase parity (63). A phase completes
// when both pending counts reach zero; every arrive bumps the group's epoch,
// which wakes threads whose try_wait failed.
//
//===----------------------------------------------------------------------===//

#include "Exec.h"
#include "PtxDecode.h"

namespace qfuse::sim::ptx {
namespace {

constexpr uint64_t kCountMask = (1ull << 21) - 1;

struct Mbar {
  uint64_t pending, expected, tx, phase;
  explicit Mbar(uint64_t v)
      : pending(v & kCountMask), expected((v >> 21) & kCountMask),
        tx((v >> 42) & kCountMask), phase(v >> 63) {}
  uint64_t bits() const {
    return (pending & kCountMask) | (expected & kCountMask) << 21 |
           (tx & kCountMask) << 42 | phase << 63;
  }
  void completeIfDone() {
    if (pending == 0 && tx == 0) {
      phase ^= 1;
      pending = expected;
    }
  }
};

uint8_t *mbarAt(Exec &x, const Instr &in) {
  uint64_t a = x.r[in.op[1]] + uint64_t(in.imm);
  if (a & 7) {
    x.error = "misaligned mbarrier";
    return nullptr;
  }
  return x.memory(in.space, a, 8, true);
}

enum MbarOp : uint8_t { Init, Arrive, ArriveDrop, ExpectTx, CompleteTx, Inval };

// op[0] state dest (or kNone), op[1] address, op[2] count / tx operand.
bool mbarUpdate(Exec &x, const Instr &in) {
  uint8_t *p = mbarAt(x, in);
  if (!p)
    return false;
  uint64_t v;
  std::memcpy(&v, p, 8);
  uint64_t n = in.op[2] == kNone ? 1 : uint32_t(x.r[in.op[2]]);
  Mbar m(v);
  switch (in.mode) {
  case Init:
    m = Mbar(0);
    m.pending = m.expected = n;
    break;
  case Inval:
    m = Mbar(0);
    break;
  case ExpectTx:
    m.tx += n;
    break;
  case CompleteTx:
    m.tx -= n;
    m.completeIfDone();
    break;
  case Arrive:
  case ArriveDrop: {
    uint64_t count = n;
    if (in.flags) { // .expect_tx: the operand is a byte count, arrive once
      m.tx += n;
      count = 1;
    }
    if (in.mode == ArriveDrop)
      m.expected -= count;
    if (count > m.pending) {
      x.error = "mbarrier arrive with no pending arrivals left";
      return false;
    }
    m.pending -= count;
    m.completeIfDone();
    ++x.group->mbarEpoch;
    break;
  }
  }
  if (in.op[0] != kNone)
    x.r[in.op[0]] = v; // the state before: its phase is the one arrived on
  v = m.bits();
  std::memcpy(p, &v, 8);
  return true;
}

// test_wait / try_wait[.parity] p, [addr], state-or-parity.
bool mbarTest(Exec &x, const Instr &in) {
  uint8_t *p = mbarAt(x, in);
  if (!p)
    return false;
  uint64_t v;
  std::memcpy(&v, p, 8);
  uint64_t phase = v >> 63;
  uint64_t waited = in.flags ? (x.r[in.op[2]] & 1) : (x.r[in.op[2]] >> 63);
  x.r[in.op[0]] = phase != waited;
  return true;
}

// cp.async.mbarrier.arrive[.noinc] [addr]: the copies are done already, so
// it is an arrive now (.noinc) or nothing (the pending count goes up by
// one and down by one).
bool cpAsyncArrive(Exec &x, const Instr &in) {
  if (!in.flags)
    return mbarAt(x, in) != nullptr;
  return mbarUpdate(x, in);
}

Space sharedSpace(const Parts &p) {
  if (p.has("shared::cluster"))
    return Space::Cluster;
  if (p.has("shared") || p.has("shared::cta"))
    return Space::Shared;
  return Space::Generic;
}

Decoded decodeMbarrier(Decoder &d, const Statement &s, const Parts &p,
                       Instr &in) {
  in.space = sharedSpace(p);
  std::string_view what = p.size() > 1 ? p[1] : "";
  in.op[0] = in.op[2] = kNone;
  size_t k = 0;
  if (what == "test_wait" || what == "try_wait") {
    if (s.ops.size() < 3)
      return Decoded::Error;
    in.fn = mbarTest;
    in.flags = p.has("parity");
    in.ctl = what == "try_wait" ? Ctl::MbarTryWait : Ctl::Simple;
    in.op[0] = d.dst(s.ops[0]);
    if (!d.address(s.ops[1], in, 1))
      return Decoded::Error;
    in.op[2] = d.src(s.ops[2], Ty::B64); // a suspend-time hint may follow
    return d.error.empty() ? Decoded::Ok : Decoded::Error;
  }
  in.fn = mbarUpdate;
  if (what == "init") in.mode = Init;
  else if (what == "inval") in.mode = Inval;
  else if (what == "expect_tx") in.mode = ExpectTx;
  else if (what == "complete_tx") in.mode = CompleteTx;
  else if (what == "arrive") in.mode = Arrive;
  else if (what == "arrive_drop") in.mode = ArriveDrop;
  else return Decoded::Error;
  in.flags = (in.mode == Arrive || in.mode == ArriveDrop) && p.has("expect_tx");
  if ((in.mode == Arrive || in.mode == ArriveDrop) && !s.ops.empty() &&
      s.ops[0].kind != Operand::Address)
    in.op[0] = d.dst(s.ops[k++]);
  if (k >= s.ops.size() || !d.address(s.ops[k++], in, 1))
    return Decoded::Error;
  if (k < s.ops.size())
    in.op[2] = d.src(s.ops[k++], Ty::U32);
  return d.error.empty() ? Decoded::Ok : Decoded::Error;
}

Decoded decodeBar(Decoder &d, const Statement &s, const Parts &p, Instr &in) {
  // bar{.cta}.sync / .arrive, barrier{.cta}.sync{.aligned} / .arrive: id
  // (default 0) and an optional thread count.
  bool arrive = p.has("arrive");
  if (p.has("red") || p.has("warp"))
    return Decoded::NotMine;
  in.ctl = arrive ? Ctl::BarArrive : Ctl::Bar;
  in.op[0] = s.ops.empty() ? d.constant(0) : d.src(s.ops[0], Ty::U32);
  in.op[1] = s.ops.size() > 1 ? d.src(s.ops[1], Ty::U32) : kNone;
  return d.error.empty() ? Decoded::Ok : Decoded::Error;
}

} // namespace

Decoded decodeSync(Decoder &d, const Statement &s, const Parts &p,
                   Instr &in) {
  std::string_view op = p[0];
  if (op == "mbarrier")
    return decodeMbarrier(d, s, p, in);
  if (op == "cp" && p.size() > 2 && p[1] == "async" && p[2] == "mbarrier") {
    if (!d.count(s, 1) || !d.address(s.ops[0], in, 1))
      return Decoded::Error;
    in.space = sharedSpace(p);
    in.fn = cpAsyncArrive;
    in.mode = Arrive;
    in.flags = p.has("noinc");
    in.op[0] = in.op[2] = kNone;
    return Decoded::Ok;
  }
  if (op == "barrier" && p.size() > 1 && p[1] == "cluster") {
    if (p.has("arrive"))
      in.ctl = Ctl::ClusterArrive;
    else if (p.has("wait"))
      in.ctl = Ctl::ClusterWait;
    else
      return Decoded::Error;
    return Decoded::Ok;
  }
  if (op == "bar" || op == "barrier")
    return decodeBar(d, s, p, in);
  return Decoded::NotMine;
}

} // namespace qfuse::sim::ptx
