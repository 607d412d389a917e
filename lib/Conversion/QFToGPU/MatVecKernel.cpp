//===- MatVecKernel.cpp - fused dequant-matvec kernel generator -------------===//
//
// One kernel family for decode (batch M = 1..8): each warp streams packed
// weight rows with 16-byte invariant loads (`ld.global.nc.v4`), decodes them
// in registers into half2 pairs, multiplies by the activations (reused across
// the warp's rows), and accumulates per scale span in half2, then in f32
// across spans. Warps are reduced with shuffles; `split_k` warps of a block
// share rows and are reduced through shared memory, so no atomics and no
// second kernel are needed. The tiling contract is that of qf-select-tiling:
//
//   block      = 4 warps (8 when split_k = 8)
//   rowGroups  = warps / split_k      (warp groups working on distinct rows)
//   rowsPerWarp= block_n / rowGroups  (rows a warp handles at once)
//   a warp of slice s covers chunks [s*C/S, (s+1)*C/S) of each of its rows,
//   a chunk being one lane's `vec_bytes` load; lanes take consecutive chunks
//   (coalesced), `k_unroll` chunks per lane are loaded before any is used.
//
// Decoding, per 32-bit word of codes:
//   int4/uint4 (tiled layout: nibble slot i holds element [0,2,4,6,1,3,5,7][i])
//     (w & 0x000F000F) | 0x64006400 = half2(1024 + e0, 1024 + e1)
//     (w & 0x00F000F0) | 0x64006400 = half2(1024 + 16 e2, 1024 + 16 e3)
//     and the same on w >> 8 for (e4, e5), (e6, e7): one lop3 per pair, then
//     one sub or fma removes the 1024 bias and the zero point.
//   int8/uint8: prmt pairs bytes with 0x64 for the same 1024 + u trick.
//   fp8e4m3: cvt.rn.f16x2.e4m3x2 on each 16-bit half.
//   nf4, fp4e2m1, 4-bit codebooks (row_major: byte j = elements 2j, 2j+1):
//     a 16-entry shared-memory table replicated across the 32 banks, so each
//     lane's lookups hit its own bank (conflict-free for random codes); one
//     prmt pairs two looked-up halves.
//   codebooks of 2, 3, 5, 6, 7 bits (LutN): the same replicated table with
//     2^bits entries (512 B for 2 bits, 1 KB for 3, up to 16 KB for 7).
//     Codes are a little-endian bit stream (Packing.h): b words always end
//     on a code boundary (32 codes), so a lane's chunk is `unitWords`
//     loads of vec_bytes (3-bit: 3 x 16 B = 128 codes); a code straddling
//     two words is joined with one shift-or. Decoding goes 8 codes at a
//     time to keep the activations in registers small.
//   8-bit codebooks: replicating 256 entries per bank would take 32 KB per
//     block (6 blocks per SM) and unreplicated 512 B gives ~3.5-way bank
//     conflicts on random codes. The table stores two f16 per word
//     (entries 2c, 2c + 1 in word c), replicated per bank: 16 KB, still
//     conflict-free, and c & 1 folds into the prmt selector that pairs two
//     lookups (no extra instruction per code beyond the selector math).
//   2:4 (f16, int4/uint4 tiled, int8/uint8, fp8): the kept codes decode as
//     above; pair j of a word is quad j's two kept values, and one prmt per
//     pair picks the quad's kept activations by its 4-bit metadata nibble.
//     Scale groups count logical columns (a group of g columns is g / 2
//     stored codes).
//   RMSNorm prologue (`norm`): every block first reduces the sum of squares
//     of its x rows (K x batch f16, read through L2, cheap next to the
//     weight stream at batch <= 8), then each lane normalizes the
//     activations it loads: round_f16(x * rsqrt(mean + eps) * gamma[k]),
//     computed in f32 and rounded to f16 exactly as a separate qf.rms_norm
//     result would be, so the fused matvec reads the values the unfused one
//     reads (f32 sums in another order can move a value by one f16 ulp).
//     Under act_order the gather below normalizes instead.
//   silu_mul (`up_*` parameters): the gate and up weights stay separate
//     tensors; a warp's rows are the gate rows of R/2 outputs followed by
//     the up rows of the same outputs (block_n counts both), read through
//     two sets of weight pointers with the same loop, and the epilogue
//     combines silu(gate) * up once both are reduced.
//   qf.group (horizontal fusion): the members' blocks follow each other in
//     the grid (member i owns ceil(N_i / block outputs) blocks); each block
//     selects its member's pointers and N once, then runs the same body.
//   act_order: the runtime stores the columns sorted by group (Layout.h) so
//     the weight stream is the dense kernel's; each block first gathers
//     x[m, perm[j]] into dynamic shared memory (K x batch x 2 bytes, perm
//     read coalesced, x from L1/L2), then reads activations from there with
//     the same vector loads. A per-word register gather instead would issue 8
//     scattered 2-byte loads per 4-byte word of int4 codes, each touching a
//     different cache line: the LSU, not DRAM, would set the speed.
//
//===----------------------------------------------------------------------===//

#include "MatVecKernel.h"

#include "KernelCommon.h"
#include "KernelEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/format/Layout.h"
#include "qfuse/format/Numerics.h"

#include <numeric>

using namespace mlir;
using namespace mlir::qf;

namespace {

enum class Decode { Int4Magic, Lut4, LutN, Int8Magic, FP8, Sparse24F16 };

/// Code bytes a lane may have in flight (k_unroll x rows x vec_bytes): 32
/// registers, beyond which occupancy drops faster than latency is hidden.
constexpr int64_t kMaxCodeBytesInFlight = 128;

/// Static shared memory a kernel may declare (the limit without opt-in).
constexpr int64_t kMaxStaticShared = 48 * 1024;

/// Shared memory a block may opt in to (static + dynamic): 227 KB on sm_90,
/// 163 KB on sm_80.
int64_t maxBlockShared(int64_t smVersion) {
  return (smVersion >= 90 ? 227 : 163) * 1024;
}

/// Everything derived from the spec that the body needs, checked once.
struct Plan {
  Decode decode = Decode::Int4Magic;
  int64_t bits, vecBytes, elemsPerChunk, rowBytes, chunksPerRow;
  int64_t splitK, warps, rowGroups, rowsPerWarp, unroll, m, n, k;
  int64_t numGroups, spanElems; // spanElems: stored codes sharing one scale
  bool perChannel;
  int64_t zeroRowBytes; // int zero points: packed bytes per row
  // A lane's chunk is `unitWords` loads of vec_bytes: codes of any width
  // 2..8 end on a word boundary every `unitWords` words (3-bit: 3 words =
  // 32 codes), so a chunk holds whole codes.
  int64_t unitWords, unitElems, chunkBytes;
  // Codes decoded (and activations loaded) together: one word, or for
  // LutN at most 8 codes of a unit.
  int64_t stepElems;
  bool sparse;           // 2:4: a stored code stands for 2 logical columns
  int64_t colsPerStored; // 2 under 2:4, else 1
  bool actOrder;         // activations gathered through `perm` into shared
  int64_t lutWords;      // shared code table words (Lut4, LutN), 0 otherwise
  bool norm;             // RMSNorm prologue
  int64_t normVecElems;  // x elements per load of the sum-of-squares pass
  bool gated;            // silu_mul: rows [0, R/2) gate, [R/2, R) up
  int64_t outRowsPerWarp; // outputs a warp produces: R, or R / 2 gated
  int64_t outBlockN;     // outputs a block produces
  int64_t sharedBytes;   // shared memory in total (static + dynamic)
  int64_t dynamicShared; // act_order activations, sized at launch
};

/// Shared words of the replicated code table of `bits`-wide codes: one
/// value per word up to 7 bits (2^bits x 32 banks), two f16 per word for
/// 8 bits (128 x 32 words = 16 KB instead of 32 KB).
int64_t lutWordsFor(int64_t bits) {
  return (bits <= 7 ? int64_t(1) << bits : 128) * 32;
}

FailureOr<Plan> makePlan(const MatVecSpec &spec,
                         function_ref<InFlightDiagnostic()> emitError) {
  EncodingAttr enc = spec.encoding;
  TilingAttr t = spec.tiling;
  Plan p;
  if (!t || t.getKernel() != KernelKind::MatVec)
    return emitError() << "the matvec generator needs a #qf.tiling<matvec, "
                          "...>; run qf-select-tiling",
           failure();
  p.sparse = enc.isSparse24();
  p.colsPerStored = p.sparse ? 2 : 1;
  p.actOrder = enc.getActOrder();
  if (p.actOrder && p.sparse)
    return emitError() << "act_order with 2:4 sparsity has no sorted layout: "
                          "sorting the columns by group would break the "
                          "quads",
           failure();
  switch (enc.getFormat()) {
  case ElementFormat::Int4:
  case ElementFormat::UInt4:
    p.decode = Decode::Int4Magic;
    if (spec.layout.getKind() != LayoutKind::Tiled || spec.layout.getTileN() != 1)
      return emitError() << "int4/uint4 matvec kernels read the pair-"
                            "interleaved #qf.layout<tiled, tile_n = 1, ...>; "
                            "run qf-choose-layout",
             failure();
    break;
  case ElementFormat::NF4:
  case ElementFormat::FP4E2M1:
    p.decode = Decode::Lut4;
    break;
  case ElementFormat::Codebook:
    p.decode = enc.getIndexBits() == 4 ? Decode::Lut4 : Decode::LutN;
    break;
  case ElementFormat::Int8:
  case ElementFormat::UInt8:
    p.decode = Decode::Int8Magic;
    break;
  case ElementFormat::FP8E4M3:
    p.decode = Decode::FP8;
    break;
  case ElementFormat::F16:
    if (enc.isSparse24()) {
      p.decode = Decode::Sparse24F16;
      break;
    }
    [[fallthrough]];
  case ElementFormat::BF16:
    return emitError() << "unquantized dense weights take the cuBLAS path, "
                          "not the matvec generator",
           failure();
  }
  bool needsFP8Convert =
      p.decode == Decode::FP8 ||
      isa_and_present<Float8E4M3FNType>(enc.getScaleType());
  if (needsFP8Convert && spec.smVersion < 89)
    return emitError() << "fp8 E4M3 values or scales need cvt.f16x2.e4m3x2 "
                          "(sm_89 or newer); target is sm_"
                       << spec.smVersion,
           failure();
  if (p.decode != Decode::Int4Magic && !spec.layout.isRowMajor())
    return emitError() << "this format's matvec kernel reads row_major codes",
           failure();

  p.bits = enc.getCodeBits();
  p.vecBytes = t.getVecBytes();
  p.unitWords = p.bits / std::gcd<int64_t>(p.bits, 32);
  // A multi-word chunk (3-bit: 3 loads) is narrowed, not dropped, when the
  // warp's rows would hold more than the in-flight budget (the row split is
  // checked below).
  if (p.unitWords > 1) {
    int64_t warps = t.getSplitK() == 8 ? 8 : 4;
    int64_t rowGroups = std::max<int64_t>(1, warps / t.getSplitK());
    int64_t rows = std::max<int64_t>(1, t.getBlockN() / rowGroups);
    while (p.vecBytes > 4 &&
           rows * p.unitWords * p.vecBytes > kMaxCodeBytesInFlight)
      p.vecBytes /= 2;
  }
  p.unitElems = 32 * p.unitWords / p.bits;
  p.chunkBytes = p.vecBytes * p.unitWords;
  p.elemsPerChunk = p.chunkBytes * 8 / p.bits;
  p.stepElems = p.decode == Decode::LutN ? std::min<int64_t>(8, p.unitElems)
                                         : 32 / p.bits;
  // Under 2:4 a row stores its K / 2 kept values.
  p.rowBytes = (p.sparse ? spec.k / 2 : spec.k) * p.bits / 8;
  if (p.sparse && p.elemsPerChunk % 4 != 0)
    return emitError() << "2:4 kernels load whole bytes of metadata: a lane's "
                          "vec_bytes = "
                       << p.vecBytes << " holds " << p.elemsPerChunk
                       << " kept values; at least 4 (two quads) are needed",
           failure();
  if (p.unitWords == 1 && p.rowBytes % p.vecBytes != 0)
    return emitError() << "vec_bytes = " << p.vecBytes
                       << " does not divide a row's " << p.rowBytes
                       << " packed bytes (K = " << spec.k << ")",
           failure();
  if (p.rowBytes % p.chunkBytes != 0)
    return emitError() << p.bits << "-bit codes end on a word boundary every "
                       << p.unitWords << " words: a lane's chunk of "
                       << p.unitWords << " x vec_bytes = " << p.chunkBytes
                       << " bytes does not divide a row's " << p.rowBytes
                       << " packed bytes (K = " << spec.k << ")",
           failure();
  if (p.decode == Decode::Int4Magic &&
      spec.layout.getTileK() != p.elemsPerChunk)
    return emitError() << "layout tile_k = " << spec.layout.getTileK()
                       << " does not match one lane's load of "
                       << p.elemsPerChunk << " codes",
           failure();
  p.chunksPerRow = p.rowBytes / p.chunkBytes;
  p.splitK = t.getSplitK();
  p.warps = p.splitK == 8 ? 8 : 4;
  if (p.warps % p.splitK != 0)
    return emitError() << "split_k must be 1, 2, 4 or 8, got " << p.splitK,
           failure();
  p.rowGroups = p.warps / p.splitK;
  if (t.getBlockN() % p.rowGroups != 0)
    return emitError() << "block_n = " << t.getBlockN()
                       << " is not a multiple of the " << p.rowGroups
                       << " row groups of a block",
           failure();
  p.rowsPerWarp = t.getBlockN() / p.rowGroups;
  p.m = spec.m;
  if (p.m < 1 || p.m > 8 || p.rowsPerWarp * p.m > 32)
    return emitError() << "matvec takes batch 1..8 and at most 32 row x batch "
                          "accumulators per warp; got batch "
                       << p.m << " with " << p.rowsPerWarp << " rows per warp",
           failure();
  if (t.getThreadsPerRow() != 32)
    return emitError() << "the matvec generator uses a full warp per row "
                          "(threads_per_row = 32)",
           failure();
  p.norm = spec.hasNorm;
  p.gated = spec.gated;
  if (p.gated) {
    if (p.rowsPerWarp % 2 != 0)
      return emitError() << "silu_mul streams the gate and up rows of each "
                            "output together: rows per warp (block_n / "
                         << p.rowGroups << " row groups = " << p.rowsPerWarp
                         << ") must be even",
             failure();
    if (p.actOrder)
      return emitError() << "silu_mul with act_order: gate and up have their "
                            "own column permutations, which one gathered copy "
                            "of the activations cannot serve",
             failure();
    if (enc.getFormat() == ElementFormat::Codebook && enc.getTableName())
      return emitError() << "silu_mul with a named codebook: gate and up "
                            "would each need their own shared code table",
             failure();
    if (spec.hasBias)
      return emitError() << "silu_mul takes no bias", failure();
  }
  if (!spec.groupNs.empty()) {
    if (p.gated)
      return emitError() << "a qf.group of silu_mul matmuls is not supported",
             failure();
    if (p.actOrder || (enc.getFormat() == ElementFormat::Codebook &&
                       enc.getTableName()))
      return emitError() << "a qf.group cannot share "
                         << (p.actOrder ? "act_order activations"
                                        : "a named codebook table")
                         << " between weights",
             failure();
  }
  p.outRowsPerWarp = p.gated ? p.rowsPerWarp / 2 : p.rowsPerWarp;
  p.outBlockN = p.gated ? t.getBlockN() / 2 : t.getBlockN();
  p.normVecElems = 1;
  for (int64_t v : {8, 4, 2})
    if (spec.k % v == 0) {
      p.normVecElems = v;
      break;
    }
  p.unroll = t.getKUnroll();
  // Multi-word chunks (3-, 5-, 6-, 7-bit codes) are several loads already:
  // unroll less rather than hold more than the in-flight budget.
  if (p.unitWords > 1)
    p.unroll = std::max<int64_t>(
        1, std::min(p.unroll,
                    kMaxCodeBytesInFlight / (p.rowsPerWarp * p.chunkBytes)));
  p.n = spec.n;
  p.k = spec.k;
  p.perChannel = enc.isPerChannel();
  p.numGroups = enc.getNumGroups(spec.k);
  // Half2 sums span at most 32 stored codes (16 products per half) before
  // they are scaled into the f32 accumulator.
  int64_t maxSpan = std::min<int64_t>(p.elemsPerChunk, 32);
  if (p.perChannel || !enc.isQuantized()) {
    p.spanElems = maxSpan;
  } else {
    int64_t g = enc.getGroupSize();
    // Groups count logical columns; under 2:4 a group of g columns holds
    // g / 2 stored codes.
    int64_t gs = g / p.colsPerStored;
    if (g % p.colsPerStored != 0 || gs % p.stepElems != 0 ||
        (gs % p.elemsPerChunk != 0 && p.elemsPerChunk % gs != 0))
      return emitError() << "group size " << g
                         << " does not align with the kernel's "
                         << p.stepElems * p.colsPerStored << "-code words and "
                         << p.elemsPerChunk * p.colsPerStored << "-code loads"
                         << (p.sparse ? " (logical columns under 2:4)" : ""),
             failure();
    p.spanElems = std::min(gs, maxSpan);
  }
  p.zeroRowBytes = (p.numGroups * p.bits + 7) / 8;

  p.lutWords = p.decode == Decode::Lut4   ? 16 * 32
               : p.decode == Decode::LutN ? lutWordsFor(p.bits)
                                          : 0;
  int64_t partials = p.splitK > 1 ? p.warps * p.rowsPerWarp * p.m * 4 : 0;
  // act_order's activations are dynamic shared memory (the runtime opts in
  // past 48 KB); the rest is static.
  p.dynamicShared = p.actOrder ? p.k * p.m * 2 : 0;
  // RMSNorm: each warp's partial sum of squares per batch row.
  int64_t normPartials = p.norm ? p.warps * p.m * 4 : 0;
  p.sharedBytes = partials + normPartials + p.lutWords * 4 + p.dynamicShared;
  int64_t limit = p.actOrder ? maxBlockShared(spec.smVersion)
                             : kMaxStaticShared;
  if (p.sharedBytes > limit)
    return emitError() << "the kernel needs " << p.sharedBytes
                       << " bytes of shared memory ("
                       << (p.actOrder ? "act_order activations K x batch x 2 "
                                        "= " +
                                            std::to_string(p.dynamicShared) +
                                            ", "
                                      : std::string())
                       << "code table " << p.lutWords * 4 << ", partial sums "
                       << partials << "), more than the " << limit
                       << " a block may use on sm_" << spec.smVersion,
           failure();
  return p;
}

/// The kernel arguments of one packed weight (absent components are null).
struct WeightArgs {
  Value codes, scales, meta, zeros, globalScale;
};

/// Builds the kernel body. Values that depend on one row or one chunk are
/// computed where they are used; the plan holds the compile-time shape.
class MatVecBuilder {
public:
  MatVecBuilder(ImplicitLocOpBuilder &b, const MatVecSpec &spec, const Plan &p,
                gpu::GPUModuleOp module, StringRef name)
      : b(b), e(b), spec(spec), p(p), module(module), name(name) {}

  KernelLaunch build();

private:
  Value groupIndex(Value row, Value group);
  double valueScale() const;
  int64_t minBlocksPerSM() const;
  Value loadScaleTyped(Value base, Value idx);
  Value zeroAt(const WeightArgs &w, Value row, Value group);
  void computeRowScales();
  Value normalize(Value xBits, Value gammaBits, int64_t m);
  Value normalizeWord(Value xWord, Value gammaWord, int64_t m);
  SmallVector<Value> decodeWord(Value word, Value zero);
  SmallVector<Value> decodeLutN(ArrayRef<Value> unit, int64_t first,
                                int64_t count);
  Value tableValue(Value index);
  void buildLut();
  void gatherActivations();
  Value loadX(Type type, Value elemOffset, unsigned align);
  SmallVector<Value> body(ArrayRef<Value> chunks, ArrayRef<Value> rows,
                          ValueRange acc);
  void reduceAndStore(ArrayRef<Value> acc, Value tid, Value warp, Value lane);
  void storeOutput(Value total, Value upTotal, Value row, Value m);
  /// The weight whose pointers row slot `r` of a warp reads: 1 (up) for
  /// the second half of a gated warp's rows, else 0.
  int64_t weightOf(int64_t r) const {
    return p.gated && r >= p.outRowsPerWarp ? 1 : 0;
  }

  ImplicitLocOpBuilder &b;
  KernelEmitter e;
  const MatVecSpec &spec;
  const Plan &p;
  gpu::GPUModuleOp module;
  std::string name;
  // Kernel arguments: the weight's components, and the up projection's
  // under silu_mul (weights[1]).
  WeightArgs weights[2];
  Value x, normGamma, perm, table, bias, residual, y;
  Value blockId; // this block's index within its group member's blocks
  Value nRows;   // N of this block's member (spec.n without a group)
  SmallVector<Value> rowScale; // RMSNorm: rsqrt(mean(x[m]^2) + eps), per m
  Value normSmem;               // RMSNorm: shared partial sums of squares
  Value xs;       // act_order: shared activations in sorted column order
  Value lut;      // shared code table, one copy per bank (Lut4, LutN)
  Value laneBytes; // 4 * lane: this lane's column of the table
  LLVM::GlobalOp codeTable; // constant code values (Lut4, built-in tables)
  Value redSmem;  // shared f32 partial sums
  KernelLaunch launch;
};

LLVM::GlobalOp sharedArray(OpBuilder &b, gpu::GPUModuleOp module, Location loc,
                           StringRef name, Type element, int64_t count) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(element, count);
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false,
                                LLVM::Linkage::Internal, name, Attribute(),
                                /*alignment=*/16, /*addrSpace=*/3);
}

Value sharedAddr(ImplicitLocOpBuilder &b, LLVM::GlobalOp global) {
  return LLVM::AddressOfOp::create(b, global);
}

Value MatVecBuilder::groupIndex(Value row, Value group) {
  return p.perChannel ? row : e.add(e.mul(row, e.c32(p.numGroups)), group);
}

/// Loads element `idx` of a tensor stored in the encoding's scale type and
/// returns it as f32 (scales, and float zero points, use this type).
Value MatVecBuilder::loadScaleTyped(Value base, Value idx) {
  Type st = spec.encoding.getScaleType();
  Value idx64 = e.zext64(idx);
  if (st.isF16()) {
    Value ptr = e.gepBytes(base, e.mul(idx64, e.c64(2)));
    return e.extf32(e.loadRO(e.f16(), ptr, 2));
  }
  if (st.isF32()) {
    Value ptr = e.gepBytes(base, e.mul(idx64, e.c64(4)));
    return e.loadRO(e.f32(), ptr, 4);
  }
  if (st.isBF16()) {
    Value ptr = e.gepBytes(base, e.mul(idx64, e.c64(2)));
    Value bits16 = e.loadRO(e.i16(), ptr, 2);
    Value bits32 = arith::ShLIOp::create(
        b, arith::ExtUIOp::create(b, e.i32(), bits16), e.c32(16));
    return e.bitcast(e.f32(), bits32);
  }
  Value byte = e.loadRO(e.i8(), e.gepBytes(base, idx64), 1);
  if (isa<Float8E8M0FNUType>(st)) {
    // E8M0: the byte is a biased exponent: 2^(byte - 127).
    Value exp = arith::ExtUIOp::create(b, e.i32(), byte);
    return e.bitcast(e.f32(), arith::ShLIOp::create(b, exp, e.c32(23)));
  }
  // E4M3 (NVFP4 block scales): convert through the hardware's fp8 path.
  Value h = e.ptx("cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", e.i32(),
                  {arith::ExtUIOp::create(b, e.i16(), byte)});
  return e.extf32(e.extract(e.bitcast(e.v2f16(), h), 0));
}

/// The zero point of (row, group), as the half2 the decoder subtracts:
/// integer zeros as half2(1024 + z) / valueScale (the codes' magic bias),
/// float zeros as half2(z) / valueScale. Dividing by a power of two is exact.
Value MatVecBuilder::zeroAt(const WeightArgs &w, Value row, Value group) {
  Value zeros = w.zeros;
  EncodingAttr enc = spec.encoding;
  switch (enc.getZeroPoint()) {
  case ZeroPointKind::None:
    return {};
  case ZeroPointKind::Float: {
    Value z = e.truncf16(e.fmul(loadScaleTyped(zeros, groupIndex(row, group)),
                                e.cf32(1.0 / valueScale())));
    Value bits = arith::ExtUIOp::create(b, e.i32(), e.bitcast(e.i16(), z));
    Value h2 =
        arith::OrIOp::create(b, bits, arith::ShLIOp::create(b, bits, e.c32(16)));
    return e.bitcast(e.v2f16(), h2);
  }
  case ZeroPointKind::Int:
    break;
  }
  Value g = p.perChannel ? e.c32(0) : group;
  Value zRow = e.mul(e.zext64(row), e.c64(p.zeroRowBytes));
  Value z;
  if (p.bits == 4) {
    Value byte = e.loadRO(
        e.i8(), e.gepBytes(zeros, e.add(zRow, e.zext64(e.shru(g, e.c32(1))))),
        1);
    Value shift = e.mul(e.band(g, e.c32(1)), e.c32(4));
    z = e.band(e.shru(arith::ExtUIOp::create(b, e.i32(), byte), shift),
               e.c32(15));
  } else {
    Value byte =
        e.loadRO(e.i8(), e.gepBytes(zeros, e.add(zRow, e.zext64(g))), 1);
    z = arith::ExtUIOp::create(b, e.i32(), byte);
  }
  // half(1024 + z) has bits 0x6400 | z; replicate into both lanes.
  Value h = arith::OrIOp::create(b, z, e.c32(0x6400));
  Value h2 = arith::OrIOp::create(b, h, arith::ShLIOp::create(b, h, e.c32(16)));
  return e.fmul(e.bitcast(e.v2f16(), h2), e.ch2(1.0 / valueScale()));
}

/// Resident blocks per SM to ask ptxas for (see build()).
int64_t MatVecBuilder::minBlocksPerSM() const {
  int64_t R = p.rowsPerWarp, M = p.m;
  int64_t codes = p.unroll * R * p.vecBytes / 4;
  int64_t estimate = 24 + codes + 2 * R * M + 4 * M + 8;
  // RMSNorm: the row scales, gamma words and f32 temporaries.
  if (p.norm)
    estimate += M + 8;
  int64_t budget = std::min<int64_t>(255, estimate * 3 / 2);
  int64_t threads = p.warps * 32;
  int64_t blocks = std::clamp<int64_t>(65536 / (threads * budget), 1,
                                       2048 / threads);
  // Asking for more blocks than shared memory lets reside would only
  // squeeze registers: 228 KB per SM, 1 KB of it reserved per block.
  if (p.sharedBytes > 0)
    blocks = std::clamp<int64_t>(228 * 1024 / (p.sharedBytes + 1024), 1,
                                 blocks);
  return blocks;
}

/// Decoded values are the true codes divided by this power of two (keeps
/// half2 span sums in range); the span's scale is multiplied back by it.
double MatVecBuilder::valueScale() const {
  switch (p.decode) {
  case Decode::Int4Magic:
    return 8;
  case Decode::Int8Magic:
    return 128;
  case Decode::FP8:
    return 256;
  case Decode::Lut4:
  case Decode::LutN:
  case Decode::Sparse24F16:
    return 1;
  }
  llvm_unreachable("unknown decode");
}

/// Decodes one 32-bit word of codes into half2 pairs in element order,
/// with the zero point (or the symmetric offset) already removed.
SmallVector<Value> MatVecBuilder::decodeWord(Value w, Value zero) {
  SmallVector<Value> pairs;
  auto h2 = [&](Value i) { return e.bitcast(e.v2f16(), i); };
  ZeroPointKind zk = spec.encoding.getZeroPoint();
  switch (p.decode) {
  case Decode::Int4Magic: {
    // Values come out divided by 8 (exactly: a power of two) so that the
    // half2 span sums stay far from f16's range; valueScale() undoes it.
    Value w8 = e.shru(w, e.c32(8));
    for (Value src : {w, w8}) {
      Value lo = h2(e.andOr(src, 0x000F000F, 0x64006400)); // 1024 + e
      Value hi = h2(e.andOr(src, 0x00F000F0, 0x64006400)); // 1024 + 16 e
      if (zk == ZeroPointKind::Float) {
        // (e - z) / 8 = (lo - 1024) / 8 - z / 8; `zero` holds z / 8.
        pairs.push_back(e.fsub(e.fma(lo, e.ch2(0.125), e.ch2(-128)), zero));
        pairs.push_back(
            e.fsub(e.fma(hi, e.ch2(1.0 / 128), e.ch2(-8)), zero));
      } else {
        // (e - z) / 8 = lo / 8 - (1024 + z) / 8 = hi / 128 - (64 + z) / 8,
        // with z = 8 for int4 (stored q + 8); `zero` holds (1024 + z) / 8.
        Value bias = zk == ZeroPointKind::Int ? zero : e.ch2((1024 + 8) / 8.0);
        pairs.push_back(e.fma(lo, e.ch2(0.125), e.fneg(bias)));
        pairs.push_back(
            e.fma(hi, e.ch2(1.0 / 128), e.fsub(e.ch2(120), bias)));
      }
    }
    break;
  }
  case Decode::Int8Magic: {
    // (1024 + u) / 128 - (1024 + z) / 128 = (u - z) / 128, exact in f16.
    bool isSigned = spec.encoding.getFormat() == ElementFormat::Int8;
    Value u = isSigned ? arith::XOrIOp::create(b, w, e.c32(0x80808080))
                       : w;
    Value magic = e.c32(0x64646464);
    for (uint32_t selector : {0x4140u, 0x4342u}) {
      Value v = h2(e.prmt(u, magic, selector)); // 1024 + u
      if (zk == ZeroPointKind::Float)
        pairs.push_back(
            e.fsub(e.fma(v, e.ch2(1.0 / 128), e.ch2(-8)), zero));
      else
        pairs.push_back(e.fma(
            v, e.ch2(1.0 / 128),
            e.fneg(zk == ZeroPointKind::Int ? zero : e.ch2(1152.0 / 128))));
    }
    break;
  }
  case Decode::FP8: {
    for (int64_t half = 0; half < 2; ++half) {
      Value bits = arith::TruncIOp::create(
          b, e.i16(), half ? e.shru(w, e.c32(16)) : w);
      Value v =
          h2(e.ptx("cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", e.i32(), {bits}));
      pairs.push_back(e.fmul(v, e.ch2(1.0 / 256))); // |e4m3| <= 448

    }
    break;
  }
  case Decode::Sparse24F16:
    // The two kept f16 values of one group of 4 columns, as stored.
    pairs.push_back(h2(w));
    break;
  case Decode::LutN:
    llvm_unreachable("LutN codes are decoded per unit (decodeLutN)");
  case Decode::Lut4: {
    // Code c of this lane is at word c * 32 + lane: every lane reads its own
    // bank, so random codes never conflict. Byte offset (c << 7) + 4 lane,
    // with c taken straight from its nibble by one shift and one mask.
    auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
    auto lookup = [&](int64_t nibble) {
      int64_t shift = 4 * nibble - 7; // nibble bits -> bits 7..10
      Value moved = shift >= 0 ? e.shru(w, e.c32(shift))
                               : arith::ShLIOp::create(b, w, e.c32(-shift));
      Value off = e.add(e.band(moved, e.c32(15 << 7)), laneBytes);
      Value ptr = LLVM::GEPOp::create(b, sharedPtr, e.i8(), lut,
                                      ValueRange{off});
      return LLVM::LoadOp::create(b, e.i32(), ptr, 4).getResult();
    };
    for (int64_t j = 0; j < 4; ++j) // byte j: elements 2j (low), 2j+1
      pairs.push_back(h2(e.prmt(lookup(2 * j), lookup(2 * j + 1), 0x5410)));
    break;
  }
  }
  return pairs;
}

/// Decodes `count` codes (an even number) of a LutN unit, starting at code
/// `first`, into half2 pairs. Code i of a unit sits at bits [i*b, (i+1)*b)
/// of the unit's words taken as one little-endian bit stream (Packing.h),
/// so a 3-bit code may straddle two words; each code is moved straight into
/// the byte-offset field of its table entry. The table (buildLut) holds
/// entry c for lane l at word c * 32 + l (bits <= 7), or entries 2c, 2c+1 as
/// the two halves of word c * 32 + l (8 bits): every lane reads its own bank.
SmallVector<Value> MatVecBuilder::decodeLutN(ArrayRef<Value> unit,
                                             int64_t first, int64_t count) {
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  int64_t bits = p.bits;
  // Bits [pos, pos + b) of the result hold code i (masked by fieldMask).
  auto field = [&](int64_t i, int64_t pos, uint32_t fieldMask) -> Value {
    int64_t bit = i * bits, wi = bit / 32, sh = bit % 32;
    auto shl = [&](Value v, int64_t n) -> Value {
      return n == 0 ? v : arith::ShLIOp::create(b, v, e.c32(n)).getResult();
    };
    auto shr = [&](Value v, int64_t n) -> Value {
      return n == 0 ? v : e.shru(v, e.c32(n));
    };
    Value v;
    if (sh + bits <= 32) {
      v = sh >= pos ? shr(unit[wi], sh - pos) : shl(unit[wi], pos - sh);
    } else {
      Value code = arith::OrIOp::create(b, shr(unit[wi], sh),
                                        shl(unit[wi + 1], 32 - sh));
      v = shl(code, pos);
    }
    return e.band(v, e.c32(fieldMask));
  };
  auto lookup = [&](Value off) -> Value {
    Value ptr = LLVM::GEPOp::create(b, sharedPtr, e.i8(), lut,
                                    ValueRange{e.add(off, laneBytes)});
    return LLVM::LoadOp::create(b, e.i32(), ptr, 4).getResult();
  };
  SmallVector<Value> pairs;
  for (int64_t j = 0; j < count / 2; ++j) {
    int64_t i0 = first + 2 * j, i1 = i0 + 1;
    if (bits <= 7) {
      uint32_t fm = ((1u << bits) - 1) << 7; // c * 128 bytes
      Value v0 = lookup(field(i0, 7, fm)), v1 = lookup(field(i1, 7, fm));
      pairs.push_back(e.bitcast(e.v2f16(), e.prmt(v0, v1, 0x5410)));
      continue;
    }
    // 8 bits: word c >> 1 holds entries (c & ~1, c | 1); c & 1 picks the
    // half, folded into one prmt selector: bytes {0,1} or {2,3} of v0 and
    // {4,5} or {6,7} of v1.
    uint32_t fm = 0x7Fu << 7; // (c >> 1) * 128 bytes
    Value v0 = lookup(field(i0, 6, fm)), v1 = lookup(field(i1, 6, fm));
    Value sel = e.add(e.c32(0x5410),
                      e.add(e.mul(field(i0, 0, 1), e.c32(0x22)),
                            e.mul(field(i1, 0, 1), e.c32(0x2200))));
    pairs.push_back(e.bitcast(
        e.v2f16(),
        e.ptx("prmt.b32 $0, $1, $2, $3;", "=r,r,r,r", e.i32(), {v0, v1, sel})));
  }
  return pairs;
}

Value MatVecBuilder::tableValue(Value index) {
  return codeTableValue(b, module, name, spec.encoding, table, index,
                        codeTable, e.f16());
}

/// Fills the shared table, each entry replicated in all 32 banks: word
/// c * 32 + l holds value(c) for lane l in its low half (Lut4, LutN up to
/// 7 bits), or value(2c) | value(2c + 1) << 16 (8 bits).
void MatVecBuilder::buildLut() {
  Value tid = e.tidX();
  int64_t threads = p.warps * 32;
  bool twoPerWord = p.decode == Decode::LutN && p.bits == 8;
  auto loop = scf::ForOp::create(b, tid, e.c32(p.lutWords), e.c32(threads));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value c = e.shru(t, e.c32(5));
    auto bitsOf = [&](Value index) -> Value {
      return arith::ExtUIOp::create(b, e.i32(),
                                    e.bitcast(e.i16(), tableValue(index)));
    };
    Value entry;
    if (twoPerWord) {
      Value c2 = e.mul(c, e.c32(2));
      entry = arith::OrIOp::create(
          b, bitsOf(c2),
          arith::ShLIOp::create(b, bitsOf(e.add(c2, e.c32(1))), e.c32(16)));
    } else {
      entry = bitsOf(c);
    }
    auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
    Value ptr = LLVM::GEPOp::create(b, sharedPtr, e.i8(), lut,
                                    ValueRange{e.mul(t, e.c32(4))});
    LLVM::StoreOp::create(b, entry, ptr, 4);
  }
  NVVM::Barrier0Op::create(b);
}

/// act_order: copies the activations into shared memory in the sorted column
/// order of the weight (Layout.h): xs[m, j] = x[m, perm[j]]. `perm` is read
/// coalesced; the gather hits x, which every block reads and L1/L2 keep
/// (K x batch x 2 bytes). The main loop then reads xs exactly as the dense
/// kernel reads x, so the weight stream is unchanged.
void MatVecBuilder::gatherActivations() {
  Value tid = e.tidX();
  int64_t threads = p.warps * 32;
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto loop = scf::ForOp::create(b, tid, e.c32(p.k), e.c32(threads));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value col =
        e.loadRO(e.i32(), e.gepBytes(perm, e.mul(e.zext64(j), e.c64(4))), 4);
    Value gamma;
    if (p.norm)
      gamma = e.extf32(e.loadRO(
          e.f16(), e.gepBytes(normGamma, e.mul(e.zext64(col), e.c64(2))), 2));
    for (int64_t m = 0; m < p.m; ++m) {
      Value src = e.gepBytes(
          x, e.mul(e.zext64(e.add(e.c32(m * p.k), col)), e.c64(2)));
      Value v = e.loadRO(e.i16(), src, 2);
      if (p.norm) {
        // The RMSNorm prologue, as normalizeWord does for one value.
        Value xf = e.extf32(e.bitcast(e.f16(), v));
        v = e.bitcast(e.i16(),
                      e.truncf16(e.fmul(e.fmul(xf, rowScale[m]), gamma)));
      }
      Value dst = LLVM::GEPOp::create(
          b, sharedPtr, e.i8(), xs,
          ValueRange{e.mul(e.add(e.c32(m * p.k), j), e.c32(2))});
      LLVM::StoreOp::create(b, v, dst, 2);
    }
  }
  NVVM::Barrier0Op::create(b);
}

/// RMSNorm prologue: rowScale[m] = 1 / sqrt(sum_k x[m, k]^2 / K + eps) for
/// every batch row, in every thread. The block's threads stride over K with
/// `normVecElems`-wide loads, summing in f32; warps reduce with shuffles and
/// combine through shared memory. x is read again by the main loop, from
/// L1/L2: K x batch x 2 bytes, small next to the weight rows.
void MatVecBuilder::computeRowScales() {
  int64_t M = p.m, v = p.normVecElems, threads = p.warps * 32;
  Value tid = e.tidX();
  Type loadType = v == 1 ? Type(e.i16()) : Type(e.vNi32(v / 2));
  SmallVector<Value> init(M, e.cf32(0.0));
  auto loop =
      scf::ForOp::create(b, tid, e.c32(p.k / v), e.c32(threads), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value col = e.mul(loop.getInductionVar(), e.c32(v));
    SmallVector<Value> next;
    for (int64_t m = 0; m < M; ++m) {
      Value off = e.mul(e.zext64(e.add(e.c32(m * p.k), col)), e.c64(2));
      Value bits = e.loadRO(loadType, e.gepBytes(x, off), v * 2);
      Value acc = loop.getRegionIterArgs()[m];
      if (v == 1) {
        Value f = e.extf32(e.bitcast(e.f16(), bits));
        acc = e.fma(f, f, acc);
      } else {
        for (int64_t i = 0; i < v / 2; ++i) {
          Value pair = e.bitcast(e.v2f16(), e.extract(bits, i));
          for (int64_t h = 0; h < 2; ++h) {
            Value f = e.extf32(e.extract(pair, h));
            acc = e.fma(f, f, acc);
          }
        }
      }
      next.push_back(acc);
    }
    scf::YieldOp::create(b, next);
  }
  Value lane = e.band(tid, e.c32(31));
  Value warp = e.shru(tid, e.c32(5));
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto slot = [&](Value index) {
    return LLVM::GEPOp::create(b, sharedPtr, e.i8(), normSmem,
                               ValueRange{e.mul(index, e.c32(4))});
  };
  SmallVector<Value> sums(loop.getResults());
  for (Value &sum : sums)
    for (int64_t off = 16; off >= 1; off /= 2)
      sum = e.fadd(sum, e.shflXor(sum, off));
  auto writeIf = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, e.c32(0)),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(writeIf.thenBlock());
    for (int64_t m = 0; m < M; ++m)
      LLVM::StoreOp::create(
          b, sums[m], slot(e.add(e.mul(warp, e.c32(M)), e.c32(m))), 4);
  }
  NVVM::Barrier0Op::create(b);
  rowScale.clear();
  for (int64_t m = 0; m < M; ++m) {
    Value total = e.cf32(0.0);
    for (int64_t w = 0; w < p.warps; ++w)
      total = e.fadd(total, LLVM::LoadOp::create(b, e.f32(),
                                                 slot(e.c32(w * M + m)), 4));
    // 1 / sqrt.rn (not rsqrt.approx): the CPU reference and the separate
    // norm kernel compute the scale to f32 precision.
    Value mean =
        e.fadd(e.fmul(total, e.cf32(1.0 / static_cast<double>(p.k))),
               e.cf32(spec.normEps));
    Value root = e.ptx("sqrt.rn.f32 $0, $1;", "=f,f", e.f32(), {mean});
    rowScale.push_back(e.fdiv(e.cf32(1.0), root));
  }
}

/// One f16 pair of activations under the RMSNorm prologue:
/// round_f16(x * rowScale[m] * gamma) per half, in f32, so the values are
/// those a separate qf.rms_norm would have written.
Value MatVecBuilder::normalizeWord(Value xWord, Value gammaWord, int64_t m) {
  Value xh = e.bitcast(e.v2f16(), xWord);
  Value gh = e.bitcast(e.v2f16(), gammaWord);
  Value half[2];
  for (int64_t h = 0; h < 2; ++h)
    half[h] = e.fmul(e.fmul(e.extf32(e.extract(xh, h)), rowScale[m]),
                     e.extf32(e.extract(gh, h)));
  // cvt.rn.f16x2.f32 d, a, b puts a in the upper half.
  return e.ptx("cvt.rn.f16x2.f32 $0, $1, $2;", "=r,f,f", e.i32(),
               {half[1], half[0]});
}

/// Activations at element offset `elem` (m * K + column): from x, or from
/// the sorted copy in shared memory under act_order.
Value MatVecBuilder::loadX(Type type, Value elem, unsigned align) {
  if (!p.actOrder)
    return e.loadRO(type, e.gepBytes(x, e.mul(e.zext64(elem), e.c64(2))),
                    align);
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  Value ptr = LLVM::GEPOp::create(b, sharedPtr, e.i8(), xs,
                                  ValueRange{e.mul(elem, e.c32(2))});
  return LLVM::LoadOp::create(b, type, ptr, align);
}

/// Loads and accumulates the chunks `chunks` (one per unrolled step) of the
/// warp's rows. All code words are loaded first so `k_unroll` x rows 16-byte
/// loads are in flight before the first is used.
SmallVector<Value> MatVecBuilder::body(ArrayRef<Value> chunks,
                                       ArrayRef<Value> rows, ValueRange acc) {
  int64_t R = p.rowsPerWarp, M = p.m, U = chunks.size();
  int64_t wordsPerLoad = p.vecBytes / 4;
  int64_t spans = p.elemsPerChunk / p.spanElems;
  int64_t stepsPerSpan = p.spanElems / p.stepElems;
  int64_t pairsPerStep = p.stepElems / 2;
  auto codesType = e.vNi32(wordsPerLoad);

  // Phase 1: every code load, then scales and zeros.
  SmallVector<SmallVector<Value>> words(U * R);
  for (int64_t u = 0; u < U; ++u)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t l = 0; l < p.unitWords; ++l) {
        Value off = e.add(
            e.mul(e.zext64(rows[r]), e.c64(p.rowBytes)),
            e.add(e.mul(e.zext64(chunks[u]), e.c64(p.chunkBytes)),
                  e.c64(l * p.vecBytes)));
        Value vec = e.loadRO(codesType, e.gepBytes(weights[weightOf(r)].codes,
                                                    off),
                             p.vecBytes);
        for (int64_t w = 0; w < wordsPerLoad; ++w)
          words[u * R + r].push_back(e.extract(vec, w));
      }
  // 2:4: the positions of each chunk's kept values, 4 bits per group of 4
  // columns (Packing.h), elemsPerChunk / 2 quads per chunk, as i32 words.
  SmallVector<SmallVector<Value>> metaWords(U * R);
  if (p.sparse) {
    int64_t metaBytesPerChunk = p.elemsPerChunk / 4;
    int64_t metaRowBytes = (p.k + 7) / 8;
    Type metaType = metaBytesPerChunk == 1   ? e.i8()
                    : metaBytesPerChunk == 2 ? e.i16()
                                             : e.i32();
    int64_t loads = metaBytesPerChunk > 4 ? metaBytesPerChunk / 4 : 1;
    int64_t loadBytes = std::min<int64_t>(metaBytesPerChunk, 4);
    for (int64_t u = 0; u < U; ++u)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t l = 0; l < loads; ++l) {
          Value off = e.add(
              e.mul(e.zext64(rows[r]), e.c64(metaRowBytes)),
              e.add(e.mul(e.zext64(chunks[u]), e.c64(metaBytesPerChunk)),
                    e.c64(l * 4)));
          Value bits = e.loadRO(
              metaType, e.gepBytes(weights[weightOf(r)].meta, off),
              loadBytes);
          metaWords[u * R + r].push_back(
              metaType == e.i32() ? bits
                                  : arith::ExtUIOp::create(b, e.i32(), bits));
        }
  }
  SmallVector<Value> scaleVals(U * R * spans), zeroVals(U * R * spans);
  for (int64_t u = 0; u < U; ++u) {
    Value k0 = e.mul(chunks[u], e.c32(p.elemsPerChunk));
    for (int64_t s = 0; s < spans; ++s) {
      if (!spec.encoding.isQuantized()) {
        for (int64_t r = 0; r < R; ++r)
          scaleVals[(u * R + r) * spans + s] = e.cf32(1.0);
        continue;
      }
      // Groups count logical columns: stored code e is column >= 2e under
      // 2:4, and spans start on even codes (the first kept value of a quad).
      Value group =
          p.perChannel
              ? e.c32(0)
              : e.divu(e.mul(e.add(k0, e.c32(s * p.spanElems)),
                             e.c32(p.colsPerStored)),
                       e.c32(spec.encoding.getGroupSize()));
      for (int64_t r = 0; r < R; ++r) {
        const WeightArgs &w = weights[weightOf(r)];
        scaleVals[(u * R + r) * spans + s] =
            e.fmul(loadScaleTyped(w.scales, groupIndex(rows[r], group)),
                   e.cf32(valueScale()));
        zeroVals[(u * R + r) * spans + s] = zeroAt(w, rows[r], group);
      }
    }
  }

  // Phase 2: per step (one word of codes, or up to 8 codes of a LutN unit),
  // load the activations' matching pairs for every batch row once and use
  // them for all R weight rows.
  SmallVector<Value> out(acc.begin(), acc.end());
  // Under 2:4 a step's kept values span twice as many logical columns.
  int64_t columnsPerStep = p.stepElems * p.colsPerStored;
  int64_t xBytesPerStep = columnsPerStep * 2;
  auto xType = e.vNi32(xBytesPerStep / 4);
  unsigned xAlign = std::min<int64_t>(xBytesPerStep, 16);
  for (int64_t u = 0; u < U; ++u) {
    Value k0 = e.mul(chunks[u], e.c32(p.elemsPerChunk * p.colsPerStored));
    for (int64_t s = 0; s < spans; ++s) {
      SmallVector<Value> hacc(R * M, e.ch2(0.0));
      for (int64_t w = 0; w < stepsPerSpan; ++w) {
        int64_t step = s * stepsPerSpan + w; // within the chunk
        int64_t firstElem = step * p.stepElems;
        Value kw = e.add(k0, e.c32(step * columnsPerStep));
        // The activations of this step as i32 words (f16 pairs), per batch
        // row; normalized here under the RMSNorm prologue (act_order's
        // gather has normalized them already).
        int64_t xWords = xBytesPerStep / 4;
        Value gammaVec;
        if (p.norm && !p.actOrder)
          gammaVec = e.loadRO(
              xType, e.gepBytes(normGamma, e.mul(e.zext64(kw), e.c64(2))),
              xAlign);
        SmallVector<SmallVector<Value>> xw(M);
        for (int64_t m = 0; m < M; ++m) {
          Value xv = loadX(xType, e.add(e.c32(m * p.k), kw), xAlign);
          for (int64_t i = 0; i < xWords; ++i) {
            Value word = e.extract(xv, i);
            if (gammaVec)
              word = normalizeWord(word, e.extract(gammaVec, i), m);
            xw[m].push_back(word);
          }
        }
        for (int64_t r = 0; r < R; ++r) {
          ArrayRef<Value> rowWords = words[u * R + r];
          SmallVector<Value> pairs;
          if (p.decode == Decode::LutN) {
            int64_t unit = firstElem / p.unitElems;
            pairs = decodeLutN(
                rowWords.slice(unit * p.unitWords, p.unitWords),
                firstElem % p.unitElems, p.stepElems);
          } else {
            pairs = decodeWord(rowWords[step],
                               zeroVals[(u * R + r) * spans + s]);
          }
          for (size_t j = 0; j < pairs.size(); ++j) {
            // 2:4: pick the kept columns' activations out of the quad's
            // four with one prmt: nibble a | b << 2 -> bytes 2a, 2a+1, 2b,
            // 2b+1 of the quad's two x words.
            Value selector;
            if (p.sparse) {
              int64_t quad = step * pairsPerStep + j; // within the chunk
              Value nib = e.band(e.shru(metaWords[u * R + r][quad / 8],
                                        e.c32(4 * (quad % 8))),
                                 e.c32(15));
              Value a = e.mul(e.band(nib, e.c32(3)), e.c32(0x22));
              Value bsel = e.mul(e.shru(nib, e.c32(2)), e.c32(0x2200));
              selector =
                  e.add(arith::OrIOp::create(b, a, bsel), e.c32(0x1010));
            }
            for (int64_t m = 0; m < M; ++m) {
              Value word = p.sparse
                               ? e.ptx("prmt.b32 $0, $1, $2, $3;", "=r,r,r,r",
                                       e.i32(),
                                       {xw[m][2 * j], xw[m][2 * j + 1],
                                        selector})
                               : xw[m][j];
              Value xp = e.bitcast(e.v2f16(), word);
              hacc[r * M + m] = e.fma(pairs[j], xp, hacc[r * M + m]);
            }
          }
        }
      }
      for (int64_t r = 0; r < R; ++r)
        for (int64_t m = 0; m < M; ++m) {
          Value h = hacc[r * M + m];
          Value sum = e.fadd(e.extf32(e.extract(h, 0)),
                             e.extf32(e.extract(h, 1)));
          out[r * M + m] =
              e.fma(sum, scaleVals[(u * R + r) * spans + s], out[r * M + m]);
        }
    }
  }
  return out;
}

/// Applies the epilogue to the f32 result of (row, batch m) (and, under
/// silu_mul, the up projection's `upTotal`) and stores it, unless the row
/// is past N.
void MatVecBuilder::storeOutput(Value total, Value upTotal, Value row,
                                Value m) {
  OpBuilder::InsertionGuard guard(b);
  auto inRange = scf::IfOp::create(b, e.ult(row, nRows), false);
  b.setInsertionPointToStart(inRange.thenBlock());
  if (spec.encoding.getGlobalScale()) {
    Value gs = e.loadRO(e.f32(), weights[0].globalScale, 4);
    total = e.fdiv(total, gs);
    if (upTotal)
      upTotal = e.fdiv(upTotal, e.loadRO(e.f32(), weights[1].globalScale, 4));
  }
  if (upTotal)
    total = e.siluMul(total, upTotal);
  if (spec.hasBias) {
    Value off = e.mul(e.zext64(row), e.c64(2));
    total = e.fadd(total, e.extf32(e.loadRO(e.f16(), e.gepBytes(bias, off), 2)));
  }
  Value yOff = e.mul(e.zext64(e.add(e.mul(m, nRows), row)), e.c64(2));
  if (spec.hasResidual)
    total = e.fadd(total, e.extf32(e.loadRO(
                              e.f16(), e.gepBytes(residual, yOff), 2)));
  e.store(e.truncf16(total), e.gepBytes(y, yOff), 2);
}

/// Warp-reduces each accumulator and stores y. With split_k = 1 lane 0 of
/// each warp stores its rows directly; otherwise the split_k warps of a row
/// group are combined through shared memory first.
void MatVecBuilder::reduceAndStore(ArrayRef<Value> acc, Value tid, Value warp,
                                   Value lane) {
  int64_t R = p.rowsPerWarp, M = p.m, RM = R * M;
  SmallVector<Value> sums(acc.begin(), acc.end());
  for (Value &v : sums)
    for (int64_t off = 16; off >= 1; off /= 2)
      v = e.fadd(v, e.shflXor(v, off));
  // Gated: accumulator j < RoM is output j's gate, j + RoM its up.
  int64_t Ro = p.outRowsPerWarp, RoM = Ro * M;
  Value blockRow0 = e.mul(blockId, e.c32(p.outBlockN));
  Value isLane0 =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, e.c32(0));

  if (p.splitK == 1) {
    // No barrier and no shared-memory round trip: the warp owns its rows.
    OpBuilder::InsertionGuard guard(b);
    auto storeIf = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
    b.setInsertionPointToStart(storeIf.thenBlock());
    Value warpRow0 = e.add(blockRow0, e.mul(warp, e.c32(Ro)));
    for (int64_t j = 0; j < RoM; ++j)
      storeOutput(sums[j], p.gated ? sums[j + RoM] : Value(),
                  e.add(warpRow0, e.c32(j / M)), e.c32(j % M));
    return;
  }

  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto slot = [&](Value index) {
    return LLVM::GEPOp::create(b, sharedPtr, e.i8(), redSmem,
                               ValueRange{e.mul(index, e.c32(4))});
  };
  auto writeIf = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(writeIf.thenBlock());
    for (int64_t j = 0; j < RM; ++j)
      LLVM::StoreOp::create(b, sums[j],
                            slot(e.add(e.mul(warp, e.c32(RM)), e.c32(j))), 4);
  }
  NVVM::Barrier0Op::create(b);

  // Thread t < rowGroups * RoM owns output (row group t / RoM, entry
  // t % RoM), and under silu_mul reads that output's up entry too.
  Value owns = e.ult(tid, e.c32(p.rowGroups * RoM));
  auto storeIf = scf::IfOp::create(b, owns, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(storeIf.thenBlock());
  Value rg = e.divu(tid, e.c32(RoM));
  Value j = e.remu(tid, e.c32(RoM));
  auto sumSplits = [&](Value entry) {
    Value total = e.cf32(0.0);
    for (int64_t s = 0; s < p.splitK; ++s) {
      Value w = e.add(e.mul(rg, e.c32(p.splitK)), e.c32(s));
      Value v = LLVM::LoadOp::create(
          b, e.f32(), slot(e.add(e.mul(w, e.c32(RM)), entry)), 4);
      total = e.fadd(total, v);
    }
    return total;
  };
  Value total = sumSplits(j);
  Value upTotal = p.gated ? sumSplits(e.add(j, e.c32(RoM))) : Value();
  Value row =
      e.add(e.add(blockRow0, e.mul(rg, e.c32(Ro))), e.divu(j, e.c32(M)));
  storeOutput(total, upTotal, row, e.remu(j, e.c32(M)));
}

KernelLaunch MatVecBuilder::build() {
  EncodingAttr enc = spec.encoding;
  // Parameters, in order; the runtime binds them by name.
  SmallVector<std::string> names = {"x"};
  if (p.norm)
    names.push_back("norm");
  // The weight's components; the up projection's are the same names with
  // an `up_` prefix (the artifact binds them to the up weight).
  auto addWeight = [&](StringRef prefix) {
    auto named = [&](StringRef c) { return (prefix + c).str(); };
    names.push_back(named("codes"));
    if (enc.isQuantized())
      names.push_back(named("scales"));
    if (enc.isSparse24())
      names.push_back(named("meta"));
    if (enc.getZeroPoint() != ZeroPointKind::None)
      names.push_back(named("zeros"));
    if (enc.getGlobalScale())
      names.push_back(named("global_scale"));
  };
  addWeight("");
  // act_order: the sorted column order of the layout (qfuse/format/Layout.h),
  // sorted column j -> checkpoint column perm[j].
  if (p.actOrder)
    names.push_back(qfuse::format::kPerm);
  if (enc.getFormat() == ElementFormat::Codebook && enc.getTableName())
    names.push_back("table");
  if (p.gated)
    addWeight("up_");
  if (spec.hasBias)
    names.push_back("bias");
  if (spec.hasResidual)
    names.push_back("residual");
  names.push_back("y");
  // qf.group members 1..: their own weight, epilogue operands and output.
  SmallVector<int64_t> memberNs = {p.n};
  memberNs.append(spec.groupNs.begin(), spec.groupNs.end());
  for (size_t i = 1; i < memberNs.size(); ++i) {
    std::string suffix = "." + std::to_string(i);
    auto named = [&](StringRef c) { return (c + suffix).str(); };
    for (StringRef c : {"codes", "scales", "meta", "zeros", "global_scale"})
      if (llvm::is_contained(names, c))
        names.push_back(named(c));
    if (spec.hasBias)
      names.push_back(named("bias"));
    if (spec.hasResidual)
      names.push_back(named("residual"));
    names.push_back(named("y"));
  }

  int64_t threads = p.warps * 32;
  KernelFunction kernel = createKernelFunction(b, module, name, names, threads);
  LLVM::LLVMFuncOp fn = kernel.fn;
  // Occupancy is what keeps loads in flight, so the register budget is set
  // from an estimate of what the kernel needs (codes in flight, decoded
  // pairs, activations, accumulators) with 50% headroom, through a minimum
  // of resident blocks: left alone, ptxas either spills the batch > 1
  // variants or spends registers that cost occupancy.
  fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
              b.getI32IntegerAttr(static_cast<int32_t>(minBlocksPerSM())));
  auto arg = [&](StringRef n) { return kernel.arg(n); };
  x = arg("x");
  normGamma = arg("norm");
  for (int64_t w = 0; w < (p.gated ? 2 : 1); ++w) {
    std::string prefix = w ? "up_" : "";
    weights[w] = {arg(prefix + "codes"), arg(prefix + "scales"),
                  arg(prefix + "meta"), arg(prefix + "zeros"),
                  arg(prefix + "global_scale")};
  }
  perm = arg(qfuse::format::kPerm);
  table = arg("table");
  bias = arg("bias");
  residual = arg("residual");
  y = arg("y");
  // qf.group: the block's member, from the block index; its pointers and N
  // replace member 0's (uniform per block, so no divergence).
  blockId = e.ctaidX();
  nRows = e.c32(p.n);
  if (memberNs.size() > 1) {
    Value ctaid = blockId, base = e.c32(0);
    int64_t start = 0;
    for (size_t i = 1; i < memberNs.size(); ++i) {
      start += (memberNs[i - 1] + p.outBlockN - 1) / p.outBlockN;
      std::string suffix = "." + std::to_string(i);
      Value isMember = arith::CmpIOp::create(b, arith::CmpIPredicate::uge,
                                             ctaid, e.c32(start));
      auto pick = [&](Value &v, StringRef c) {
        if (v)
          v = LLVM::SelectOp::create(b, isMember, arg((c + suffix).str()), v);
      };
      WeightArgs &w = weights[0];
      pick(w.codes, "codes");
      pick(w.scales, "scales");
      pick(w.meta, "meta");
      pick(w.zeros, "zeros");
      pick(w.globalScale, "global_scale");
      pick(bias, "bias");
      pick(residual, "residual");
      pick(y, "y");
      nRows = arith::SelectOp::create(b, isMember, e.c32(memberNs[i]), nRows);
      base = arith::SelectOp::create(b, isMember, e.c32(start), base);
    }
    blockId = e.sub(ctaid, base);
  }

  int64_t R = p.rowsPerWarp, M = p.m;
  if (p.splitK > 1)
    redSmem = sharedAddr(
        b, sharedArray(b, module, b.getLoc(), name + "_partials", e.f32(),
                       p.warps * R * M));
  if (p.lutWords > 0) {
    lut = sharedAddr(b, sharedArray(b, module, b.getLoc(), name + "_lut",
                                    e.i32(), p.lutWords));
    buildLut();
    laneBytes = e.mul(e.band(e.tidX(), e.c32(31)), e.c32(4));
  }
  if (p.norm) {
    normSmem = sharedAddr(
        b, sharedArray(b, module, b.getLoc(), name + "_sumsq", e.f32(),
                       p.warps * M));
    computeRowScales();
  }
  if (p.actOrder) {
    // Dynamic shared memory: an extern array sized at launch.
    xs = dynamicSharedBase(b, module, name + "_x");
    gatherActivations();
  }

  Value tid = e.tidX();
  Value lane = e.band(tid, e.c32(31));
  Value warp = e.shru(tid, e.c32(5));
  Value slice = e.remu(warp, e.c32(p.splitK));
  Value rg = e.divu(warp, e.c32(p.splitK));
  int64_t Ro = p.outRowsPerWarp;
  Value rowBase = e.add(e.mul(blockId, e.c32(p.outBlockN)),
                        e.mul(rg, e.c32(Ro)));
  // Rows past N are clamped for loads (their results are never stored), so
  // every lane stays in the shuffles. Gated: slots r and r + Ro are the
  // gate and up rows of one output.
  SmallVector<Value> rows;
  for (int64_t r = 0; r < R; ++r)
    rows.push_back(
        e.minu(e.add(rowBase, e.c32(r % Ro)), e.sub(nRows, e.c32(1))));

  Value C = e.c32(p.chunksPerRow);
  Value S = e.c32(p.splitK);
  Value chunkBegin = e.divu(e.mul(slice, C), S);
  Value chunkEnd = e.divu(e.mul(e.add(slice, e.c32(1)), C), S);
  int64_t U = p.unroll;
  Value stride = e.c32(32 * U);
  Value mainEnd = e.add(
      chunkBegin,
      e.mul(e.divu(e.sub(chunkEnd, chunkBegin), stride), stride));

  SmallVector<Value> init(R * M, e.cf32(0.0));
  // Main loop: U full warp iterations per trip, no bounds checks.
  auto mainLoop = scf::ForOp::create(b, chunkBegin, mainEnd, stride, init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(mainLoop.getBody());
    SmallVector<Value> chunks;
    for (int64_t u = 0; u < U; ++u)
      chunks.push_back(
          e.add(mainLoop.getInductionVar(), e.add(lane, e.c32(32 * u))));
    scf::YieldOp::create(b, body(chunks, rows, mainLoop.getRegionIterArgs()));
  }
  // Remainder: one warp iteration per trip, lanes past the end idle.
  auto tail = scf::ForOp::create(b, mainEnd, chunkEnd, e.c32(32),
                                 mainLoop.getResults());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tail.getBody());
    Value c = e.add(tail.getInductionVar(), lane);
    auto guardIf = scf::IfOp::create(b, TypeRange(ValueRange(init)),
                                     e.ult(c, chunkEnd),
                                     /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(guardIf.thenBlock());
      scf::YieldOp::create(b, body({c}, rows, tail.getRegionIterArgs()));
      b.setInsertionPointToStart(guardIf.elseBlock());
      scf::YieldOp::create(b, tail.getRegionIterArgs());
    }
    scf::YieldOp::create(b, guardIf.getResults());
  }
  reduceAndStore(SmallVector<Value>(tail.getResults()), tid, warp, lane);
  LLVM::ReturnOp::create(b, ValueRange{});

  launch.name = name;
  for (const std::string &n : names)
    launch.params.push_back({n, "ptr"});
  launch.gridX = 0;
  for (int64_t n : memberNs)
    launch.gridX += (n + p.outBlockN - 1) / p.outBlockN;
  launch.blockX = threads;
  launch.sharedBytes = p.sharedBytes - p.dynamicShared;
  launch.dynamicSharedBytes = p.dynamicShared;
  return launch;
}

} // namespace

FailureOr<KernelLaunch>
mlir::qf::emitMatVecKernel(gpu::GPUModuleOp module, StringRef name,
                           const MatVecSpec &spec,
                           function_ref<InFlightDiagnostic()> emitError) {
  FailureOr<Plan> plan = makePlan(spec, emitError);
  if (failed(plan))
    return failure();
  // Loads in flight live in registers: k_unroll x rows x chunk of codes.
  if (plan->unroll * plan->rowsPerWarp * plan->chunkBytes >
      kMaxCodeBytesInFlight)
    return emitError() << "k_unroll = " << plan->unroll << " x "
                       << plan->rowsPerWarp << " rows x " << plan->chunkBytes
                       << " bytes exceeds the " << kMaxCodeBytesInFlight
                       << " bytes of code loads in "
                          "flight a lane can hold",
           failure();
  ImplicitLocOpBuilder b(module.getLoc(), module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  MatVecBuilder builder(b, spec, *plan, module, name);
  return builder.build();
}
