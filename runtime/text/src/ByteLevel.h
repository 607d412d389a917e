//===- ByteLevel.h - GPT-2's byte <-> printable character map -*- C++ -*-===//
//
// Byte-level BPE runs on bytes shown as printable characters: the 188
// printable Latin-1 bytes stand for themselves, the other 68 (controls,
// space, soft hyphen...) for U+0100 onwards in byte order ("Ġ" is the space).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_BYTELEVEL_H
#define QFUSE_TEXT_BYTELEVEL_H

#include <optional>
#include <string>
#include <string_view>

namespace qfuse::text {

/// Appends the byte-level characters (UTF-8) of `bytes` to `out`.
void appendByteLevel(std::string &out, std::string_view bytes);
/// The bytes that the byte-level characters of `token` (UTF-8) stand for,
/// or nullopt when `token` holds a character outside the map.
std::optional<std::string> byteLevelToBytes(std::string_view token);

} // namespace qfuse::text

#endif // QFUSE_TEXT_BYTELEVEL_H
