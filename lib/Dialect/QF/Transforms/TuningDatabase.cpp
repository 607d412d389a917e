//===- TuningDatabase.cpp - measured tilings per shape
//-----------------------===//
//
// Reads the JSON tuning database with llvm::json. Every way a file can be
// wrong (unreadable, not JSON, not an array, a missing or mistyped field, an
// encoding or tiling that does not parse, a repeated shape) is an error that
// names the file and the entry.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/TuningDatabase.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::qf;

namespace {
/// Parses `#qf.<kind><body>` and returns it as `AttrT`, or sets `error` to
/// the parser's message.
template <typename AttrT>
AttrT parseBody(StringRef kind, StringRef body, MLIRContext *context,
                std::string &error) {
  std::string text = ("#qf." + kind + "<" + body + ">").str();
  std::string message;
  Attribute attr;
  {
    // Keep the parser's diagnostics out of the user's output: they point
    // into a buffer of our making. Capture the first one for our message.
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    attr = parseAttribute(text, context);
  }
  auto typed = dyn_cast_or_null<AttrT>(attr);
  if (!typed)
    error = llvm::formatv("cannot parse \"{0}\" as {1}: {2}", body, text,
                          message.empty() ? "not a #qf." + kind.str() : message)
                .str();
  return typed;
}
} // namespace

FailureOr<TuningDatabase>
TuningDatabase::load(StringRef path, MLIRContext *context, std::string &error) {
  auto fail = [&](const Twine &message) -> FailureOr<TuningDatabase> {
    error = ("tuning database '" + path + "': " + message).str();
    return failure();
  };

  std::string openError;
  std::unique_ptr<llvm::MemoryBuffer> buffer = openInputFile(path, &openError);
  if (!buffer)
    return fail("cannot read: " + openError);

  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse(buffer->getBuffer());
  if (!json)
    return fail("invalid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Array *array = json->getAsArray();
  if (!array)
    return fail("expected a JSON array of {\"m\", \"n\", \"k\", "
                "\"encoding\", \"tiling\"} entries");

  TuningDatabase db;
  DenseMap<Key, size_t> firstIndex, firstArchIndex;
  for (auto [index, value] : llvm::enumerate(*array)) {
    std::string where = llvm::formatv("$[{0}]", index).str();
    const llvm::json::Object *entry = value.getAsObject();
    if (!entry)
      return fail(Twine(where) +
                  ": expected an object with \"m\", \"n\", \"k\", "
                  "\"encoding\" and \"tiling\"");
    for (const auto &field : *entry) {
      StringRef key = field.first;
      // `measured_us` records what bench/tune.py measured; informational.
      if (key != "m" && key != "n" && key != "k" && key != "encoding" &&
          key != "tiling" && key != "measured_us" && key != "chip")
        return fail(Twine(where) + ": unknown field \"" + key +
                    "\"; expected m, n, k, encoding, tiling (and optionally "
                    "measured_us, chip)");
    }

    static constexpr StringLiteral kDimFields[] = {"m", "n", "k"};
    int64_t dims[3];
    for (auto [i, field] : llvm::enumerate(kDimFields)) {
      std::optional<int64_t> dim = entry->getInteger(field);
      if (!dim || *dim <= 0)
        return fail(Twine(where) + "." + field +
                    ": expected a positive integer" +
                    (entry->get(field) ? "" : ", but the field is missing"));
      dims[i] = *dim;
    }

    std::optional<StringRef> encodingText = entry->getString("encoding");
    std::optional<StringRef> tilingText = entry->getString("tiling");
    if (!encodingText)
      return fail(Twine(where) +
                  ".encoding: expected a string, the body of "
                  "#qf.enc<...>, e.g. \"int4, group = 128, scale = "
                  "f16\"");
    if (!tilingText)
      return fail(Twine(where) +
                  ".tiling: expected a string, the body of "
                  "#qf.tiling<...>, e.g. \"matvec, block_n = 4\"");
    std::string parseError;
    auto encoding =
        parseBody<EncodingAttr>("enc", *encodingText, context, parseError);
    if (!encoding)
      return fail(Twine(where) + ".encoding: " + parseError);
    auto tiling =
        parseBody<TilingAttr>("tiling", *tilingText, context, parseError);
    if (!tiling)
      return fail(Twine(where) + ".tiling: " + parseError);

    bool archSpecific = false;
    if (const llvm::json::Value *chip = entry->get("chip")) {
      std::optional<StringRef> name = chip->getAsString();
      if (!name || *name != "sm_90a")
        return fail(Twine(where) +
                    ".chip: expected \"sm_90a\" (the one target with "
                    "entries of its own)");
      archSpecific = true;
    }
    if (tiling.getKernel() == KernelKind::WGMMA && !archSpecific)
      return fail(Twine(where) + ": a wgmma tiling runs on sm_90a only; "
                                 "mark the entry \"chip\": \"sm_90a\"");
    Key key{dims[0], dims[1], dims[2], encoding};
    auto [it, inserted] =
        (archSpecific ? firstArchIndex : firstIndex).try_emplace(key, index);
    if (!inserted)
      return fail(llvm::formatv("{0}: repeats the shape of $[{1}] (m = {2}, "
                                "n = {3}, k = {4}, same encoding{5})",
                                where, it->second, dims[0], dims[1], dims[2],
                                archSpecific ? ", same chip" : "")
                      .str());
    (archSpecific ? db.archEntries : db.entries)[key] = tiling;
  }
  return db;
}

TilingAttr TuningDatabase::lookup(int64_t m, int64_t n, int64_t k,
                                  EncodingAttr encoding,
                                  bool archSpecific) const {
  Key key{m, n, k, encoding};
  if (archSpecific)
    if (TilingAttr tiling = archEntries.lookup(key))
      return tiling;
  return entries.lookup(key);
}
