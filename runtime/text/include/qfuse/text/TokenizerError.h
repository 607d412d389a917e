//===- TokenizerError.h - The error every tokenizer failure throws -*- C++ -*-===//
//
// Messages say what was wrong and where: the file, the JSON key, the type
// or pattern that is not supported, the token id that is out of range.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_TOKENIZERERROR_H
#define QFUSE_TEXT_TOKENIZERERROR_H

#include <stdexcept>
#include <string>

namespace qfuse::text {

class TokenizerError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace qfuse::text

#endif // QFUSE_TEXT_TOKENIZERERROR_H
