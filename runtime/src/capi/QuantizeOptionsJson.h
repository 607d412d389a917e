//===- QuantizeOptionsJson.h - qfuse_quantize's options ---------*- C++ -*-===//
//
// The JSON object qfuse_quantize takes (qfuse.h) as QuantizeModelOptions:
// every key known and of its type, or a qfuse::Error naming the key.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CAPI_QUANTIZEOPTIONSJSON_H
#define QFUSE_RUNTIME_CAPI_QUANTIZEOPTIONSJSON_H

#include "qfuse/runtime/gptq/QuantizeModel.h"

namespace qfuse::capi {

runtime::QuantizeModelOptions quantizeOptionsFromJson(const char *optionsJson);

} // namespace qfuse::capi

#endif // QFUSE_RUNTIME_CAPI_QUANTIZEOPTIONSJSON_H
