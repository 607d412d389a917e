//===- FloatText.h - float literals exactly as MLIR prints them -*- C++ -*-===//
//
// Private to the library. printEncoding must print inline codebook tables
// byte for byte as the dialect printer does, so that encoding strings
// written by the compiler and by the runtime/Python compare equal (tuning
// databases and artifacts key on them). MLIR's printFloatValue uses
// llvm::APFloat::toString, which truncates before it rounds; this file
// reproduces that algorithm rather than printf's correct rounding.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_SRC_FLOATTEXT_H
#define QFUSE_FORMAT_SRC_FLOATTEXT_H

#include <cstdint>
#include <string>

namespace qfuse::format::detail {

/// llvm::APFloat::toString(Str, formatPrecision, formatMaxPadding,
/// truncateZero) for a finite `value` of a float type with
/// `precisionBits` significand bits (f16: 11, bf16: 8, f32: 24).
std::string apfloatToString(double value, unsigned precisionBits,
                            unsigned formatPrecision,
                            unsigned formatMaxPadding, bool truncateZero);

/// MLIR's printFloatValue: "%.6e"-like text from toString(6, 0, false) when
/// it reads back to the same value, else toString() if that has a '.', else
/// the bits in hex (0x7C00); non-finite values always in hex. `bits` is the
/// value's bit pattern; `readsBack` says whether a text parses to it.
std::string mlirFloatText(double value, unsigned precisionBits, uint64_t bits,
                          bool (*readsBack)(const char *text, uint64_t bits));

} // namespace qfuse::format::detail

#endif // QFUSE_FORMAT_SRC_FLOATTEXT_H
