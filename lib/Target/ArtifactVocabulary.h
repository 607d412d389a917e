//===- ArtifactVocabulary.h - IR values as the artifact says -*- C++ -*-===//
//
// The vocabulary the artifact writer spells IR in (docs/artifact.md): an
// attribute's body, a tensor's shape and dtype, the buffer name of every
// activation, and the qf.model dictionary as JSON text.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_TARGET_ARTIFACTVOCABULARY_H
#define QFUSE_LIB_TARGET_ARTIFACTVOCABULARY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"
#include "qfuse/format/ArtifactSchema.h"

#include <map>
#include <string>

namespace mlir {
namespace qf {
namespace artifact {

/// The body of an attribute's full form: `#qf.enc<int4, ...>` -> `int4, ...`.
std::string attrBody(Attribute attr);
/// A buffer's shape, its dynamic first extent (the batch) as "M".
std::vector<qfuse::format::artifact::Dim> shapeOf(RankedTensorType type);
/// The artifact's name of an element type: "f16", "bf16", "f32", "i32", ...
std::string dtypeOf(Type t);
/// The `qf.model` dictionary as compact JSON text: strings, numbers,
/// booleans, arrays and nested dictionaries.
std::string modelJson(DictionaryAttr model);

/// Launch arguments: a buffer, a weight's component, an i32 / i64
/// immediate.
qfuse::format::artifact::Arg bufferArg(std::string name);
qfuse::format::artifact::Arg weightArg(std::string weight,
                                       std::string component);
qfuse::format::artifact::Arg
immediateArg(qfuse::format::artifact::Arg::Kind kind, int64_t value);

/// Names every activation the plan touches: function arguments by their
/// `qf.name` argument attribute (else `<function>.input<i>`), returned values
/// by their `qf.name` result attribute, fused results by `<weight>.out`.
/// qf.attention's updated caches are its cache operands: the kernels write
/// the caches in place, so both name one buffer.
class BufferNames {
public:
  void preassign(Value v, StringRef name) {
    if (!names.count(v.getAsOpaquePointer()) && !aliasOf(v)) {
      names[v.getAsOpaquePointer()] = name.str();
      order.push_back(v);
    }
  }

  std::string nameOf(Value v) {
    if (Value target = aliasOf(v))
      return nameOf(target);
    auto it = names.find(v.getAsOpaquePointer());
    if (it != names.end())
      return it->second;
    std::string name;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      StringAttr given =
          func
              ? func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "qf.name")
              : StringAttr();
      // Unnamed arguments are named after their function, so that modules
      // with several functions keep distinct buffers.
      name = given ? given.str()
                   : (func ? func.getSymName().str() + "." : std::string()) +
                         "input" + std::to_string(arg.getArgNumber());
    } else if (auto fused = v.getDefiningOp<FusedMatmulOp>()) {
      auto ref = fused.getWeight().getDefiningOp<WeightRefOp>();
      name = (ref ? ref.getName().str() : "matmul") + ".out";
    } else {
      name = "value" + std::to_string(names.size());
    }
    names[v.getAsOpaquePointer()] = name;
    order.push_back(v);
    return name;
  }
  ArrayRef<Value> values() const { return order; }

private:
  /// The operand whose buffer `v` shares, or null.
  static Value aliasOf(Value v) {
    auto attention = v.getDefiningOp<AttentionOp>();
    if (!attention)
      return {};
    if (v == attention.getKeyCacheOut())
      return attention.getKeyCache();
    if (v == attention.getValueCacheOut())
      return attention.getValueCache();
    return {};
  }

  std::map<const void *, std::string> names;
  SmallVector<Value> order;
};

} // namespace artifact
} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_TARGET_ARTIFACTVOCABULARY_H
