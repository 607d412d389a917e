//===- FormatTensors.h - qfuse_format tensors in safetensors files -*- C++ -*-===//
//
// A packed weight is a format::TensorMap ("codes", "scales", ...); in a
// safetensors file its components are the tensors "<prefix><component>".
// The two DType enums share the safetensors spelling, so a component's
// bytes are stored as they are.
//
//   addFormatTensors(writer, "model.layers.0.mlp.up_proj.", components);
//   format::TensorMap back = readFormatTensors(file, "model.layers.0.mlp.up_proj.");
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_FORMATTENSORS_H
#define QFUSE_RUNTIME_CHECKPOINT_FORMATTENSORS_H

#include "qfuse/format/Tensor.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"

#include <optional>
#include <string>

namespace qfuse::runtime {

/// The runtime's view of a tensor as qfuse_format's (same bytes), or
/// nullopt for a dtype qfuse_format does not have.
std::optional<format::TensorView> formatView(const TensorView &view);

/// The safetensors dtype that stores `dtype` (the same spelling); throws
/// naming `tensor` for a dtype without one.
DType safetensorsDType(format::DType dtype, const std::string &tensor);

/// Adds every tensor of `tensors` as `<prefix><name>`; throws for a dtype
/// without a safetensors spelling.
void addFormatTensors(SafetensorsWriter &writer, const std::string &prefix,
                      const format::TensorMap &tensors);
/// The same without copying the bytes: the writer keeps `tensors` alive.
void addFormatTensors(SafetensorsWriter &writer, const std::string &prefix,
                      std::shared_ptr<const format::TensorMap> tensors);

/// The tensors of `file` named `<prefix><name>` (copied), keyed by <name>;
/// throws naming the file for a dtype qfuse_format does not have.
format::TensorMap readFormatTensors(const SafetensorsFile &file,
                                    const std::string &prefix);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_CHECKPOINT_FORMATTENSORS_H
