//===- PtxInstruction.h - PTX decoded for the interpreter -------*- C++ -*-===//
//
// The decoded form of a PTX function: instructions whose operands are all
// slots of one flat per-thread register array (declared registers, then
// special registers, then constants: an immediate is a slot holding it, so
// every handler reads its sources the same way), each with the handler that
// runs it. Control (branches, barriers, warp collectives) is a small enum the
// interpreter's loop switches on.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_SIM_PTX_PTXINSTRUCTION_H
#define QFUSE_SIM_PTX_PTXINSTRUCTION_H

#include "qfuse/sim/Ptx.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qfuse::sim::ptx {

struct Exec;
struct Instr;
struct Thread;

/// A per-thread instruction: false (with Exec::error set) fails the launch.
using Handler = bool (*)(Exec &, const Instr &);
/// A warp collective, run once every lane of `mask` has reached it.
using Collective = bool (*)(Exec &, Thread *const *lanes, uint32_t mask,
                            const Instr &);

/// What the interpreter's loop does with an instruction.
enum class Ctl : uint8_t {
  Simple,       ///< run `fn`, go on
  Bra,          ///< pc = target
  BraIdx,       ///< brx.idx: pc = jumpTables[aux][op[0]]
  Exit,         ///< the thread ends
  Bar,          ///< bar.sync: op[0] barrier id, op[1] count (kNone: all)
  BarArrive,    ///< bar.arrive
  Warp,         ///< warp collective: `coll`, member mask in op[kMaskOp]
  ClusterArrive,
  ClusterWait,
  MbarTryWait,  ///< `fn` sets op[0]; when false the thread waits for an arrive
  Yield,        ///< nanosleep: let the others run
  Trap,
  Unsupported,  ///< decoded but not simulated: fails when executed
};

/// PTX state spaces of a memory access.
enum class Space : uint8_t { Generic, Global, Shared, Cluster, Param, Local, Const };

inline constexpr uint32_t kNone = ~0u;
inline constexpr int kMaxOps = 20;

/// Generic addresses of the shared and local windows: above every user-space
/// host pointer, so a generic access can tell them from global memory.
inline constexpr uint64_t kSharedWindow = 0xFF00000000000000ull;
inline constexpr uint64_t kLocalWindow = 0xFE00000000000000ull;
inline constexpr uint64_t kWindowMask = 0xFF00000000000000ull;
/// A .shared::cluster address: the CTA rank + 1 above bit 24 (0: this CTA),
/// the shared offset below.
inline constexpr unsigned kRankShift = 24;
inline constexpr uint32_t kOffsetMask = (1u << kRankShift) - 1;

struct Instr {
  Handler fn = nullptr;
  Collective coll = nullptr;
  Ctl ctl = Ctl::Simple;
  Space space = Space::Generic;
  uint8_t nops = 0;
  bool guardNeg = false;
  uint8_t width = 0;   ///< access bytes per element, or a type code
  uint8_t vec = 1;     ///< elements of a vector access
  uint8_t mode = 0;    ///< op-specific (rounding, compare, shuffle mode, ...)
  uint8_t flags = 0;   ///< op-specific
  uint32_t guard = kNone;
  uint32_t line = 0;
  uint32_t target = 0; ///< branch target (instruction index)
  uint32_t aux = 0;    ///< op-specific
  int64_t imm = 0;     ///< address offset, or op-specific immediate
  uint32_t op[kMaxOps] = {};
  uint32_t text = 0;   ///< index of the opcode in Function::opcodes
};

/// A special register's value, filled in per thread at launch.
enum class Special : uint8_t {
  TidX, TidY, TidZ, NtidX, NtidY, NtidZ, CtaidX, CtaidY, CtaidZ,
  NctaidX, NctaidY, NctaidZ, LaneId, WarpId, NWarpId, ClusterCtaRank,
  ClusterNCtaRank, ClusterIdX, ClusterIdY, ClusterIdZ, NClusterIdX,
  NClusterIdY, NClusterIdZ, ClusterCtaIdX, ClusterCtaIdY, ClusterCtaIdZ,
  ClusterNCtaIdX, ClusterNCtaIdY, ClusterNCtaIdZ, DynamicSmem, TotalSmem,
  SmId, NSmId, GridId, Clock, Clock64, GlobalTimer, LaneMaskEq, LaneMaskLt,
  LaneMaskLe, LaneMaskGt, LaneMaskGe,
};

/// A decoded `.entry` (or `.func`).
struct Function {
  KernelInfo info;
  bool isEntry = false;
  std::vector<Instr> code;
  std::vector<std::string> opcodes; ///< distinct opcode spellings, for errors
  std::vector<std::vector<uint32_t>> jumpTables; ///< brx.idx's targets
  uint32_t numSlots = 0;
  uint32_t numRegs = 0;             ///< slots [0, numRegs) are registers
  std::vector<std::pair<uint32_t, uint64_t>> constants;
  std::vector<std::pair<uint32_t, Special>> specials;
  uint32_t localBytes = 0;
  uint32_t staticSharedBytes = 0;
  uint32_t dynamicSharedAlign = 16;
  uint32_t reqCluster[3] = {0, 0, 0}; ///< .reqnctapercluster, 0: none
};

} // namespace qfuse::sim::ptx

#endif // QFUSE_SIM_PTX_PTXINSTRUCTION_H
