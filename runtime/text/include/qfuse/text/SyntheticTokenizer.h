//===- SyntheticTokenizer.h - A small real tokenizer for test models -*- C++ -*-===//
//
// A byte-level BPE tokenizer in Llama-3's form, built deterministically for
// a given vocabulary size, so that synthetic models (qfuse-synthetic-model)
// take text prompts and give text: ids 0-255 are the bytes, then merges
// learned from a built-in English text (most frequent pair first, ties by
// the pair's text), and the last five ids are Llama-3's special tokens
// <|begin_of_text|>, <|end_of_text|>, <|start_header_id|>,
// <|end_header_id|> and <|eot_id|>. tokenizer_config.json carries BOS/EOS
// and Llama-3's chat template; generation_config.json the stop ids.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_SYNTHETICTOKENIZER_H
#define QFUSE_TEXT_SYNTHETICTOKENIZER_H

#include <cstdint>
#include <string>

namespace qfuse::text {

/// Writes DIR/tokenizer.json, DIR/tokenizer_config.json and
/// DIR/generation_config.json for a `vocabSize`-token model. Throws
/// TokenizerError when `vocabSize` is below 262 or above what the built-in
/// text's merges can fill, and naming the file when it cannot be written.
void writeSyntheticTokenizer(const std::string &dir, int64_t vocabSize);

} // namespace qfuse::text

#endif // QFUSE_TEXT_SYNTHETICTOKENIZER_H
