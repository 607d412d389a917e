//===- ArtifactVocabulary.cpp - IR values as the artifact spells them -----===//

#include "ArtifactVocabulary.h"

#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::qf;
namespace json = llvm::json;

/// The body of an attribute's full form: `#qf.enc<int4, ...>` -> `int4, ...`.
std::string artifact::attrBody(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  size_t open = text.find('<');
  if (open == std::string::npos || text.back() != '>')
    return text;
  return text.substr(open + 1, text.size() - open - 2);
}

std::vector<qfuse::format::artifact::Dim>
artifact::shapeOf(RankedTensorType type) {
  std::vector<qfuse::format::artifact::Dim> shape;
  for (int64_t d : type.getShape())
    shape.push_back(
        {ShapedType::isDynamic(d) ? 0 : d, ShapedType::isDynamic(d)});
  return shape;
}

namespace schema = qfuse::format::artifact;

schema::Arg artifact::bufferArg(std::string name) {
  schema::Arg arg;
  arg.kind = schema::Arg::Kind::Buffer;
  arg.name = std::move(name);
  return arg;
}

schema::Arg artifact::weightArg(std::string weight, std::string component) {
  schema::Arg arg;
  arg.kind = schema::Arg::Kind::Weight;
  arg.name = std::move(weight);
  arg.component = std::move(component);
  return arg;
}

schema::Arg artifact::immediateArg(schema::Arg::Kind kind, int64_t value) {
  schema::Arg arg;
  arg.kind = kind;
  arg.intValue = value;
  return arg;
}

std::string artifact::dtypeOf(Type t) {
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF32())
    return "f32";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(8))
    return "i8";
  return "unknown";
}

/// An attribute as JSON: strings, numbers, booleans, arrays and nested
/// dictionaries; anything else as its body.
static json::Value attrToJson(Attribute attr) {
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue().str();
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    json::Array out;
    for (Attribute e : a)
      out.push_back(attrToJson(e));
    return out;
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    json::Object out;
    for (NamedAttribute e : d)
      out[e.getName().getValue().str()] = attrToJson(e.getValue());
    return out;
  }
  return artifact::attrBody(attr);
}

std::string artifact::modelJson(DictionaryAttr model) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << attrToJson(model);
  return text;
}
