//===- PtxParser.h - PTX tokens to declarations and statements --*- C++ -*-===//
//
// The syntax of a module, before any instruction is decoded: module-scope
// variables, and for each function its parameters, performance directives,
// registers (by brace scope), labels and instruction statements.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_SIM_PTX_PTXPARSER_H
#define QFUSE_SIM_PTX_PTXPARSER_H

#include "PtxInstruction.h"
#include "PtxLexer.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::sim::ptx {

struct Operand {
  enum Kind : uint8_t { Name, Number, Address, Vector, Sink };
  Kind kind = Name;
  bool negated = false;    ///< !%p
  std::string_view text;   ///< Name, Number; Address: the base (may be empty)
  int64_t offset = 0;      ///< Address
  std::vector<Operand> elems; ///< Vector
};

struct Statement {
  std::string_view opcode;
  std::string_view guard; ///< empty: unguarded
  bool guardNeg = false;
  std::vector<Operand> ops;
  uint32_t line = 0;
  uint32_t scope = 0;
};

/// A variable: module scope (.global, .const, .shared) or function scope
/// (.shared, .local).
struct VarDecl {
  std::string name;
  Space space = Space::Global;
  uint32_t align = 1;
  uint32_t elemBytes = 1;
  uint64_t bytes = 0;
  bool isExtern = false;
  std::vector<uint8_t> init; ///< empty: zero
  uint32_t line = 0;
};

struct FunctionSyntax {
  std::string name;
  bool isEntry = false;
  uint32_t line = 0;
  std::vector<KernelParam> params;
  uint32_t paramBytes = 0;
  uint32_t maxntid[3] = {0, 0, 0};
  uint32_t reqntid[3] = {0, 0, 0};
  uint32_t reqCluster[3] = {0, 0, 0};
  std::vector<VarDecl> vars; ///< function-scope .shared and .local
  std::vector<Statement> statements;
  /// Registers and labels by brace scope; scope 0 is the body.
  struct RegRange {
    std::string prefix; ///< %r<195>: "%r", 195 registers from `base`
    uint32_t count, base;
  };
  struct Scope {
    uint32_t parent = kNone;
    std::vector<RegRange> ranges;
    std::map<std::string, uint32_t, std::less<>> regs;   ///< single names
    std::map<std::string, uint32_t, std::less<>> labels; ///< -> statement
    /// `L: .branchtargets A, B, ...;` (brx.idx's table): L -> A, B, ...
    std::map<std::string, std::vector<std::string>, std::less<>> targetLists;
  };
  std::vector<Scope> scopes;
  uint32_t numRegs = 0;
  /// Every identifier the body names (to lay out the shared it reaches).
  std::vector<std::string_view> names;
};

struct ModuleSyntax {
  std::vector<VarDecl> vars;
  std::vector<FunctionSyntax> functions;
};

/// Parses a whole module's tokens. Returns false with `error` naming the
/// line on a syntax error.
bool parsePtx(const std::vector<Token> &tokens, ModuleSyntax &module,
              std::string &error);

/// The register `name` as seen from `scope`, or kNone.
uint32_t lookupRegister(const FunctionSyntax &fn, uint32_t scope,
                        std::string_view name);
/// The label `name` as seen from `scope` (statement index), or kNone.
uint32_t lookupLabel(const FunctionSyntax &fn, uint32_t scope,
                     std::string_view name);
/// The .branchtargets list `name` as seen from `scope`, or null.
const std::vector<std::string> *lookupTargetList(const FunctionSyntax &fn,
                                                 uint32_t scope,
                                                 std::string_view name);

/// A PTX numeric literal: integers (decimal, 0x, 0b, octal, U suffix),
/// 0fXXXXXXXX (f32 bits), 0dXXXXXXXXXXXXXXXX (f64 bits), decimal floats.
struct Number {
  enum Kind : uint8_t { Int, F32Bits, F64Bits, Float } kind = Int;
  uint64_t bits = 0; ///< Int, F32Bits, F64Bits
  double value = 0;  ///< Float
};
bool parseNumber(std::string_view text, bool negative, Number &out);

} // namespace qfuse::sim::ptx

#endif // QFUSE_SIM_PTX_PTXPARSER_H
