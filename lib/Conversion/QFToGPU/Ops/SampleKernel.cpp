//===- SampleKernel.cpp - qf.sample kernel --------------------------------===//
//
// One block of T threads per row m (grid M). Thread t owns a contiguous
// chunk of the row (C vectors of `width` halves), so that "the first token
// whose cumulative probability passes u", which needs the row in index
// order, is a block scan of T chunk sums. Every pass re-reads the row (L1/L2
// resident: 300 KB for a 152k vocabulary) and recomputes, per element,
//
//   x' = seen ? (x < 0 ? x * r : x / r) : x     repetition penalty
//   z  = x' / temperature                         (NaN -> -inf, -0 -> +0)
//   e  = 2^((z - zmax) log2 e)                    relative probability
//
// Passes (every block-wide value is the same bits in every thread):
//   1. argmax of x' (ties to the lowest id): the greedy answer when the
//      temperature is 0, else zmax.
//   2. top-k: bisection over the order-preserving integer key of z for the
//      largest key K with count(key >= K) >= k (32 counting passes; the k-th
//      value, ties kept).
//   3. top-p: the same bisection on mass(key >= K) >= p * mass(top-k set).
//   4. min-p needs no search: e >= min_p (e is p / p_max).
//   5. the draw: chunk sums of the kept e, an inclusive block scan whose
//      intervals tile [0, S) exactly (each thread's start is its left
//      neighbour's end, the same f32 bits), u * S picks the one chunk, and
//      its thread walks it in index order.
// u is the draw of qfuse/format/Sampling.h (Philox4x32-10), the host
// sampler's uniform: the device and the host agree on the token except when
// u * S lies within f32 rounding of a cumulative boundary.
//
//===----------------------------------------------------------------------===//

#include "Ops/OpKernelCommon.h"

#include "qfuse/format/Sampling.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::qf;
namespace sampling = qfuse::format::sampling;

namespace {

constexpr int64_t kNone = std::numeric_limits<int32_t>::max();
constexpr double kLog2e = 1.4426950408889634;
constexpr int kKeyBits = 32; // bisection steps over a 32-bit key range

/// The order-preserving i32 key of an f32, as the kernel computes it.
int32_t keyOf(float f) {
  int32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits ^ ((bits >> 31) & 0x7FFFFFFF);
}

struct SampleShape {
  int64_t vocab;
  int64_t width;        // halves per vector load
  int64_t threads;      // per block
  int64_t chunkVectors; // contiguous vectors per thread
  bool rowParams;       // params [M, 8], else [1, 8] shared
  bool rowMask;         // penalty_mask [M, V], else [1, V] shared
};

SampleShape chooseShape(int64_t vocab, bool rowParams, bool rowMask) {
  SampleShape s{vocab, halfVectorWidth(vocab), 0, 0, rowParams, rowMask};
  int64_t vectors = vocab / s.width;
  // About 4 vectors per thread before another warp is worth its barriers.
  s.threads = std::clamp<int64_t>((vectors / 4 + 31) / 32 * 32, 32, 1024);
  s.chunkVectors = (vectors + s.threads - 1) / s.threads;
  return s;
}

/// Emits one qf.sample kernel body; see the file comment.
class SampleEmitter {
public:
  SampleEmitter(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                StringRef name, ArrayRef<Value> args, const SampleShape &shape)
      : e(b), b(b), shape(shape), logits(args[0]), params(args[1]),
        mask(args[2]), counters(args[3]), out(args[4]) {
    scratchF = sharedArray(b, module, (name + "_f32").str(), e.f32(), 32);
    scratchI = sharedArray(b, module, (name + "_i32").str(), e.i32(), 32);
  }

  void emit();

private:
  using Combine = function_ref<Value(Value, Value)>;
  using Body =
      function_ref<SmallVector<Value>(Value index, Value z, ValueRange acc)>;

  int64_t warps() const { return shape.threads / 32; }
  Value cu32(uint32_t v) { return e.c32(static_cast<int32_t>(v)); }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, c, t, f);
  }
  Value icmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y);
  }
  Value fcmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, p, x, y);
  }
  Value andi(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value xori(Value x, Value y) { return arith::XOrIOp::create(b, x, y); }

  void loadRow();
  Value transform(Value x, Value seenByte, bool scaled);
  Value key(Value z);
  Value relative(Value z) {
    return exp2Approx(e, e.fmul(e.fsub(z, zmax), e.cf32(kLog2e)));
  }
  SmallVector<Value> overChunk(ValueRange init, bool scaled, Body body);
  Value blockReduce(Value v, Value scratch, Combine combine);
  Best blockBest(Best s);
  Value bisect(Value lo, Value hi, function_ref<Value(Value)> keeps);
  Value countAtLeast(Value k);
  Value massAtLeast(Value k);
  Value uniform();
  void writeId(Value id);
  void emitDraw();

  KernelEmitter e;
  ImplicitLocOpBuilder &b;
  SampleShape shape;
  Value logits, params, mask, counters, out;
  Value scratchF, scratchI;
  Value row, tid, lane, warp;
  Value logitsRow, maskRow; // element offsets of this row
  Value temperature, topK, topP, minP, penalty, seedLow, seedHigh, counter;
  Value zmax;
  Value threshold; // key of the smallest kept z (top-k, top-p)
};

void SampleEmitter::loadRow() {
  row = e.ctaidX();
  tid = e.tidX();
  lane = e.band(tid, e.c32(31));
  warp = e.shru(tid, e.c32(5));
  logitsRow = e.mul(row, e.c32(shape.vocab));
  maskRow = shape.rowMask ? logitsRow : e.c32(0);
  Value paramRow =
      shape.rowParams ? e.mul(row, e.c32(sampling::kParamSlots)) : e.c32(0);
  auto word = [&](Value base, Value index) {
    Value at = e.mul(e.zext64(index), e.c64(4));
    return e.loadRO(e.i32(), e.gepBytes(base, at), 4);
  };
  auto slot = [&](int s) { return word(params, e.add(paramRow, e.c32(s))); };
  auto f32Slot = [&](int s) { return e.bitcast(e.f32(), slot(s)); };
  temperature = f32Slot(sampling::kTemperature);
  topK = slot(sampling::kTopK);
  topP = f32Slot(sampling::kTopP);
  minP = f32Slot(sampling::kMinP);
  penalty = f32Slot(sampling::kRepetitionPenalty);
  seedLow = slot(sampling::kSeedLow);
  seedHigh = slot(sampling::kSeedHigh);
  counter = word(counters, row);
}

/// The penalised logit, divided by the temperature when `scaled` (then NaN
/// becomes -inf, never kept, and -0 becomes +0, so equal values share a
/// key).
Value SampleEmitter::transform(Value x, Value seenByte, bool scaled) {
  Value seen =
      icmp(arith::CmpIPredicate::ne, seenByte, arith::ConstantIntOp::create(
                                                   b, 0, /*width=*/8));
  Value negative = fcmp(arith::CmpFPredicate::OLT, x, e.cf32(0));
  Value penalised =
      select(negative, e.fmul(x, penalty), e.fdiv(x, penalty));
  Value y = select(seen, penalised, x);
  if (!scaled)
    return y;
  y = e.fdiv(y, temperature);
  Value nan = fcmp(arith::CmpFPredicate::UNO, y, y);
  y = select(nan, e.cf32(-std::numeric_limits<double>::infinity()), y);
  return e.fadd(y, e.cf32(0));
}

Value SampleEmitter::key(Value z) {
  Value bits = e.bitcast(e.i32(), z);
  Value sign = arith::ShRSIOp::create(b, bits, e.c32(31));
  return xori(bits, e.band(sign, e.c32(0x7FFFFFFF)));
}

/// Runs `body` over the thread's chunk in index order, carrying `init`;
/// elements past the row leave the carried values unchanged.
SmallVector<Value> SampleEmitter::overChunk(ValueRange init, bool scaled,
                                            Body body) {
  const int64_t width = shape.width;
  const int64_t vectors = shape.vocab / width;
  const bool full = shape.threads * shape.chunkVectors == vectors;
  Value first = e.mul(tid, e.c32(shape.chunkVectors));
  auto loop = scf::ForOp::create(b, e.c32(0), e.c32(shape.chunkVectors),
                                 e.c32(1), init);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value vec = e.add(first, loop.getInductionVar());
  Value valid = full ? Value() : e.ult(vec, e.c32(vectors));
  Value at = full ? vec : e.minu(vec, e.c32(vectors - 1));
  Value element = e.mul(at, e.c32(width));
  SmallVector<Value> xs =
      loadHalves(e, logits, e.add(logitsRow, element), width);
  Value maskPtr = e.gepBytes(mask, e.zext64(e.add(maskRow, element)));
  Type maskType = width == 1 ? e.i8() : VectorType::get({width}, e.i8());
  Value seen = e.loadRO(maskType, maskPtr, static_cast<unsigned>(width));
  SmallVector<Value> acc(loop.getRegionIterArgs());
  for (int64_t k = 0; k < width; ++k) {
    Value z = transform(xs[k], width == 1 ? seen : e.extract(seen, k), scaled);
    SmallVector<Value> next = body(e.add(element, e.c32(k)), z, acc);
    if (valid)
      for (size_t j = 0; j < next.size(); ++j)
        next[j] = select(valid, next[j], acc[j]);
    acc = next;
  }
  scf::YieldOp::create(b, acc);
  return SmallVector<Value>(loop.getResults());
}

/// `combine` over the block, the same bits in every thread: a warp xor
/// butterfly, then the warp results through `scratch` in warp order. The
/// barrier first lets every reduction reuse `scratch`.
Value SampleEmitter::blockReduce(Value v, Value scratch, Combine combine) {
  for (int64_t off = 16; off >= 1; off /= 2)
    v = combine(v, e.shflXor(v, off));
  if (warps() == 1)
    return v;
  NVVM::Barrier0Op::create(b);
  auto write = scf::IfOp::create(
      b, icmp(arith::CmpIPredicate::eq, lane, e.c32(0)), false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(write.thenBlock());
    e.store(v, sharedElement(e, scratch, warp, 4), 4);
  }
  NVVM::Barrier0Op::create(b);
  Type type = v.getType();
  Value total =
      LLVM::LoadOp::create(b, type, sharedElement(e, scratch, e.c32(0), 4), 4);
  for (int64_t w = 1; w < warps(); ++w)
    total = combine(total, LLVM::LoadOp::create(
                               b, type, sharedElement(e, scratch, e.c32(w), 4),
                               4));
  return total;
}

Best SampleEmitter::blockBest(Best s) {
  for (int64_t off = 16; off >= 1; off /= 2)
    s = better(e, s, {e.shflXor(s.value, off), e.shflXor(s.index, off)});
  if (warps() == 1)
    return s;
  NVVM::Barrier0Op::create(b);
  auto write = scf::IfOp::create(
      b, icmp(arith::CmpIPredicate::eq, lane, e.c32(0)), false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(write.thenBlock());
    e.store(s.value, sharedElement(e, scratchF, warp, 4), 4);
    e.store(s.index, sharedElement(e, scratchI, warp, 4), 4);
  }
  NVVM::Barrier0Op::create(b);
  auto load = [&](Type type, Value scratch, int64_t w) {
    return LLVM::LoadOp::create(b, type,
                                sharedElement(e, scratch, e.c32(w), 4), 4);
  };
  Best total{load(e.f32(), scratchF, 0), load(e.i32(), scratchI, 0)};
  for (int64_t w = 1; w < warps(); ++w)
    total = better(e, total,
                   {load(e.f32(), scratchF, w), load(e.i32(), scratchI, w)});
  return total;
}

/// The largest key K in [lo, hi] with keeps(K), given keeps(lo) and that
/// keeps is monotone (true up to some K, false past it).
Value SampleEmitter::bisect(Value lo, Value hi,
                            function_ref<Value(Value)> keeps) {
  auto loop = scf::ForOp::create(b, e.c32(0), e.c32(kKeyBits), e.c32(1),
                                 ValueRange{lo, hi});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value l = loop.getRegionIterArgs()[0], h = loop.getRegionIterArgs()[1];
  // mid = l + ceil((h - l) / 2), in i64: the range can span 2^32 keys.
  Value l64 = arith::ExtSIOp::create(b, e.i64(), l);
  Value h64 = arith::ExtSIOp::create(b, e.i64(), h);
  Value half = arith::ShRSIOp::create(
      b, e.add(e.sub(h64, l64), e.c64(1)), e.c64(1));
  Value mid = arith::TruncIOp::create(b, e.i32(), e.add(l64, half));
  Value ok = keeps(mid);
  scf::YieldOp::create(
      b, ValueRange{select(ok, mid, l), select(ok, h, e.sub(mid, e.c32(1)))});
  return loop.getResult(0);
}

/// How many z of the row have key >= k (f32: exact below 2^24).
Value SampleEmitter::countAtLeast(Value k) {
  SmallVector<Value> mine = overChunk(
      ValueRange{e.cf32(0)}, true,
      [&](Value, Value z, ValueRange acc) -> SmallVector<Value> {
        Value in = icmp(arith::CmpIPredicate::sge, key(z), k);
        return {e.fadd(acc[0], select(in, e.cf32(1), e.cf32(0)))};
      });
  return blockReduce(mine[0], scratchF,
                     [&](Value x, Value y) { return e.fadd(x, y); });
}

/// The unnormalised probability mass of the z with key >= k.
Value SampleEmitter::massAtLeast(Value k) {
  SmallVector<Value> mine = overChunk(
      ValueRange{e.cf32(0)}, true,
      [&](Value, Value z, ValueRange acc) -> SmallVector<Value> {
        Value in = icmp(arith::CmpIPredicate::sge, key(z), k);
        return {e.fadd(acc[0], select(in, relative(z), e.cf32(0)))};
      });
  return blockReduce(mine[0], scratchF,
                     [&](Value x, Value y) { return e.fadd(x, y); });
}

/// u in [0, 1): Philox4x32-10 keyed by the seed at (counter, 0, 0, 0), the
/// top kUniformBits of its first word (qfuse/format/Sampling.h).
Value SampleEmitter::uniform() {
  Value c[4] = {counter, e.c32(0), e.c32(0), e.c32(0)};
  Value k0 = seedLow, k1 = seedHigh;
  auto mulWide = [&](uint32_t m, Value x) {
    Value p = e.mul(e.zext64(x), e.c64(m));
    return std::pair<Value, Value>{
        arith::TruncIOp::create(b, e.i32(), e.shru(p, e.c64(32))),
        arith::TruncIOp::create(b, e.i32(), p)};
  };
  for (int round = 0; round < sampling::kPhiloxRounds; ++round) {
    auto [hi0, lo0] = mulWide(sampling::kPhiloxM0, c[0]);
    auto [hi1, lo1] = mulWide(sampling::kPhiloxM1, c[2]);
    Value next[4] = {xori(xori(hi1, c[1]), k0), lo1, xori(xori(hi0, c[3]), k1),
                     lo0};
    std::copy(std::begin(next), std::end(next), std::begin(c));
    k0 = e.add(k0, cu32(sampling::kPhiloxW0));
    k1 = e.add(k1, cu32(sampling::kPhiloxW1));
  }
  Value top = e.shru(c[0], e.c32(32 - sampling::kUniformBits));
  Value asFloat = arith::UIToFPOp::create(b, e.f32(), top);
  return e.fmul(asFloat, e.cf32(1.0 / double(1u << sampling::kUniformBits)));
}

void SampleEmitter::writeId(Value id) {
  OpBuilder::InsertionGuard guard(b);
  auto write = scf::IfOp::create(
      b, icmp(arith::CmpIPredicate::eq, tid, e.c32(0)), false);
  b.setInsertionPointToStart(write.thenBlock());
  e.store(id, e.gepBytes(out, e.mul(e.zext64(row), e.c64(4))), 4);
}

/// The draw over the kept tokens (key >= threshold, e >= min_p).
void SampleEmitter::emitDraw() {
  auto kept = [&](Value z) {
    Value p = relative(z);
    Value in = andi(icmp(arith::CmpIPredicate::sge, key(z), threshold),
                    andi(fcmp(arith::CmpFPredicate::OGE, p, minP),
                         fcmp(arith::CmpFPredicate::OGT, p, e.cf32(0))));
    return std::pair<Value, Value>{in, p};
  };
  // Each thread's chunk sum and its last kept token.
  SmallVector<Value> chunk = overChunk(
      ValueRange{e.cf32(0), e.c32(-1)}, true,
      [&](Value index, Value z, ValueRange acc) -> SmallVector<Value> {
        auto [in, p] = kept(z);
        return {select(in, e.fadd(acc[0], p), acc[0]),
                select(in, index, acc[1])};
      });
  Value sum = chunk[0];
  // Inclusive scan: within the warp (shfl.up), then the warp totals in
  // order; `start` is bitwise the left neighbour's `end`.
  auto shflUp = [&](Value v, int64_t off) {
    return NVVM::ShflOp::create(b, v.getType(), e.c32(-1), v, e.c32(off),
                                e.c32(0), NVVM::ShflKind::up, UnitAttr())
        .getResult();
  };
  Value inWarp = sum;
  for (int64_t off = 1; off < 32; off *= 2) {
    Value left = shflUp(inWarp, off);
    inWarp = select(icmp(arith::CmpIPredicate::uge, lane, e.c32(off)),
                    e.fadd(inWarp, left), inWarp);
  }
  Value leftInWarp = shflUp(inWarp, 1);
  NVVM::Barrier0Op::create(b);
  {
    OpBuilder::InsertionGuard guard(b);
    auto write = scf::IfOp::create(
        b, icmp(arith::CmpIPredicate::eq, lane, e.c32(31)), false);
    b.setInsertionPointToStart(write.thenBlock());
    e.store(inWarp, sharedElement(e, scratchF, warp, 4), 4);
  }
  NVVM::Barrier0Op::create(b);
  Value chain = e.cf32(0), before = e.cf32(0);
  for (int64_t w = 0; w < warps(); ++w) {
    before = select(icmp(arith::CmpIPredicate::eq, warp, e.c32(w)), chain,
                    before);
    chain = e.fadd(chain, LLVM::LoadOp::create(
                              b, e.f32(),
                              sharedElement(e, scratchF, e.c32(w), 4), 4));
  }
  Value total = chain;
  Value end = e.fadd(before, inWarp);
  Value start = select(icmp(arith::CmpIPredicate::eq, lane, e.c32(0)), before,
                       e.fadd(before, leftInWarp));
  Value target = e.fmul(uniform(), total);
  Value claims = andi(fcmp(arith::CmpFPredicate::OLE, start, target),
                      fcmp(arith::CmpFPredicate::OLT, target, end));
  // The claiming thread walks its chunk; rounding past its end takes its
  // last kept token.
  auto walk = scf::IfOp::create(b, TypeRange{e.i32()}, claims, true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(walk.thenBlock());
    SmallVector<Value> found = overChunk(
        ValueRange{start, e.c32(-1)}, true,
        [&](Value index, Value z, ValueRange acc) -> SmallVector<Value> {
          auto [in, p] = kept(z);
          Value next = e.fadd(acc[0], p);
          Value hit = andi(in, andi(icmp(arith::CmpIPredicate::eq, acc[1],
                                         e.c32(-1)),
                                    fcmp(arith::CmpFPredicate::OLT, target,
                                         next)));
          return {select(in, next, acc[0]), select(hit, index, acc[1])};
        });
    Value id = select(icmp(arith::CmpIPredicate::eq, found[1], e.c32(-1)),
                      chunk[1], found[1]);
    scf::YieldOp::create(b, id);
    b.setInsertionPointToStart(walk.elseBlock());
    scf::YieldOp::create(b, e.c32(-1));
  }
  auto maxi = [&](Value x, Value y) {
    return arith::MaxSIOp::create(b, x, y).getResult();
  };
  Value picked = blockReduce(walk.getResult(0), scratchI, maxi);
  // No claim (u * S rounded up to S): the last kept token, as the host.
  Value last = blockReduce(chunk[1], scratchI, maxi);
  writeId(select(icmp(arith::CmpIPredicate::sge, picked, e.c32(0)), picked,
                 last));
}

void SampleEmitter::emit() {
  loadRow();
  const double inf = std::numeric_limits<double>::infinity();
  SmallVector<Value> mine = overChunk(
      ValueRange{e.cf32(-inf), e.c32(kNone)}, false,
      [&](Value index, Value x, ValueRange acc) -> SmallVector<Value> {
        Best s = better(e, {acc[0], acc[1]}, {x, index});
        return {s.value, s.index};
      });
  Best best = blockBest({mine[0], mine[1]});
  Value greedy = fcmp(arith::CmpFPredicate::OEQ, temperature, e.cf32(0));
  auto branch = scf::IfOp::create(b, greedy, true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  Value none = icmp(arith::CmpIPredicate::eq, best.index, e.c32(kNone));
  writeId(select(none, e.c32(-1), best.index));

  b.setInsertionPointToStart(branch.elseBlock());
  zmax = e.fadd(e.fdiv(best.value, temperature), e.cf32(0));
  Value floorKey = e.c32(keyOf(-std::numeric_limits<float>::infinity()));
  Value topKey = key(zmax);
  // top-k: on when 0 < k < V.
  Value topKOn = andi(icmp(arith::CmpIPredicate::sgt, topK, e.c32(0)),
                      icmp(arith::CmpIPredicate::slt, topK,
                           e.c32(shape.vocab)));
  auto byCount = scf::IfOp::create(b, TypeRange{e.i32()}, topKOn, true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(byCount.thenBlock());
    Value k = arith::SIToFPOp::create(b, e.f32(), topK);
    scf::YieldOp::create(b, bisect(floorKey, topKey, [&](Value mid) {
                           return fcmp(arith::CmpFPredicate::OGE,
                                       countAtLeast(mid), k);
                         }));
    b.setInsertionPointToStart(byCount.elseBlock());
    scf::YieldOp::create(b, floorKey);
  }
  Value kKey = byCount.getResult(0);
  // top-p over the top-k set: on when p < 1.
  Value topPOn = fcmp(arith::CmpFPredicate::OLT, topP, e.cf32(1));
  auto byMass = scf::IfOp::create(b, TypeRange{e.i32()}, topPOn, true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(byMass.thenBlock());
    Value goal = e.fmul(topP, massAtLeast(kKey));
    scf::YieldOp::create(b, bisect(kKey, topKey, [&](Value mid) {
                           return fcmp(arith::CmpFPredicate::OGE,
                                       massAtLeast(mid), goal);
                         }));
    b.setInsertionPointToStart(byMass.elseBlock());
    scf::YieldOp::create(b, kKey);
  }
  threshold = byMass.getResult(0);
  emitDraw();
}

} // namespace

FailureOr<SmallVector<OpLaunch>>
qf::lowerSample(SampleOp op, OpKernelContext &context, int64_t batch) {
  RankedTensorType type = op.getLogits().getType();
  if (failed(requireF16(op, "logits", type)))
    return failure();
  int64_t vocab = type.getDimSize(1);
  if (batch * vocab > std::numeric_limits<int32_t>::max())
    return op.emitOpError() << batch << " x " << vocab
                            << " elements overflow the kernel's i32 index",
           failure();
  // A [1, ...] operand is shared by every row.
  auto perRow = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(0) != 1;
  };
  SampleShape shape = chooseShape(vocab, perRow(op.getParams()),
                                  perRow(op.getPenaltyMask()));
  std::string name = "qf_sample_n" + std::to_string(vocab) +
                     (shape.rowParams ? "_rowparams" : "") +
                     (shape.rowMask ? "_rowmask" : "");
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {
      {"logits", ParamKind::In, operandArg(ctx, 0)},
      {"params", ParamKind::In, operandArg(ctx, 1)},
      {"penalty_mask", ParamKind::In, operandArg(ctx, 2)},
      {"counters", ParamKind::In, operandArg(ctx, 3)},
      {"y", ParamKind::Out, resultArg(ctx, 0)}};
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, shape.threads);
    SampleEmitter(b, context.module, name, args, shape).emit();
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  int64_t shared = 2 * 32 * 4; // the f32 and i32 scratch arrays
  return SmallVector<OpLaunch>{
      makeOpLaunch(name, params, batch, 1, shape.threads, shared)};
}
