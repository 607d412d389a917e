//===- PtxOpcodes.cpp - the instruction names of the PTX ISA --------------===//
//
// A module that names an instruction the PTX ISA does not have fails to
// load, as ptxas fails it; an instruction the ISA has but the simulator does
// not run (wgmma, ...) loads and fails the launch that reaches it.
//
//===----------------------------------------------------------------------===//

#include "PtxDecode.h"

#include <algorithm>
#include <array>

namespace qfuse::sim::ptx {

namespace {

// The first dot-separated part of every PTX ISA 8.x instruction, sorted.
constexpr std::array<std::string_view, 116> kInstructions = {
    "abs",        "activemask", "add",        "addc",       "alloca",
    "and",        "applypriority", "atom",    "bar",        "barrier",
    "bfe",        "bfi",        "bfind",      "bmsk",       "bra",
    "brev",       "brkpt",      "brx",        "call",       "clusterlaunchcontrol",
    "clz",        "cnot",       "copysign",   "cos",        "cp",
    "createpolicy", "cvt",      "cvta",       "discard",    "div",
    "dp2a",       "dp4a",       "elect",      "ex2",        "exit",
    "fence",      "fma",        "fns",        "getctarank", "griddepcontrol",
    "isspacep",   "istypeof",   "ld",         "ldmatrix",   "ldu",
    "lg2",        "lop3",       "mad",        "mad24",      "madc",
    "mapa",       "match",      "max",        "mbarrier",   "membar",
    "min",        "mma",        "mov",        "movmatrix",  "mul",
    "mul24",      "multimem",   "nanosleep",  "neg",        "not",
    "or",         "pmevent",    "popc",       "prefetch",   "prefetchu",
    "prmt",       "rcp",        "red",        "redux",      "rem",
    "ret",        "rsqrt",      "sad",        "selp",       "set",
    "setmaxnreg", "setp",       "shf",        "shfl",       "shl",
    "shr",        "sin",        "slct",       "sqrt",       "st",
    "stackrestore", "stacksave", "stmatrix",  "sub",        "subc",
    "suld",       "suq",        "sured",      "sust",       "szext",
    "tanh",       "tcgen05",    "tensormap",  "testp",      "tex",
    "tld4",       "trap",       "txq",        "vabsdiff",   "vabsdiff2",
    "vabsdiff4",  "vadd",       "vote",       "wgmma",      "wmma",
    "xor"};

} // namespace

bool isPtxInstruction(std::string_view opcode) {
  std::string_view base = opcode.substr(0, opcode.find('.'));
  return std::find(kInstructions.begin(), kInstructions.end(), base) !=
         kInstructions.end();
}

} // namespace qfuse::sim::ptx
