//===- LaunchRecord.cpp - the qf.launches entry of a launch ---------------===//
//
// Builds the #qf.launch records qf-to-gpu writes on each op, which the
// artifact writer turns into the runtime's launch table (docs/artifact.md).
//
//===----------------------------------------------------------------------===//

#include "LaunchRecord.h"

using namespace mlir;
using namespace mlir::qf;

LaunchAttr mlir::qf::launchRecord(OpBuilder &b, const KernelLaunch &launch,
                                  int64_t batch, const LaunchExtras &extras) {
  SmallVector<Attribute> params;
  for (const KernelParam &param : launch.params)
    params.push_back(b.getStringAttr(param.name));
  auto optionalString = [&](StringRef text) {
    return text.empty() ? StringAttr() : b.getStringAttr(text);
  };
  return LaunchAttr::get(
      b.getContext(),
      extras.args.empty() ? ArrayAttr()
                          : b.getArrayAttr(SmallVector<Attribute>(
                                extras.args.begin(), extras.args.end())),
      batch, b.getDenseI64ArrayAttr({launch.blockX, 1, 1}),
      launch.dynamicSharedBytes,
      b.getDenseI64ArrayAttr({launch.gridX, launch.gridY, launch.gridZ}),
      extras.permutedInput ? b.getStringAttr("permuted") : StringAttr(),
      SymbolRefAttr::get(
          b.getStringAttr(kKernelModuleName),
          {FlatSymbolRefAttr::get(b.getStringAttr(launch.name))}),
      extras.layout,
      extras.step.empty() ? std::nullopt
                          : std::optional<int64_t>(extras.member),
      b.getArrayAttr(params), launch.sharedBytes, optionalString(extras.step),
      optionalString(extras.weight));
}
