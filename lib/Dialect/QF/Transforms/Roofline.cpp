//===- Roofline.cpp - bytes, FLOPs and roofline time per fused matmul
//--------===//
//
// Reports what each qf.fused_matmul must move and compute, as remarks and
// optionally as JSON, with the byte accounting of CostModel.cpp.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "qfuse/Dialect/QF/Transforms/CostModel.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "qf-roofline"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFROOFLINE
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Prints `attr` without the diagnostic's quoting, for JSON strings.
std::string str(Attribute attr) {
  std::string s;
  llvm::raw_string_ostream(s) << attr;
  return s;
}

/// One op's numbers.
struct RooflineEntry {
  int64_t m, n, k;
  TrafficBytes bytes;
  double bytesPerElement;
  int64_t flops;
  double memoryUs, computeUs, predictedUs;
};

struct QFRooflinePass : public qf::impl::QFRooflineBase<QFRooflinePass> {
  using Base::Base;

  void runOnOperation() override {
    if (bandwidthGbps <= 0.0 || peakTflops <= 0.0 || batch <= 0) {
      emitError(getOperation()->getLoc())
          << "qf-roofline needs positive bandwidth-gbps, peak-tflops and "
             "batch, got "
          << static_cast<double>(bandwidthGbps) << ", "
          << static_cast<double>(peakTflops) << ", "
          << static_cast<int64_t>(batch);
      return signalPassFailure();
    }
    llvm::json::Array report;
    getOperation()->walk([&](FusedMatmulOp op) {
      RooflineEntry e = measure(op);
      remark(op, e);
      if (!jsonFile.empty())
        report.push_back(toJSON(op, e));
    });
    if (jsonFile.empty())
      return;

    // A temporary beside the file, renamed when complete (docs/faults.md).
    if (llvm::Error error = llvm::writeToOutput(
            jsonFile, [&](llvm::raw_ostream &os) -> llvm::Error {
              os << llvm::formatv("{0:2}",
                                  llvm::json::Value(std::move(report)))
                 << "\n";
              return llvm::Error::success();
            })) {
      emitError(getOperation()->getLoc())
          << "qf-roofline cannot write '" << jsonFile
          << "': " << llvm::toString(std::move(error));
      return signalPassFailure();
    }
  }

  RooflineEntry measure(FusedMatmulOp op) {
    WeightType w = op.getWeight().getType();
    RooflineEntry e;
    e.m = getPlannedM(op.getInput().getType(), batch);
    // Weight rows: both projections of a gated (silu_mul) matmul.
    e.n = getFusedMatmulWeightRows(op);
    e.k = w.getK();
    e.bytes = getFusedMatmulTraffic(op, e.m);
    e.bytesPerElement = static_cast<double>(e.bytes.weightBytes()) /
                        static_cast<double>(e.n * e.k);
    e.flops = getFusedMatmulFlops(op, e.m);
    e.predictedUs = predictTimeUs(e.bytes.total(), bandwidthGbps);
    e.memoryUs = e.predictedUs - kLaunchOverheadUs;
    e.computeUs = static_cast<double>(e.flops) / (peakTflops * 1e6);
    return e;
  }

  void remark(FusedMatmulOp op, const RooflineEntry &e) {
    const TrafficBytes &b = e.bytes;
    InFlightDiagnostic diag = op.emitRemark();
    diag << "roofline: M = " << e.m << ", N = " << e.n << ", K = " << e.k
         << "; weights " << b.weightBytes() << " B (codes " << b.codes
         << ", scales " << b.scales << ", zeros " << b.zeros << ", metadata "
         << b.metadata << "); activations " << b.activations << " B; outputs "
         << b.outputs << " B (residual " << b.residual << ", bias " << b.bias
         << ", norm " << b.norm << "); total " << b.total() << " B; "
         << llvm::formatv("{0:F4}", e.bytesPerElement).str()
         << " B/weight element vs fp16 2 B ("
         << llvm::formatv("{0:F2}", kFP16BytesPerElement / e.bytesPerElement)
                .str()
         << "x less); " << e.flops << " FLOP ("
         << llvm::formatv("{0:F2}", double(e.flops) / double(b.total())).str()
         << " FLOP/B); predicted "
         << llvm::formatv("{0:F3}", e.predictedUs).str() << " us at "
         << llvm::formatv("{0}", static_cast<double>(bandwidthGbps)).str()
         << " GB/s (memory " << llvm::formatv("{0:F3}", e.memoryUs).str()
         << " us, compute " << llvm::formatv("{0:F3}", e.computeUs).str()
         << " us at "
         << llvm::formatv("{0}", static_cast<double>(peakTflops)).str()
         << " TFLOP/s, launch "
         << llvm::formatv("{0:F0}", kLaunchOverheadUs).str() << " us); "
         << (e.computeUs > e.memoryUs ? "compute" : "memory") << "-bound";
  }

  llvm::json::Value toJSON(FusedMatmulOp op, const RooflineEntry &e) {
    const TrafficBytes &b = e.bytes;
    llvm::json::Object obj;
    if (auto ref = op.getWeight().getDefiningOp<WeightRefOp>())
      obj["weight"] = ref.getName();
    obj["m"] = e.m;
    obj["n"] = e.n;
    obj["k"] = e.k;
    obj["encoding"] = str(op.getWeight().getType().getEncoding());
    if (TilingAttr tiling = op.getTilingAttr())
      obj["tiling"] = str(tiling);
    obj["bytes"] = llvm::json::Object{{"codes", b.codes},
                                      {"scales", b.scales},
                                      {"zeros", b.zeros},
                                      {"metadata", b.metadata},
                                      {"weights", b.weightBytes()},
                                      {"activations", b.activations},
                                      {"outputs", b.outputs},
                                      {"residual", b.residual},
                                      {"bias", b.bias},
                                      {"norm", b.norm},
                                      {"total", b.total()}};
    obj["bytes_per_weight_element"] = e.bytesPerElement;
    obj["fp16_bytes_per_weight_element"] = kFP16BytesPerElement;
    obj["flops"] = e.flops;
    obj["flops_per_byte"] = double(e.flops) / double(b.total());
    obj["bandwidth_gbps"] = static_cast<double>(bandwidthGbps);
    obj["peak_tflops"] = static_cast<double>(peakTflops);
    obj["memory_us"] = e.memoryUs;
    obj["compute_us"] = e.computeUs;
    obj["launch_us"] = kLaunchOverheadUs;
    obj["predicted_us"] = e.predictedUs;
    obj["bound"] = e.computeUs > e.memoryUs ? "compute" : "memory";
    return obj;
  }
};

} // namespace
