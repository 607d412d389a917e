//===- PackingKernels.h - the kernels qfuse-quantize packs with -*- C++ -*-===//
//
// GPTQ's codes are packed into the row-major codes component on the device
// by the qf_gather_fields kernels (DeviceGather.h) of the model's quantize
// artifact: DIR/qfuse-<encoding>.quantize.qfa beside the decode artifact
// (what `python3 -m qfuse compile` writes), or the one beside
// --decode-artifact. QFUSE_PACK=host packs on the host instead
// (format::packCodeBytes, the reference the device's bytes equal);
// QFUSE_PACK=check packs on both and fails where the bytes differ.
//
// The weights GPTQ leaves alone (lm_head) are rounded to nearest by the
// same artifact's qf.quantize kernels (QuantizeAtLoad), where one takes
// them: QFUSE_RTN=host rounds them on the host, QFUSE_RTN=check on both,
// failing where the bytes differ.
//
// A bf16 checkpoint's GPTQ modules are rounded to the calibration plan's
// f16 on the device by the same artifact's qf_round_bf16_to_f16 kernel
// (DeviceHalfRound.h), from the bf16 bytes uploaded once for the solver;
// --host-weights rounds them on the host as before. The solver widens the
// modules it reads on the device to f32 by the same artifact's
// qf_widen_*_to_f32 kernels (DeviceWiden.h), every bit kept.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_SRC_GPTQ_PACKINGKERNELS_H
#define QFUSE_RUNTIME_SRC_GPTQ_PACKINGKERNELS_H

#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/DeviceGather.h"
#include "qfuse/runtime/device/DeviceHalfRound.h"
#include "qfuse/runtime/device/DeviceWiden.h"
#include "qfuse/runtime/device/QuantizeAtLoad.h"
#include "qfuse/runtime/gptq/QuantizeModel.h"

#include <memory>
#include <string>

namespace qfuse::runtime {

/// The gather kernels for `options`' run on `context`, or null where there
/// are none; `where` says which file packs, or why the host does.
std::unique_ptr<DeviceGather> gptqPackingKernels(
    const QuantizeModelOptions &options, const cuda::Context &context,
    std::string &where);

/// Round-to-nearest of the weights GPTQ leaves alone, through the quantize
/// artifact of `options`' decode artifact (its summary() says where each
/// ran, and why the host took any).
std::unique_ptr<QuantizeAtLoad> gptqRoundingKernels(
    const QuantizeModelOptions &options, const cuda::Context &context);

/// The bf16 -> f16 rounding kernel of `options`' quantize artifact where
/// `checkpoint` stores the first layer weight of `calibration` as bf16, or
/// null where the host rounds (--host-weights, no kernel); `where` says
/// which ("" for a checkpoint of another dtype).
std::unique_ptr<DeviceHalfRound> gptqHalfRoundKernel(
    const QuantizeModelOptions &options, const cuda::Context &context,
    const Artifact &calibration, const ModelCheckpoint &checkpoint,
    std::string &where);

/// The f16/bf16 -> f32 widening kernels of `options`' quantize artifact,
/// or null where the solver widens with cuBLAS (--host-weights, no
/// kernel); `where` says which.
std::unique_ptr<DeviceWiden> gptqWidenKernels(
    const QuantizeModelOptions &options, const cuda::Context &context,
    std::string &where);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_SRC_GPTQ_PACKINGKERNELS_H
