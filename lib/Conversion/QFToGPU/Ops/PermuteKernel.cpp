//===- PermuteKernel.cpp - activations into act_order's column order ------===//
//
// An act_order weight is stored with its columns sorted by group
// (format/Layout.h: sorted column j is checkpoint column perm[j]), so the
// tensor-core kernel reads it as a plain weight once the activations are in
// that order too. This kernel writes them into a scratch buffer before the
// matmul, as ExLlama and Marlin do, instead of gathering them inside every
// block of the matmul. perm scatters a row at random, so the row goes
// through shared memory: block (c, m) copies row m there (coalesced vector
// loads, from L2 after the first block of the row), then writes its chunk
// of 2048 sorted columns, W at a time (W = 8 halves where K allows: two
// 16-byte perm loads, W shared loads, one 16-byte store):
//
//   for (v = tid; v < K / W; v += 256)                row[vW..] = x[m, vW..]
//   barrier
//   for (v = c * 2048 / W + tid; v < chunk end; v += 256)
//     xp[m, vW + i] = row[perm[vW + i]]   for i < W     // one vector store
//
// Rows past 48 KB of static shared memory (K > 24576), or past the
// qf-to-gpu option permute-staged-max-k, gather straight from global memory
// instead (each element read once, where staging reads the row once per
// block). One kernel per K serves every batch (M is the grid's y).
//
// The silu_mul variant (an act_order down_proj's silu_mul prologue) takes
// gate and up for x: xp[m, j] = silu(gate[m, perm[j]]) * up[m, perm[j]],
// rounded to f16 as the elementwise kernel rounds it, so exactly the values
// of a silu_mul launch followed by the permute. Staged
// (`qf_permute_silu_mul_k<K>`), one block per row computes the row's
// products once into shared memory and writes the whole row (a block per
// chunk would compute them K / 2048 times); past 48 KB it gathers
// (`qf_permute_silu_mul_k<K>_g`), each product computed where perm[j]
// points.
//
//===----------------------------------------------------------------------===//

#include "Ops/PermuteKernel.h"

#include "Ops/OpKernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Threads of a block that writes one chunk.
constexpr int64_t kThreads = 256;
/// The most threads of a silu_mul block that writes a whole row.
constexpr int64_t kRowThreads = 1024;

/// Columns one block writes.
constexpr int64_t kChunk = 2048;
/// The longest row shared memory holds (48 KB of static shared memory).
constexpr int64_t kMaxSharedK = 24576;

/// The kernel's pointers: (x, perm, xp), or (gate, up, perm, xp) for the
/// silu_mul variant.
struct PermuteArgs {
  Value x, up, perm, xp;
};

/// How a kernel is laid out: W halves a thread moves at once, T threads a
/// block, and whether a block writes a chunk (grid x the chunks) or a row.
struct PermutePlan {
  int64_t k, width, threads;
  bool staged, siluMul, wholeRow;
};

PermutePlan planPermute(int64_t k, bool staged, bool siluMul) {
  PermutePlan p;
  p.k = k;
  p.width = halfVectorWidth(k);
  p.staged = staged;
  p.siluMul = siluMul;
  // Staged products are made once per row, so one block writes the row.
  p.wholeRow = staged && siluMul;
  const int64_t vectors = k / p.width;
  p.threads =
      p.wholeRow
          ? std::min<int64_t>(kRowThreads,
                              std::max<int64_t>(32, (vectors + 31) / 32 * 32))
          : kThreads;
  return p;
}

/// `values` (i16 each) as the raw vector storeRaw takes for their width.
Value packBits(KernelEmitter &e, ArrayRef<Value> values) {
  ImplicitLocOpBuilder &b = e.builder();
  if (values.size() == 1)
    return e.bitcast(e.f16(), values.front());
  auto type = VectorType::get({static_cast<int64_t>(values.size())}, e.i16());
  Value v = LLVM::PoisonOp::create(b, type);
  for (size_t i = 0; i < values.size(); ++i)
    v = LLVM::InsertElementOp::create(b, type, v, values[i],
                                      e.c32(static_cast<int64_t>(i)));
  return e.bitcast(
      values.size() == 2 ? Type(e.i32()) : Type(e.vNi32(values.size() / 2)), v);
}

/// A loop over vectors [first, end) of a row, `step` apart; `body` gets the
/// vector's first column.
void forVectors(KernelEmitter &e, Value first, Value end, int64_t step,
                int64_t width, function_ref<void(Value)> body) {
  ImplicitLocOpBuilder &b = e.builder();
  auto loop = scf::ForOp::create(b, first, end, e.c32(step));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  body(e.mul(loop.getInductionVar(), e.c32(width)));
}

/// silu(gate) * up (f32 values) rounded to f16 as the elementwise silu_mul
/// kernel rounds it, as i16 bits.
Value productOf(KernelEmitter &e, Value gate, Value up) {
  return e.bitcast(e.i16(), e.truncf16(e.siluMul(gate, up)));
}

void buildBody(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module, StringRef name,
               const PermuteArgs &a, const PermutePlan &p) {
  KernelEmitter e(b);
  const int64_t w = p.width, vectors = p.k / p.width;
  Value tid = e.tidX();
  Value rowStart = e.mul(NVVM::BlockIdYOp::create(b, e.i32()), e.c32(p.k));
  auto elementPtr = [&](Value base, Value index) {
    return e.gepBytes(base, e.mul(e.zext64(index), e.c64(2)));
  };
  // Element `column` of the row as 16 bits (x's, or the silu_mul product),
  // from global memory.
  auto rowValue = [&](Value column) -> Value {
    Value index = e.add(rowStart, column);
    Value v = e.loadRO(e.i16(), elementPtr(a.x, index), 2);
    if (!p.siluMul)
      return v;
    auto widen = [&](Value bits) { return e.extf32(e.bitcast(e.f16(), bits)); };
    Value u = e.loadRO(e.i16(), elementPtr(a.up, index), 2);
    return productOf(e, widen(v), widen(u));
  };
  Value row;
  if (p.staged) {
    row = sharedArray(b, module, (name + "_row").str(), e.i16(), p.k);
    forVectors(e, tid, e.c32(vectors), p.threads, w, [&](Value col) {
      Value raw = loadRaw(e, a.x, e.add(rowStart, col), w);
      if (p.siluMul) {
        SmallVector<Value> g = halvesOf(e, raw, w);
        SmallVector<Value> u = loadHalves(e, a.up, e.add(rowStart, col), w);
        SmallVector<Value> products;
        for (int64_t i = 0; i < w; ++i)
          products.push_back(productOf(e, g[i], u[i]));
        raw = packBits(e, products);
      }
      e.store(raw, sharedElement(e, row, col, 2), static_cast<unsigned>(w * 2));
    });
    NVVM::Barrier0Op::create(b);
  }
  // The vectors this block writes: its chunk, or the whole row.
  Value first = tid, end = e.c32(vectors);
  if (!p.wholeRow) {
    Value chunkStart = e.mul(e.ctaidX(), e.c32(kChunk / w));
    first = e.add(chunkStart, tid);
    end = e.minu(e.add(chunkStart, e.c32(kChunk / w)), e.c32(vectors));
  }
  forVectors(e, first, end, p.threads, w, [&](Value col) {
    SmallVector<Value> values;
    for (Value source : loadWords(e, a.perm, col, w))
      values.push_back(
          p.staged ? LLVM::LoadOp::create(b, e.i16(),
                                          sharedElement(e, row, source, 2), 2)
                         .getResult()
                   : rowValue(source));
    storeRaw(e, a.xp, e.add(rowStart, col), packBits(e, values), w);
  });
}

/// The permute launch, plain or silu_mul (emitPermuteLaunch,
/// emitPermuteSiluMulLaunch).
FailureOr<OpLaunch> emitLaunch(Operation *op, gpu::GPUModuleOp module,
                               int64_t rows, int64_t k,
                               ArrayRef<LaunchArgAttr> args, int64_t stagedMaxK,
                               bool siluMul) {
  if (rows * k > std::numeric_limits<int32_t>::max())
    return op->emitOpError() << rows << " x " << k
                             << " activations overflow the permute kernel's "
                                "i32 index",
           failure();
  const bool staged = k <= std::min(stagedMaxK, kMaxSharedK);
  const PermutePlan p = planPermute(k, staged, siluMul);
  std::string name =
      std::string(siluMul ? "qf_permute_silu_mul_k" : "qf_permute_k") +
      std::to_string(k) + (staged ? "" : "_g");
  SmallVector<OpParam> params;
  if (siluMul)
    params = {{"gate", ParamKind::In, args[0]},
              {"up", ParamKind::In, args[1]},
              {"perm", ParamKind::In, args[2]},
              {"xp", ParamKind::Out, args[3]}};
  else
    params = {{"x", ParamKind::In, args[0]},
              {"perm", ParamKind::In, args[1]},
              {"xp", ParamKind::Out, args[2]}};
  if (!module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op->getLoc(), op->getContext());
    SmallVector<Value> v = createOpKernel(b, module, name, params, p.threads);
    PermuteArgs a = siluMul ? PermuteArgs{v[0], v[1], v[2], v[3]}
                            : PermuteArgs{v[0], Value(), v[1], v[2]};
    buildBody(b, module, name, a, p);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  const int64_t blocksPerRow = p.wholeRow ? 1 : (k + kChunk - 1) / kChunk;
  return makeOpLaunch(name, params, blocksPerRow, rows, p.threads,
                      staged ? k * 2 : 0);
}

} // namespace

FailureOr<OpLaunch> qf::emitPermuteLaunch(Operation *op,
                                          gpu::GPUModuleOp module, int64_t rows,
                                          int64_t k,
                                          ArrayRef<LaunchArgAttr> args,
                                          int64_t stagedMaxK) {
  return emitLaunch(op, module, rows, k, args, stagedMaxK, /*siluMul=*/false);
}

FailureOr<OpLaunch> qf::emitPermuteSiluMulLaunch(Operation *op,
                                                 gpu::GPUModuleOp module,
                                                 int64_t rows, int64_t k,
                                                 ArrayRef<LaunchArgAttr> args) {
  return emitLaunch(op, module, rows, k, args, kMaxSharedK, /*siluMul=*/true);
}
