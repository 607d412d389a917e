//===- ArtifactMatmul.cpp - a fused matmul's steps in the artifact --------===//
//
// What qf-to-gpu recorded on a qf.fused_matmul becomes steps of the plans
// (docs/artifact.md): its kernel launches with their parameters bound to
// buffers and weight components (a qf.group's members included), cuBLAS
// gemm steps on dense weights, and the dequantize + cuBLAS fallback's
// records (docs/fallback.md).
//
//===----------------------------------------------------------------------===//

#include "ArtifactBuilder.h"

#include "qfuse/format/Layout.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::artifact;

void ArtifactBuilder::addFusedMatmul(FusedMatmulOp fused) {
  auto ref = fused.getWeight().getDefiningOp<WeightRefOp>();
  auto launches = fused->getAttrOfType<ArrayAttr>("qf.launches");
  auto gemmBatches = fused->getAttrOfType<DenseI64ArrayAttr>("qf.gemm_batches");
  if (!ref || (!launches && !gemmBatches)) {
    fused.emitOpError(!ref ? "weight is not a qf.weight_ref"
                           : "has no qf.launches: run qf-to-gpu");
    failedAny = true;
    return;
  }
  if (fused.getBias() && !fused.getBias().getDefiningOp<TensorRefOp>()) {
    fused.emitOpError("bias must come from a qf.tensor_ref");
    failedAny = true;
    return;
  }
  std::string weightName = addWeight(ref);
  schema::Arg x = valueArg(fused.getInput());
  schema::Arg y = valueArg(fused.getResult());
  std::optional<schema::Arg> residual, bias;
  if (fused.getResidual())
    residual = valueArg(fused.getResidual());
  if (fused.getBias())
    bias = valueArg(fused.getBias());

  if (gemmBatches) {
    // Dense f16 weights: cuBLAS (docs/artifact.md, gemm steps).
    for (int64_t batch : gemmBatches.asArrayRef()) {
      schema::Step step;
      step.kind = schema::Step::Kind::Gemm;
      step.gemm.x = x.name;
      step.gemm.weight = weightName;
      step.gemm.y = y.name;
      if (bias)
        step.gemm.bias = bias->name;
      if (residual)
        step.gemm.residual = residual->name;
      stepsByBatch[batch].push_back(std::move(step));
    }
    return;
  }
  SmallVector<FusedMatmulOp> members = {fused};
  if (auto group = fused->getAttr("qf.group")) {
    members.clear();
    for (auto other : fused->getBlock()->getOps<FusedMatmulOp>())
      if (other->getAttr("qf.group") == group)
        members.push_back(other);
  }
  auto guards = fused->getAttrOfType<DenseI32ArrayAttr>("qf.launch_guards");
  if (guards && guards.size() != static_cast<int64_t>(launches.size())) {
    fused.emitOpError() << "has " << guards.size() << " qf.launch_guards for "
                        << launches.size() << " qf.launches";
    failedAny = true;
    return;
  }
  // The layout a guard names its weights in: that of the group's permute,
  // kernel or dequantize launch, which the records without one (the
  // fallback's gemm and silu_mul) follow in a batch.
  LayoutAttr guardLayout;
  for (auto [index, entry] : llvm::enumerate(launches)) {
    int32_t guard = guards ? guards[index] : 0;
    auto record = dyn_cast<LaunchAttr>(entry);
    int64_t batch = record ? record.getBatch()
                           : cast<FallbackGemmAttr>(entry).getBatch();
    if (record && record.getLayout())
      guardLayout = record.getLayout();
    size_t before = stepsByBatch[batch].size();
    auto guardStep = [&] {
      if (guard != 0 && stepsByBatch[batch].size() == before + 1)
        setPermGuard(stepsByBatch[batch].back(), guard, members, guardLayout);
    };
    if (!record || record.getStep()) {
      addFallbackRecord(fused, members, entry);
      guardStep();
      continue;
    }
    // A batch of qf.batch_tilings reads every weight in its own layout: the
    // copy packed in it (qf-to-gpu records the layout on the launch).
    LayoutAttr layout = record.getLayout();
    std::string launchWeight = layout ? addWeight(ref, layout) : weightName;
    // act_order on the tensor-core kernel reads the permuted activations.
    schema::Arg input = x;
    if (record.getInput())
      input =
          bufferArg(permutedInputName(bufferNames.nameOf(fused.getResult())));
    addLaunch(record, [&](size_t, StringRef n) -> BoundArg {
      // qf.group (qf-fuse-shared-input): `<name>.<i>` is member i's.
      size_t dot = n.rfind('.');
      unsigned index = 0;
      if (dot != StringRef::npos &&
          !n.drop_front(dot + 1).getAsInteger(10, index))
        return bindGroupParam(fused, n, index, layout);
      if (n == "x")
        return {input, kPtr};
      if (n == "y")
        return {y, kPtr};
      // y's columns in the reading act_order matmul's sorted order.
      if (n == "y_order")
        return {readerComponent(fused, record.getBatch(),
                                        qfuse::format::kInvPerm),
                kPtr};
      if (n == "residual")
        return {*residual, kPtr};
      if (n == "bias")
        return {*bias, kPtr};
      // RMSNorm prologue: the gamma tensor.
      if (n == "norm")
        return {valueArg(fused.getNorm()), kPtr};
      // silu_mul: `up_<component>` is a component of the up projection,
      // a separate checkpoint weight.
      if (n.starts_with("up_"))
        return bindUpComponent(fused, n.drop_front(3), layout);
      return {weightArg(launchWeight, n.str()), kPtr};
    });
    guardStep();
  }
}

BoundArg ArtifactBuilder::bindUpComponent(FusedMatmulOp fused,
                                          StringRef component,
                                          LayoutAttr layout) {
  auto upRef = fused.getUp() ? fused.getUp().getDefiningOp<WeightRefOp>()
                             : WeightRefOp();
  if (!upRef) {
    fused.emitOpError("up weight is not a qf.weight_ref");
    failedAny = true;
    return {schema::Arg(), kPtr};
  }
  return {weightArg(addWeight(upRef, layout), component.str()), kPtr};
}

void ArtifactBuilder::setPermGuard(schema::Step &step, int32_t guard,
                                   ArrayRef<FusedMatmulOp> members,
                                   LayoutAttr layout) {
  using When = schema::PermGuard::When;
  FusedMatmulOp first = members.front();
  if (guard != 1 && guard != 2) {
    first.emitOpError() << "qf.launch_guards entry " << guard
                        << " is not 0, 1 (perms equal) or 2 "
                           "(perms differ)";
    failedAny = true;
    return;
  }
  step.guard.when = guard == 1 ? When::PermsEqual : When::PermsDiffer;
  // Every weight the group's (or gate/up's) kernel reads through the first
  // one's perm, in the layout the launch reads (a layout's entries of one
  // checkpoint tensor hold the same perm).
  for (FusedMatmulOp member : members)
    for (Value v : {member.getWeight(), member.getUp()})
      if (auto ref = v ? v.getDefiningOp<WeightRefOp>() : WeightRefOp())
        step.guard.weights.push_back(layout ? addWeight(ref, layout)
                                            : addWeight(ref));
  if (step.guard.weights.size() < 2) {
    first.emitOpError("a perm-guarded launch needs two or more "
                      "act_order weights");
    failedAny = true;
  }
  anyPermGuard = true;
}

BoundArg ArtifactBuilder::bindGroupParam(FusedMatmulOp fused, StringRef n,
                                         unsigned index, LayoutAttr layout) {
  StringRef base = n.take_front(n.rfind('.'));
  auto group = fused->getAttr("qf.group");
  FusedMatmulOp member;
  unsigned seen = 0;
  if (group)
    for (auto other : fused->getBlock()->getOps<FusedMatmulOp>())
      if (other->getAttr("qf.group") == group && seen++ == index)
        member = other;
  auto memberRef =
      member ? member.getWeight().getDefiningOp<WeightRefOp>() : WeightRefOp();
  if (!memberRef) {
    fused.emitOpError() << "kernel parameter '" << n
                        << "' names no qf.group member with a "
                           "qf.weight_ref";
    failedAny = true;
    return {schema::Arg(), kPtr};
  }
  if (base == "y")
    return {valueArg(member.getResult()), kPtr};
  if (base == "residual")
    return {valueArg(member.getResidual()), kPtr};
  if (base == "bias")
    return {valueArg(member.getBias()), kPtr};
  return {weightArg(addWeight(memberRef, layout), base.str()), kPtr};
}

void ArtifactBuilder::addFallbackRecord(FusedMatmulOp fused,
                                        ArrayRef<FusedMatmulOp> members,
                                        Attribute record) {
  auto gemmRecord = dyn_cast<FallbackGemmAttr>(record);
  auto launch = dyn_cast<LaunchAttr>(record);
  StringRef step = gemmRecord ? "gemm" : launch.getStep().getValue();
  int64_t index = gemmRecord ? gemmRecord.getMember() : *launch.getMember();
  int64_t batch = gemmRecord ? gemmRecord.getBatch() : launch.getBatch();
  if (index < 0 || index >= static_cast<int64_t>(members.size())) {
    fused.emitOpError() << "fallback record names member " << index
                        << " of a qf.group of " << members.size();
    failedAny = true;
    return;
  }
  FusedMatmulOp member = members[index];
  auto type = member.getResult().getType();
  std::string dtype = dtypeOf(type.getElementType());
  std::string output = bufferNames.nameOf(member.getResult());
  // Scratch activations: the fallback's [M, N] gate, up and act, and the
  // [M, K] activations permuted for an act_order weight, normalized by the
  // RMSNorm prologue's launch or multiplied by the silu_mul prologue's.
  auto scratch = [&](StringRef what) {
    bool input = what == "permuted" || what == "normed" || what == "activated";
    std::string name = what == "permuted" ? permutedInputName(output)
                                          : output + ".fallback_" + what.str();
    scratchBuffers.try_emplace(
        name, shapeOf(input ? member.getInput().getType() : type), dtype);
    return name;
  };
  auto weightOf = [&](StringRef which) -> WeightRefOp {
    Value v = which == "up" ? member.getUp() : member.getWeight();
    return v ? v.getDefiningOp<WeightRefOp>() : WeightRefOp();
  };
  if (gemmRecord) {
    StringRef into = gemmRecord.getInto().getValue();
    schema::Step gemm;
    gemm.kind = schema::Step::Kind::Gemm;
    gemm.gemm.x = valueArg(member.getInput()).name;
    // An RMSNorm prologue: the fallback's norm launch (member 0's) wrote
    // the normalized input, which every member's gemm reads.
    if (member.getNorm())
      gemm.gemm.x = bufferNames.nameOf(FusedMatmulOp(members.front()).getResult()) +
                    ".fallback_normed";
    // A silu_mul prologue: the launch before it wrote the product.
    if (member.hasSiluMulPrologue())
      gemm.gemm.x = output + ".fallback_activated";
    gemm.gemm.weightBuffer = workspaceName(dtype);
    gemm.gemm.y = into == "y" ? output : scratch(into);
    if (into == "y" && member.getBias())
      gemm.gemm.bias = valueArg(member.getBias()).name;
    if (into == "y" && member.getResidual())
      gemm.gemm.residual = valueArg(member.getResidual()).name;
    stepsByBatch[batch].push_back(std::move(gemm));
    return;
  }
  if (step == "dequantize") {
    WeightRefOp ref = weightOf(launch.getWeight().getValue());
    if (!ref) {
      fused.emitOpError("fallback weight is not a qf.weight_ref");
      failedAny = true;
      return;
    }
    std::string weight = addWeight(ref, launch.getLayout());
    int64_t &elements = workspaceElements[dtype];
    elements = std::max(elements, ref.getType().getN() * ref.getType().getK());
    addLaunch(launch, [&](size_t, StringRef n) -> BoundArg {
      if (n == "w")
        return {bufferArg(workspaceName(dtype)), kPtr};
      return {weightArg(weight, n.str()), kPtr};
    });
    stepsByBatch[batch].back().op = "qf.dequantize";
    return;
  }
  // permute, rms_norm, silu_mul_prologue, silu_mul and add: launches on
  // the scratch buffers.
  ArrayAttr args = launch.getArgs();
  if (!args) {
    fused.emitOpError() << "fallback " << step
                        << " launch has no args for its parameters";
    failedAny = true;
    return;
  }
  addLaunch(launch, [&](size_t i, StringRef) -> BoundArg {
    return bindFallbackArg(fused, member, cast<LaunchArgAttr>(args[i]),
                           launch.getLayout(), batch, scratch);
  });
  // The check (runtime Check.cpp) follows these to the activations a
  // matmul's input came from.
  if (step == "permute" || step == "rms_norm" ||
      step == "silu_mul_prologue") {
    stepsByBatch[batch].back().op = step == "permute"    ? "qf.permute_columns"
                                    : step == "rms_norm" ? "qf.rms_norm"
                                                         : "qf.silu_mul";
    anyLaunchOp = true;
  }
}

BoundArg ArtifactBuilder::bindFallbackArg(
    FusedMatmulOp fused, FusedMatmulOp member, LaunchArgAttr arg,
    LayoutAttr layout, int64_t batch,
    function_ref<std::string(StringRef)> scratch) {
  switch (arg.getKind()) {
  case LaunchArgKind::Scratch:
    return {bufferArg(scratch(arg.getName().getValue())), kPtr};
  case LaunchArgKind::Output:
    return {bufferArg(bufferNames.nameOf(member.getResult())), kPtr};
  case LaunchArgKind::Residual:
    return {valueArg(member.getResidual()), kPtr};
  case LaunchArgKind::Activations:
    return {valueArg(member.getInput()), kPtr};
  case LaunchArgKind::Component: {
    auto ref = member.getWeight().getDefiningOp<WeightRefOp>();
    if (!ref) {
      fused.emitOpError("permuted weight is not a qf.weight_ref");
      failedAny = true;
      return {schema::Arg(), kPtr};
    }
    return {weightArg(addWeight(ref, layout), arg.getName().getValue().str()),
            kPtr};
  }
  case LaunchArgKind::ReaderComponent:
    return {readerComponent(member, batch, arg.getName().getValue()), kPtr};
  case LaunchArgKind::I32:
    return {immediateArg(schema::Arg::Kind::I32, *arg.getInteger()),
            schema::ParamType::I32};
  case LaunchArgKind::Operand: {
    // An operand of the member: the RMSNorm prologue's gamma, the silu_mul
    // prologue's up.
    int64_t i = arg.getInteger().value_or(-1);
    if (i >= 0 && i < static_cast<int64_t>(member->getNumOperands()))
      return {valueArg(member->getOperand(i)), kPtr};
    break;
  }
  case LaunchArgKind::Result:
  case LaunchArgKind::F32:
    break;
  }
  fused.emitOpError() << "a fallback launch cannot bind " << arg;
  failedAny = true;
  return {schema::Arg(), kPtr};
}

schema::Arg ArtifactBuilder::readerComponent(Operation *writer,
                                             int64_t batch,
                                             StringRef component) {
  Value result = writer->getResult(0);
  auto reader = result.hasOneUse()
                    ? dyn_cast<FusedMatmulOp>(*result.getUsers().begin())
                    : FusedMatmulOp();
  auto ref = reader ? reader.getWeight().getDefiningOp<WeightRefOp>()
                    : WeightRefOp();
  if (!ref || reader.getInput() != result) {
    writer->emitOpError() << "binds '" << component
                        << "' of the weight of the matmul that reads its "
                           "result, but no qf.fused_matmul on a "
                           "qf.weight_ref reads it as its only use";
    failedAny = true;
    return schema::Arg();
  }
  // The layout the reader's kernel reads at this batch: the copy it binds
  // anyway (every layout of a checkpoint tensor holds the same perm).
  LayoutAttr layout;
  if (auto launches = reader->getAttrOfType<ArrayAttr>("qf.launches"))
    for (Attribute entry : launches)
      if (auto launch = dyn_cast<LaunchAttr>(entry))
        if (launch.getBatch() == batch && !launch.getStep())
          layout = launch.getLayout();
  return weightArg(addWeight(ref, layout), component.str());
}
