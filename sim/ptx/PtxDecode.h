//===- PtxDecode.h - PTX statements to decoded instructions -----*- C++ -*-===//
//
// The decoder turns each statement into an Instr: operands become register
// slots (immediates and symbol addresses become constant slots), and the
// family decoders (one per Exec*.cpp) pick the handler for the opcode's
// modifiers and type.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_SIM_PTX_PTXDECODE_H
#define QFUSE_SIM_PTX_PTXDECODE_H

#include "PtxParser.h"

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace qfuse::sim::ptx {

enum class Ty : uint8_t {
  None, B8, B16, B32, B64, U8, U16, U32, U64, S8, S16, S32, S64,
  F16, F16x2, BF16, BF16x2, F32, F64, Pred, E4M3x2, E5M2x2, E2M1x2,
};
Ty parseType(std::string_view part);
unsigned tyBytes(Ty t);
inline bool tySigned(Ty t) {
  return t == Ty::S8 || t == Ty::S16 || t == Ty::S32 || t == Ty::S64;
}
inline bool tyFloat(Ty t) {
  return t == Ty::F16 || t == Ty::F16x2 || t == Ty::BF16 ||
         t == Ty::BF16x2 || t == Ty::F32 || t == Ty::F64;
}

/// An address-taken name: what `mov %rd, name` and `[name]` mean.
struct Symbol {
  enum Kind : uint8_t { Global, Shared, Param, Local } kind = Global;
  uint64_t value = 0; ///< host address, or offset in its space
};

/// The opcode split at '.': parts[0] is the operation.
/// Whether the PTX ISA has an instruction of this name (PtxOpcodes.cpp).
bool isPtxInstruction(std::string_view opcode);

struct Parts {
  std::vector<std::string_view> p;
  explicit Parts(std::string_view opcode);
  bool has(std::string_view s) const;
  size_t size() const { return p.size(); }
  std::string_view operator[](size_t i) const { return p[i]; }
  /// The last part that names a type, and the one before it (cvt's
  /// destination type), or Ty::None.
  Ty lastType() const;
  Ty typeAt(size_t fromEnd) const;
};

/// What a family decoder made of a statement: not of its family, decoded,
/// or an error (Decoder::error says which).
enum class Decoded { NotMine, Ok, Error };

class Decoder {
public:
  Decoder(const FunctionSyntax &syn, Function &fn,
          const std::map<std::string, Symbol, std::less<>> &symbols)
      : syn(syn), fn(fn), symbols(symbols) {}

  /// Decodes every statement into fn.code.
  bool decodeAll();
  std::string error;

  // Operand helpers for the family decoders; kNone (error set) on failure.
  uint32_t src(const Operand &op, Ty ty);
  uint32_t dst(const Operand &op);
  uint32_t constant(uint64_t bits);
  /// `[base+offset]`: op[k] = the base's slot, in.imm = the offset.
  bool address(const Operand &op, Instr &in, int k);
  bool fail(const std::string &what);
  /// The instruction index of label `name`, or kNone (error set).
  uint32_t label(std::string_view name);
  /// fn.jumpTables' index of .branchtargets list `name`, or kNone.
  uint32_t jumpTable(std::string_view name);
  /// Expects `n` operands.
  bool count(const Statement &s, size_t n);
  /// The usual end of a family decoder: `n` operands, a destination then
  /// sources of type `t`, run by `h` (null: the type is not supported).
  Decoded operands(const Statement &s, Instr &in, Handler h, size_t n, Ty t);

  const Statement *current = nullptr;

private:
  const FunctionSyntax &syn;
  Function &fn;
  const std::map<std::string, Symbol, std::less<>> &symbols;
  std::unordered_map<uint64_t, uint32_t> constants;
  std::map<Special, uint32_t> specials;
  uint32_t sinkSlot = kNone;

  uint32_t special(std::string_view name);
  bool decodeOne(const Statement &s, Instr &in);
};

using FamilyDecoder = Decoded (*)(Decoder &, const Statement &, const Parts &,
                                  Instr &);

// One per Exec*.cpp.
Decoded decodeInt(Decoder &, const Statement &, const Parts &, Instr &);
Decoded decodeBits(Decoder &, const Statement &, const Parts &, Instr &);
Decoded decodeCompare(Decoder &, const Statement &, const Parts &, Instr &);
Decoded decodeFloat(Decoder &, const Statement &, const Parts &, Instr &);
Decoded decodeCvt(Decoder &, const Statement &, const Parts &, Instr &);
Decoded decodeMemory(Decoder &, const Statement &, const Parts &, Instr &);
Decoded decodeSync(Decoder &, const Statement &, const Parts &, Instr &);
Decoded decodeWarp(Decoder &, const Statement &, const Parts &, Instr &);
Decoded decodeMma(Decoder &, const Statement &, const Parts &, Instr &);
Decoded decodeControl(Decoder &, const Statement &, const Parts &, Instr &);

} // namespace qfuse::sim::ptx

#endif // QFUSE_SIM_PTX_PTXDECODE_H
