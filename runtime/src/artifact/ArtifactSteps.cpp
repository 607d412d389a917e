//===- ArtifactSteps.cpp - An artifact's plans read and checked -----------===//
//
// The plans: one per batch size, each a list of steps. A launch is checked
// against its kernel (grid, block, shared memory, one argument per
// parameter of the right kind, and the x / y buffers it binds against the
// shapes of its weights); a gemm against the weight and buffers it
// multiplies; a memset against the buffer it clears.
//
//===----------------------------------------------------------------------===//

#include "ArtifactValidator.h"

#include <limits>

namespace qfuse::runtime::detail {

/// One argument against its kernel parameter: a pointer for a buffer,
/// weight component or tensor, an immediate of the parameter's type, and
/// the buffer, weight (and component) or tensor declared.
void ArtifactValidator::checkArg(const Arg &arg, const KernelParam &param,
                                 const std::string &where) const {
  const bool isPtr = param.type == ParamType::Ptr;
  auto expectPtr = [&](const char *kind) {
    if (!isPtr)
      fail(where, std::string("a ") + kind + " is a pointer but parameter '" +
                      param.name + "' is " +
                      std::string(paramTypeName(param.type)));
  };
  auto expectScalar = [&](ParamType type) {
    if (param.type != type)
      fail(where, "an " + std::string(paramTypeName(type)) +
                      " immediate does not match parameter '" + param.name +
                      "' of type " + std::string(paramTypeName(param.type)));
  };
  switch (arg.kind) {
  case Arg::Kind::Buffer:
    expectPtr("buffer");
    if (!artifact_.findBuffer(arg.name))
      fail(where, "buffer '" + arg.name + "' is not declared in 'buffers'");
    return;
  case Arg::Kind::Weight: {
    expectPtr("weight component");
    const WeightSpec *weight = artifact_.findWeight(arg.name);
    if (!weight)
      fail(where, "weight '" + arg.name + "' is not declared in 'weights'");
    if (!weight->findComponent(arg.component)) {
      std::vector<std::string> names;
      for (const format::ComponentSpec &spec : weight->components)
        names.push_back(spec.name);
      for (const format::ComponentSpec &spec : weight->layoutComponents)
        names.push_back(spec.name);
      fail(where, "weight '" + arg.name + "' (" + weight->encoding +
                      ") has no component '" + arg.component + "' (it has " +
                      joined(names) + ")");
    }
    return;
  }
  case Arg::Kind::Tensor:
    expectPtr("tensor");
    if (!artifact_.findTensor(arg.name))
      fail(where, "tensor '" + arg.name + "' is not declared in 'tensors'");
    return;
  case Arg::Kind::I32:
    return expectScalar(ParamType::I32);
  case Arg::Kind::I64:
    return expectScalar(ParamType::I64);
  case Arg::Kind::F32:
    return expectScalar(ParamType::F32);
  }
}

Step ArtifactValidator::checkStep(schema::Step &read,
                                  const std::string &where) {
  if (read.kind == schema::Step::Kind::Gemm)
    return checkGemm(read.gemm, where + ".gemm");
  Step step;
  step.target = std::move(read.target);
  if (read.kind == schema::Step::Kind::Memset) {
    step.kind = Step::Kind::Memset;
    if (!artifact_.findBuffer(step.target))
      fail(where + ".memset",
           "buffer '" + step.target + "' is not declared in 'buffers'");
    return step;
  }
  step.kind = Step::Kind::Launch;
  const Kernel *kernel = artifact_.findKernel(step.target);
  if (!kernel)
    fail(where + ".launch",
         "kernel '" + step.target + "' is not defined in 'kernels'");
  step.kernelIndex = static_cast<size_t>(kernel - artifact_.kernels.data());
  for (size_t d = 0; d < 3; ++d) {
    step.grid[d] = static_cast<uint32_t>(read.grid[d]);
    step.block[d] = static_cast<uint32_t>(read.block[d]);
  }
  const int64_t threads =
      int64_t(step.block[0]) * step.block[1] * step.block[2];
  if (threads > kernel->maxThreads)
    fail(where + ".block", std::to_string(threads) +
                               " threads per block exceed kernel '" +
                               kernel->name + "' max_threads " +
                               std::to_string(kernel->maxThreads));
  step.sharedBytes = static_cast<uint32_t>(read.sharedBytes);
  if (kernel->sharedBytes + step.sharedBytes > kMaxSharedBytesPerBlock)
    fail(where + ".shared_bytes",
         "static " + std::to_string(kernel->sharedBytes) + " + dynamic " +
             std::to_string(step.sharedBytes) + " bytes exceed " +
             std::to_string(kMaxSharedBytesPerBlock));
  if (read.args.size() != kernel->params.size())
    fail(where + ".args", std::to_string(read.args.size()) +
                              " arguments for kernel '" + kernel->name +
                              "', which takes " +
                              std::to_string(kernel->params.size()));
  for (size_t a = 0; a < read.args.size(); ++a)
    checkArg(read.args[a], kernel->params[a],
             where + ".args[" + std::to_string(a) + "]");
  step.args = std::move(read.args);
  step.op = std::move(read.op);
  checkLaunchOp(read.encoding, where, step);
  checkLaunchShapes(step, *kernel, where);
  return step;
}

namespace {

std::string shapeText(const BufferSpec &buffer) {
  std::string text = "[";
  for (size_t d = 0; d < buffer.shape.size(); ++d)
    text += (d ? ", " : "") + (buffer.shape[d].isBatch
                                   ? std::string("M")
                                   : std::to_string(buffer.shape[d].value));
  return text + "]";
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + "]";
}

/// True when `buffer`'s last extent is the number `extent`.
bool lastExtentIs(const BufferSpec &buffer, int64_t extent) {
  return !buffer.shape.empty() && !buffer.shape.back().isBatch &&
         buffer.shape.back().value == extent;
}

} // namespace

/// A launch that binds weight components names its activations by parameter:
/// `x` is the [M, K] input every weight of the launch reads, and `y` (`y.i`)
/// the [M, N] output of the weight bound to `codes` (`codes.i`). Where the
/// kernel has those parameters and they are buffers, their last extents must
/// be the weights' K and N. The weight bound to `y_order` is the one that
/// reads y: its K is y's last extent.
void ArtifactValidator::checkLaunchShapes(const Step &step,
                                          const Kernel &kernel,
                                          const std::string &where) const {
  auto bufferFor = [&](std::string_view param) -> const BufferSpec * {
    for (size_t a = 0; a < step.args.size(); ++a)
      if (kernel.params[a].name == param &&
          step.args[a].kind == Arg::Kind::Buffer)
        return artifact_.findBuffer(step.args[a].name);
    return nullptr;
  };
  const BufferSpec *x = bufferFor("x");
  for (size_t a = 0; a < step.args.size(); ++a) {
    const Arg &arg = step.args[a];
    if (arg.kind != Arg::Kind::Weight)
      continue;
    const WeightSpec &weight = *artifact_.findWeight(arg.name);
    const std::string awhere = where + ".args[" + std::to_string(a) + "]";
    const std::string weightText = "weight '" + weight.name + "' [" +
                                   std::to_string(weight.n) + ", " +
                                   std::to_string(weight.k) + "]";
    const std::string &param = kernel.params[a].name;
    if (param == kYOrderParam) {
      const BufferSpec *y = bufferFor("y");
      if (y && !lastExtentIs(*y, weight.k))
        fail(awhere, weightText + " (y_order) does not fit the launch's y '" +
                         y->name + "' " + shapeText(*y) +
                         " (expected its last extent to be the reader's K = " +
                         std::to_string(weight.k) + ")");
      continue;
    }
    if (x && !lastExtentIs(*x, weight.k))
      fail(awhere, weightText + " does not fit the launch's x '" + x->name +
                       "' " + shapeText(*x) + " (expected x's last extent " +
                       "to be K = " + std::to_string(weight.k) + ")");
    if (param != "codes" && param.rfind("codes.", 0) != 0)
      continue;
    const std::string yParam = "y" + param.substr(5);
    const BufferSpec *y = bufferFor(yParam);
    if (y && !lastExtentIs(*y, weight.n))
      fail(awhere, weightText + " does not fit the launch's " + yParam + " '" +
                       y->name + "' " + shapeText(*y) +
                       " (expected its last extent to be N = " +
                       std::to_string(weight.n) + ")");
  }
}

/// Version 4: "op" names the op a launch runs, and "encoding" (the body of a
/// #qf.enc, verified) the grid of a qf.gptq_block_update.
void ArtifactValidator::checkLaunchOp(const std::string &encoding,
                                      const std::string &where, Step &step) {
  if (step.op == kDequantizeOp)
    checkDequantizeLaunch(step, where);
  if (!encoding.empty()) {
    std::string error;
    if (!format::parseEncoding(encoding, step.encoding, error))
      fail(where + ".encoding",
           "'" + encoding + "' is not an encoding: " + error);
    step.hasEncoding = true;
  }
  if (step.op == kQuantizeOp) {
    requireVersion(format::kArtifactQuantizeVersion, where + ".op",
                   "\"" + step.op + "\" (round-to-nearest on the device)");
    if (!step.hasEncoding)
      fail(where, "a qf.quantize launch names the encoding it quantizes to "
                  "in \"encoding\"");
  }
  if (step.op == "qf.gptq_block_update" && !step.hasEncoding)
    fail(where, "a qf.gptq_block_update launch names its grid in "
                "\"encoding\"");
}

/// Version 5: a qf.dequantize launch reads one weight and writes it, dense,
/// to the buffer bound to its parameter "w" (where gemm steps and
/// qfuse-bench --check find it).
void ArtifactValidator::checkDequantizeLaunch(const Step &step,
                                              const std::string &where) const {
  requireVersion(format::kArtifactWorkspaceVersion, where + ".op",
                 "\"" + step.op + "\" (a weight dequantized for a gemm)");
  const std::string &kernel = artifact_.kernels[step.kernelIndex].name;
  if (dequantizeTarget(artifact_, step).empty())
    fail(where + ".args", "a " + step.op +
                              " launch writes the weight through parameter "
                              "\"w\", bound to a buffer; kernel '" +
                              kernel + "' has none");
  const std::string weight = dequantizeSource(step);
  if (weight.empty())
    fail(where + ".args",
         "a " + step.op + " launch reads a weight; its arguments name none");
  for (size_t a = 0; a < step.args.size(); ++a)
    if (step.args[a].kind == Arg::Kind::Weight && step.args[a].name != weight)
      fail(where + ".args[" + std::to_string(a) + "]",
           "a " + step.op + " launch reads one weight; found '" +
               step.args[a].name + "' besides '" + weight + "'");
}

/// {"x": buf, "weight": w | "weight_buffer": buf, "y": buf, "bias": tensor?,
/// "residual": buf?}: every operand exists and has the dtype and shape the
/// [N, K] matrix implies. A named weight is dense f16 in row_major (what
/// cuBLAS reads as stored); a weight buffer (version 5) holds the matrix
/// row-major, N = y's last extent and K = x's.
Step ArtifactValidator::checkGemm(const schema::Gemm &read,
                                  const std::string &where) {
  Step step;
  step.kind = Step::Kind::Gemm;
  GemmStep &gemm = step.gemm;
  static_cast<schema::Gemm &>(gemm) = read;
  const bool named = !gemm.weight.empty() || gemm.weightBuffer.empty();
  step.target = named ? gemm.weight : gemm.weightBuffer;

  gemm.dtype = gemmDType(gemm, where);
  const GemmShape shape = named ? namedWeightShape(gemm, where)
                                : weightBufferShape(gemm, where);
  const int64_t intMax = std::numeric_limits<int>::max();
  if (shape.n > intMax || shape.k > intMax)
    fail(where + (named ? ".weight" : ".weight_buffer"),
         shape.text + " is too large for cuBLAS's int extents");
  checkGemmOperands(gemm, shape, where);
  checkGemmBias(gemm, shape, where);
  return step;
}

const BufferSpec &
ArtifactValidator::gemmBuffer(const std::string &name,
                              const std::string &where) const {
  const BufferSpec *buffer = artifact_.findBuffer(name);
  if (!buffer)
    fail(where, "buffer '" + name + "' is not declared in 'buffers'");
  return *buffer;
}

/// The one dtype of every operand: x's, f16, or bf16 when the weight is in a
/// buffer (version 5; a named weight is stored f16).
DType ArtifactValidator::gemmDType(const GemmStep &gemm,
                                   const std::string &where) const {
  const BufferSpec &x = gemmBuffer(gemm.x, where + ".x");
  if (x.dtype == DType::F16)
    return DType::F16;
  const std::string found =
      "buffer '" + gemm.x + "' is " + std::string(artifactName(x.dtype));
  if (x.dtype != DType::BF16)
    fail(where + ".x", found + "; a gemm step reads and writes f16 (or, "
                               "with a \"weight_buffer\", bf16)");
  requireVersion(format::kArtifactWorkspaceVersion, where + ".x",
                 found + ": a bf16 gemm step");
  if (gemm.weightBuffer.empty())
    fail(where + ".x", found + "; a gemm step on a named weight reads and "
                               "writes f16 (bf16 needs a \"weight_buffer\")");
  return DType::BF16;
}

GemmShape ArtifactValidator::namedWeightShape(const GemmStep &gemm,
                                              const std::string &where) const {
  const WeightSpec *weight = artifact_.findWeight(gemm.weight);
  if (!weight)
    fail(where + ".weight",
         "weight '" + gemm.weight + "' is not declared in 'weights'");
  const format::Encoding &enc = weight->encodingAttr;
  if (enc.format != format::ElementFormat::F16 || enc.isSparse24() ||
      enc.isQuantized())
    fail(where + ".weight", "weight '" + gemm.weight + "' has encoding \"" +
                                weight->encoding +
                                "\"; a gemm step needs the dense \"f16\"");
  if (!weight->layoutAttr.isRowMajor())
    fail(where + ".weight", "weight '" + gemm.weight + "' has layout \"" +
                                weight->layout +
                                "\"; a gemm step needs \"row_major\"");
  return {weight->n, weight->k,
          "weight '" + gemm.weight + "' [" + std::to_string(weight->n) + ", " +
              std::to_string(weight->k) + "]"};
}

/// N and K from y's and x's last extents; the buffer holds at least N * K
/// elements of the gemm's dtype, whatever its shape (one flat workspace may
/// serve gemms of several shapes), and its shape is static (a weight does
/// not depend on the batch).
GemmShape ArtifactValidator::weightBufferShape(const GemmStep &gemm,
                                               const std::string &where) const {
  auto lastExtent = [&](const char *key, const std::string &name) {
    const BufferSpec &buffer = gemmBuffer(name, where + "." + key);
    if (buffer.shape.size() != 2 || buffer.shape[1].isBatch)
      fail(where + "." + key, "buffer '" + name + "' " + shapeText(buffer) +
                                  " must be [M, " +
                                  (std::string(key) == "x" ? "K" : "N") +
                                  "] with a static last extent");
    return buffer.shape[1].value;
  };
  GemmShape shape;
  shape.k = lastExtent("x", gemm.x);
  shape.n = lastExtent("y", gemm.y);
  const std::string bwhere = where + ".weight_buffer";
  const BufferSpec &buffer = gemmBuffer(gemm.weightBuffer, bwhere);
  shape.text = "the weight in buffer '" + gemm.weightBuffer + "' [" +
               std::to_string(shape.n) + ", " + std::to_string(shape.k) + "]";
  if (buffer.dtype != gemm.dtype)
    fail(bwhere, "buffer '" + gemm.weightBuffer + "' is " +
                     std::string(artifactName(buffer.dtype)) +
                     "; this gemm step reads and writes " +
                     std::string(artifactName(gemm.dtype)) + ", x's dtype");
  uint64_t elements = 1;
  for (const Dim &dim : buffer.shape) {
    if (dim.isBatch)
      fail(bwhere, "buffer '" + gemm.weightBuffer + "' " + shapeText(buffer) +
                       " has \"M\"; a weight buffer has a static shape");
    elements *= static_cast<uint64_t>(dim.value);
  }
  if (elements < uint64_t(shape.n) * uint64_t(shape.k))
    fail(bwhere, "buffer '" + gemm.weightBuffer + "' " + shapeText(buffer) +
                     " holds " + std::to_string(elements) +
                     " elements, fewer than N * K = " + std::to_string(shape.n) +
                     " * " + std::to_string(shape.k) + " for x '" + gemm.x +
                     "' and y '" + gemm.y + "'");
  if (gemm.weightBuffer == gemm.y)
    fail(bwhere, "weight buffer '" + gemm.weightBuffer +
                     "' is also y (cuBLAS would overwrite the weight it reads)");
  return shape;
}

/// x [rows, K], y and residual [rows, N], all of the gemm's dtype; y differs
/// from x (cuBLAS does not multiply in place) and from the residual (which
/// is copied into y before the product accumulates on it).
void ArtifactValidator::checkGemmOperands(const GemmStep &gemm,
                                          const GemmShape &shape,
                                          const std::string &where) const {
  const std::string dtype(artifactName(gemm.dtype));
  // A buffer [rows, cols]; returns its rows (a Dim).
  auto matrix = [&](const char *key, const std::string &name,
                    int64_t cols) -> Dim {
    const BufferSpec &buffer = gemmBuffer(name, where + "." + key);
    if (buffer.dtype != gemm.dtype)
      fail(where + "." + key,
           "buffer '" + name + "' is " +
               std::string(artifactName(buffer.dtype)) +
               "; this gemm step reads and writes " + dtype + ", x's dtype");
    if (buffer.shape.size() != 2 || buffer.shape[1].isBatch ||
        buffer.shape[1].value != cols)
      fail(where + "." + key, "buffer '" + name + "' must be [M, " +
                                  std::to_string(cols) + "] for " + shape.text);
    return buffer.shape[0];
  };
  auto sameRows = [](const Dim &a, const Dim &b) {
    return a.isBatch == b.isBatch && (a.isBatch || a.value == b.value);
  };
  const Dim rows = matrix("x", gemm.x, shape.k);
  if (!sameRows(rows, matrix("y", gemm.y, shape.n)))
    fail(where + ".y",
         "buffer '" + gemm.y + "' has other rows than x '" + gemm.x + "'");
  if (gemm.x == gemm.y)
    fail(where + ".y", "y '" + gemm.y +
                           "' is also x (cuBLAS does not "
                           "multiply in place)");
  if (gemm.residual.empty())
    return;
  if (!sameRows(rows, matrix("residual", gemm.residual, shape.n)))
    fail(where + ".residual", "buffer '" + gemm.residual +
                                  "' has other rows than x '" + gemm.x + "'");
  if (gemm.residual == gemm.y)
    fail(where + ".residual", "residual '" + gemm.residual +
                                  "' is also y; the runtime copies the "
                                  "residual into y, so they must differ");
}

/// A tensor [N] of the gemm's dtype.
void ArtifactValidator::checkGemmBias(const GemmStep &gemm,
                                      const GemmShape &shape,
                                      const std::string &where) const {
  if (gemm.bias.empty())
    return;
  const TensorSpec *bias = artifact_.findTensor(gemm.bias);
  if (!bias)
    fail(where + ".bias",
         "tensor '" + gemm.bias + "' is not declared in 'tensors'");
  if (bias->dtype != gemm.dtype || bias->shape != std::vector<int64_t>{shape.n})
    fail(where + ".bias", "tensor '" + gemm.bias + "' must be " +
                              std::string(artifactName(gemm.dtype)) + " [" +
                              std::to_string(shape.n) + "] (found " +
                              std::string(artifactName(bias->dtype)) + " " +
                              shapeText(bias->shape) + ")");
}

void ArtifactValidator::checkGuard(const schema::PermGuard &guard,
                                   const std::string &where) const {
  const WeightSpec *first = nullptr;
  for (size_t i = 0; i < guard.weights.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const WeightSpec *weight = artifact_.findWeight(guard.weights[i]);
    if (!weight)
      fail(at,
           "weight '" + guard.weights[i] + "' is not declared in 'weights'");
    if (!weight->encodingAttr.actOrder)
      fail(at, "weight '" + weight->name + "' (" + weight->encoding +
                   ") has no perm to compare: a guard names act_order "
                   "weights");
    if (!first)
      first = weight;
    else if (weight->k != first->k)
      fail(at, "weight '" + weight->name +
                   "' has K = " + std::to_string(weight->k) + ", but '" +
                   first->name + "' has K = " + std::to_string(first->k) +
                   " (the weights of a guard read one input)");
  }
}

void ArtifactValidator::checkPlans(std::vector<schema::Plan> &plans) {
  if (plans.empty())
    fail("plans", "no plans (expected one per compiled batch size)");
  std::set<int64_t> batches;
  for (size_t i = 0; i < plans.size(); ++i) {
    const std::string where = "plans[" + std::to_string(i) + "]";
    Plan plan;
    plan.batch = plans[i].batch;
    if (!batches.insert(plan.batch).second)
      fail(where + ".batch",
           "duplicate plan for batch " + std::to_string(plan.batch));
    if (plans[i].steps.empty())
      fail(where + ".steps", "no steps");
    for (size_t s = 0; s < plans[i].steps.size(); ++s) {
      const std::string at = where + ".steps[" + std::to_string(s) + "]";
      schema::PermGuard guard = std::move(plans[i].steps[s].guard);
      checkGuard(guard, at + ".when");
      plan.steps.push_back(checkStep(plans[i].steps[s], at));
      plan.steps.back().guard = std::move(guard);
    }
    artifact_.plans.push_back(std::move(plan));
  }
}

} // namespace qfuse::runtime::detail
