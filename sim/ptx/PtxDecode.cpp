//===- PtxDecode.cpp - PTX statements to decoded instructions -------------===//

#include "PtxDecode.h"
#include "qfuse/sim/Half.h"

#include <algorithm>
#include <cstring>

namespace qfuse::sim::ptx {

Ty parseType(std::string_view t) {
  static const std::pair<std::string_view, Ty> table[] = {
      {"b8", Ty::B8},         {"b16", Ty::B16},       {"b32", Ty::B32},
      {"b64", Ty::B64},       {"u8", Ty::U8},         {"u16", Ty::U16},
      {"u32", Ty::U32},       {"u64", Ty::U64},       {"s8", Ty::S8},
      {"s16", Ty::S16},       {"s32", Ty::S32},       {"s64", Ty::S64},
      {"f16", Ty::F16},       {"f16x2", Ty::F16x2},   {"bf16", Ty::BF16},
      {"bf16x2", Ty::BF16x2}, {"f32", Ty::F32},       {"f64", Ty::F64},
      {"pred", Ty::Pred},     {"e4m3x2", Ty::E4M3x2}, {"e5m2x2", Ty::E5M2x2},
      {"e2m1x2", Ty::E2M1x2},
  };
  for (const auto &[name, ty] : table)
    if (name == t)
      return ty;
  return Ty::None;
}

unsigned tyBytes(Ty t) {
  switch (t) {
  case Ty::B8: case Ty::U8: case Ty::S8: case Ty::Pred: case Ty::E2M1x2:
    return 1;
  case Ty::B16: case Ty::U16: case Ty::S16: case Ty::F16: case Ty::BF16:
  case Ty::E4M3x2: case Ty::E5M2x2:
    return 2;
  case Ty::B32: case Ty::U32: case Ty::S32: case Ty::F32: case Ty::F16x2:
  case Ty::BF16x2:
    return 4;
  case Ty::B64: case Ty::U64: case Ty::S64: case Ty::F64:
    return 8;
  case Ty::None:
    return 0;
  }
  return 0;
}

Parts::Parts(std::string_view opcode) {
  size_t start = 0;
  for (size_t i = 0; i <= opcode.size(); ++i)
    if (i == opcode.size() || opcode[i] == '.') {
      p.push_back(opcode.substr(start, i - start));
      start = i + 1;
    }
}

bool Parts::has(std::string_view s) const {
  for (size_t i = 1; i < p.size(); ++i)
    if (p[i] == s)
      return true;
  return false;
}

Ty Parts::lastType() const { return typeAt(0); }

Ty Parts::typeAt(size_t fromEnd) const {
  size_t seen = 0;
  for (size_t i = p.size(); i-- > 1;) {
    Ty t = parseType(p[i]);
    if (t != Ty::None && seen++ == fromEnd)
      return t;
  }
  return Ty::None;
}

bool Decoder::fail(const std::string &what) {
  if (error.empty())
    error = "line " + std::to_string(current ? current->line : 0) + ": " +
            what + (current ? " in '" + std::string(current->opcode) + "'"
                            : std::string());
  return false;
}

bool Decoder::count(const Statement &s, size_t n) {
  if (s.ops.size() == n)
    return true;
  return fail("expected " + std::to_string(n) + " operands, got " +
              std::to_string(s.ops.size()));
}

uint32_t Decoder::constant(uint64_t bits) {
  auto it = constants.find(bits);
  if (it != constants.end())
    return it->second;
  uint32_t slot = fn.numSlots++;
  fn.constants.push_back({slot, bits});
  constants.emplace(bits, slot);
  return slot;
}

uint32_t Decoder::special(std::string_view name) {
  static const std::pair<std::string_view, Special> table[] = {
      {"%tid.x", Special::TidX}, {"%tid.y", Special::TidY},
      {"%tid.z", Special::TidZ}, {"%ntid.x", Special::NtidX},
      {"%ntid.y", Special::NtidY}, {"%ntid.z", Special::NtidZ},
      {"%ctaid.x", Special::CtaidX}, {"%ctaid.y", Special::CtaidY},
      {"%ctaid.z", Special::CtaidZ}, {"%nctaid.x", Special::NctaidX},
      {"%nctaid.y", Special::NctaidY}, {"%nctaid.z", Special::NctaidZ},
      {"%laneid", Special::LaneId}, {"%warpid", Special::WarpId},
      {"%nwarpid", Special::NWarpId},
      {"%cluster_ctarank", Special::ClusterCtaRank},
      {"%cluster_nctarank", Special::ClusterNCtaRank},
      {"%clusterid.x", Special::ClusterIdX},
      {"%clusterid.y", Special::ClusterIdY},
      {"%clusterid.z", Special::ClusterIdZ},
      {"%nclusterid.x", Special::NClusterIdX},
      {"%nclusterid.y", Special::NClusterIdY},
      {"%nclusterid.z", Special::NClusterIdZ},
      {"%cluster_ctaid.x", Special::ClusterCtaIdX},
      {"%cluster_ctaid.y", Special::ClusterCtaIdY},
      {"%cluster_ctaid.z", Special::ClusterCtaIdZ},
      {"%cluster_nctaid.x", Special::ClusterNCtaIdX},
      {"%cluster_nctaid.y", Special::ClusterNCtaIdY},
      {"%cluster_nctaid.z", Special::ClusterNCtaIdZ},
      {"%dynamic_smem_size", Special::DynamicSmem},
      {"%total_smem_size", Special::TotalSmem}, {"%smid", Special::SmId},
      {"%nsmid", Special::NSmId}, {"%gridid", Special::GridId},
      {"%clock", Special::Clock}, {"%clock64", Special::Clock64},
      {"%globaltimer", Special::GlobalTimer},
      {"%lanemask_eq", Special::LaneMaskEq},
      {"%lanemask_lt", Special::LaneMaskLt},
      {"%lanemask_le", Special::LaneMaskLe},
      {"%lanemask_gt", Special::LaneMaskGt},
      {"%lanemask_ge", Special::LaneMaskGe},
  };
  for (const auto &[text, which] : table) {
    if (text != name)
      continue;
    auto it = specials.find(which);
    if (it != specials.end())
      return it->second;
    uint32_t slot = fn.numSlots++;
    fn.specials.push_back({slot, which});
    specials.emplace(which, slot);
    return slot;
  }
  return kNone;
}

uint32_t Decoder::src(const Operand &op, Ty ty) {
  if (op.kind == Operand::Number) {
    Number n;
    if (!parseNumber(op.text, op.negated, n)) {
      fail("bad number '" + std::string(op.text) + "'");
      return kNone;
    }
    uint64_t bits = n.bits;
    double value = n.kind == Number::Float     ? n.value
                   : n.kind == Number::F32Bits ? double(floatOf(uint32_t(n.bits)))
                   : n.kind == Number::F64Bits ? doubleOf(n.bits)
                                               : 0.0;
    if (n.kind != Number::Int) {
      if (ty == Ty::F64)
        bits = bitsOf(value);
      else if (ty == Ty::F16)
        bits = halfFromDouble(value);
      else if (ty == Ty::BF16)
        bits = bf16FromDouble(value);
      else if (n.kind == Number::F64Bits && ty != Ty::B64 && ty != Ty::U64 &&
               ty != Ty::S64)
        bits = bitsOf(float(value));
      else if (n.kind == Number::Float)
        bits = bitsOf(float(value));
    } else if (ty == Ty::F32) {
      bits = op.text.size() > 2 && (op.text[1] == 'x' || op.text[1] == 'X')
                 ? bits // hex bit patterns stay bits
                 : bitsOf(float(int64_t(bits)));
    } else if (ty == Ty::F64) {
      bits = bitsOf(double(int64_t(bits)));
    }
    return constant(bits);
  }
  if (op.kind == Operand::Sink || op.kind != Operand::Name) {
    fail("expected a register or immediate");
    return kNone;
  }
  uint32_t r = lookupRegister(syn, current->scope, op.text);
  if (r != kNone)
    return r;
  if (op.text[0] == '%') {
    r = special(op.text);
    if (r != kNone)
      return r;
  }
  auto it = symbols.find(op.text);
  if (it != symbols.end())
    return constant(it->second.value);
  fail("unknown name '" + std::string(op.text) + "'");
  return kNone;
}

uint32_t Decoder::dst(const Operand &op) {
  if (op.kind == Operand::Sink) {
    if (sinkSlot == kNone)
      sinkSlot = fn.numSlots++;
    return sinkSlot;
  }
  if (op.kind != Operand::Name) {
    fail("expected a destination register");
    return kNone;
  }
  uint32_t r = lookupRegister(syn, current->scope, op.text);
  if (r == kNone)
    fail("unknown register '" + std::string(op.text) + "'");
  return r;
}

bool Decoder::address(const Operand &op, Instr &in, int k) {
  if (op.kind != Operand::Address)
    return fail("expected an address");
  in.imm = op.offset;
  if (op.text.empty()) {
    in.op[k] = constant(0);
    return true;
  }
  uint32_t r = lookupRegister(syn, current->scope, op.text);
  if (r != kNone) {
    in.op[k] = r;
    return true;
  }
  auto it = symbols.find(op.text);
  if (it == symbols.end())
    return fail("unknown address '" + std::string(op.text) + "'");
  in.op[k] = constant(it->second.value);
  return true;
}

uint32_t Decoder::label(std::string_view name) {
  uint32_t target = lookupLabel(syn, current->scope, name);
  if (target == kNone)
    fail("unknown label '" + std::string(name) + "'");
  return target;
}

uint32_t Decoder::jumpTable(std::string_view name) {
  const std::vector<std::string> *list =
      lookupTargetList(syn, current->scope, name);
  if (!list) {
    fail("unknown .branchtargets list '" + std::string(name) + "'");
    return kNone;
  }
  std::vector<uint32_t> table;
  for (const std::string &target : *list)
    if (table.emplace_back(label(target)) == kNone)
      return kNone;
  fn.jumpTables.push_back(std::move(table));
  return uint32_t(fn.jumpTables.size() - 1);
}

bool Decoder::decodeOne(const Statement &s, Instr &in) {
  current = &s;
  in.line = s.line;
  std::string text(s.opcode);
  auto found = std::find(fn.opcodes.begin(), fn.opcodes.end(), text);
  in.text = uint32_t(found - fn.opcodes.begin());
  if (found == fn.opcodes.end())
    fn.opcodes.push_back(text);
  if (!s.guard.empty()) {
    in.guard = lookupRegister(syn, s.scope, s.guard);
    if (in.guard == kNone)
      return fail("unknown guard '" + std::string(s.guard) + "'");
    in.guardNeg = s.guardNeg;
  }
  Parts parts(s.opcode);
  static const FamilyDecoder families[] = {
      decodeControl, decodeInt,  decodeBits, decodeCompare, decodeFloat,
      decodeCvt,     decodeMemory, decodeSync, decodeWarp,  decodeMma};
  for (FamilyDecoder family : families) {
    Decoded d = family(*this, s, parts, in);
    if (d == Decoded::Ok)
      return true;
    if (d == Decoded::Error)
      return fail("cannot decode");
  }
  if (!isPtxInstruction(s.opcode))
    return fail("unknown instruction '" + std::string(s.opcode) + "'");
  in.ctl = Ctl::Unsupported;
  return true;
}

Decoded Decoder::operands(const Statement &s, Instr &in, Handler h, size_t n,
                          Ty t) {
  if (!h || !count(s, n))
    return Decoded::Error;
  in.fn = h;
  in.op[0] = dst(s.ops[0]);
  for (size_t i = 1; i < n; ++i)
    in.op[i] = src(s.ops[i], t);
  in.nops = uint8_t(n);
  return error.empty() ? Decoded::Ok : Decoded::Error;
}

bool Decoder::decodeAll() {
  fn.numRegs = syn.numRegs;
  fn.numSlots = syn.numRegs;
  fn.code.resize(syn.statements.size() + 1);
  for (size_t i = 0; i < syn.statements.size(); ++i)
    if (!decodeOne(syn.statements[i], fn.code[i]))
      return false;
  // Falling off the end of the body returns.
  Instr &last = fn.code.back();
  last.ctl = Ctl::Exit;
  last.line = syn.statements.empty() ? syn.line : syn.statements.back().line;
  fn.opcodes.push_back("ret");
  last.text = uint32_t(fn.opcodes.size() - 1);
  return true;
}

/// Branches, exits, and the instructions the simulator runs as no-ops or
/// does not run at all.
Decoded decodeControl(Decoder &d, const Statement &s, const Parts &p,
                      Instr &in) {
  std::string_view op = p[0];
  if (op == "brx") {
    if (!p.has("idx") || s.ops.size() != 2 || s.ops[1].kind != Operand::Name)
      return Decoded::NotMine;
    in.ctl = Ctl::BraIdx;
    in.op[0] = d.src(s.ops[0], Ty::U32);
    in.aux = d.jumpTable(s.ops[1].text);
    return in.op[0] == kNone || in.aux == kNone ? Decoded::Error : Decoded::Ok;
  }
  if (op == "bra") {
    if (s.ops.size() != 1 || s.ops[0].kind != Operand::Name)
      return Decoded::NotMine;
    in.ctl = Ctl::Bra;
    in.target = d.label(s.ops[0].text);
    return in.target == kNone ? Decoded::Error : Decoded::Ok;
  }
  if (op == "exit" || op == "ret") {
    in.ctl = Ctl::Exit;
    return Decoded::Ok;
  }
  if (op == "trap" || op == "brkpt") {
    in.ctl = Ctl::Trap;
    return Decoded::Ok;
  }
  if (op == "nanosleep") {
    in.ctl = Ctl::Yield;
    return Decoded::Ok;
  }
  if (op == "fence" && p.has("proxy") && p.has("async"))
    return Decoded::NotMine; // sm_90a TMA / wgmma ordering: unsupported
  if (op == "fence" || op == "membar" || op == "griddepcontrol" ||
      op == "prefetch" || op == "prefetchu" || op == "pmevent" ||
      (op == "cp" && p.size() > 2 && p[1] == "async" &&
       (p[2] == "commit_group" || p[2] == "wait_group" ||
        p[2] == "wait_all")) ||
      // An L2 prefetch (--grid-dependency-prefetch) changes no state.
      (op == "cp" && p.size() > 3 && p[1] == "async" && p[2] == "bulk" &&
       p[3] == "prefetch")) {
    in.ctl = Ctl::Simple;
    in.fn = [](Exec &, const Instr &) { return true; };
    return Decoded::Ok;
  }
  return Decoded::NotMine;
}

} // namespace qfuse::sim::ptx
