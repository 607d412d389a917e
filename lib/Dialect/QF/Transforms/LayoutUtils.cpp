//===- LayoutUtils.cpp - the packed layout each kernel reads
//-----------------===//

#include "qfuse/Dialect/QF/Transforms/LayoutUtils.h"

#include "qfuse/format/MmaLayout.h"

using namespace mlir;
using namespace mlir::qf;

bool qf::hasNibbleCodes(EncodingAttr encoding) {
  switch (encoding.getFormat()) {
  case ElementFormat::Int4:
  case ElementFormat::UInt4:
  case ElementFormat::FP4E2M1:
  case ElementFormat::NF4:
    return true;
  case ElementFormat::Codebook:
    return encoding.getCodeBits() == 4;
  default:
    return false;
  }
}

bool qf::hasMmaFragmentCodes(EncodingAttr encoding) {
  if (hasNibbleCodes(encoding))
    return true;
  switch (encoding.getFormat()) {
  case ElementFormat::Int8:
  case ElementFormat::UInt8:
  case ElementFormat::FP8E4M3:
    return true;
  case ElementFormat::Codebook: // 2-, 3- and 8-bit indices (MmaLayout.h)
    return qfuse::format::isMmaCodeBits(encoding.getCodeBits());
  default:
    return false;
  }
}

bool qf::hasSparseMmaCodes(EncodingAttr encoding) {
  if (!encoding.isSparse24())
    return false;
  switch (encoding.getFormat()) {
  case ElementFormat::F16:
  case ElementFormat::Int4:
  case ElementFormat::UInt4:
  case ElementFormat::Int8:
  case ElementFormat::UInt8:
  case ElementFormat::FP8E4M3:
    return true;
  default:
    return false;
  }
}

LayoutAttr qf::getKernelLayout(WeightType type, TilingAttr tiling) {
  MLIRContext *ctx = type.getContext();
  EncodingAttr encoding = type.getEncoding();
  // Only the integer 4-bit decode (mask-and-or into 1024 + e) wants pairs
  // interleaved inside each word; table formats (nf4, fp4, 4-bit codebooks)
  // map a whole byte through a shared table and read row_major bytes.
  bool magicDecode = encoding.getFormat() == ElementFormat::Int4 ||
                     encoding.getFormat() == ElementFormat::UInt4;
  // act_order + 2:4 keeps the checkpoint's column order, defined in
  // row_major only (format::sortsColumns); only the fallback reads it.
  if (encoding.getActOrder() && encoding.isSparse24())
    return LayoutAttr::get(ctx);
  if (tiling && tiling.getKernel() == KernelKind::MMA &&
      encoding.isSparse24() && hasSparseMmaCodes(encoding)) {
    // The mma.sp kernel's A-fragment and metadata order
    // (qfuse/format/SparseMmaLayout.h): in each K step a lane's codes are
    // one run of 16-byte pieces and its metadata one piece. Shapes that are
    // not whole 32 x 128 tiles are padded to them.
    return LayoutAttr::get(ctx, LayoutKind::Tiled, /*tileN=*/32,
                           /*tileK=*/64, /*interleave=*/1);
  }
  if (tiling && isTensorCoreKernel(tiling.getKernel()) &&
      hasMmaFragmentCodes(encoding) && !encoding.isSparse24()) {
    // The tensor-core kernel's B-fragment order (qfuse/format/MmaLayout.h),
    // for every 4-bit and 8-bit format and 2- and 3-bit codebooks: a lane's
    // 16-byte load (two for 8-bit codes, 8 + 4 bytes for 2- and 3-bit
    // ones) is its fragments. Shapes that are not whole 32x32 tiles
    // are padded to them.
    return LayoutAttr::get(ctx, LayoutKind::Tiled, /*tileN=*/32,
                           /*tileK=*/32, /*interleave=*/1);
  }
  if (!tiling || tiling.getKernel() != KernelKind::MatVec || !magicDecode)
    return LayoutAttr::get(ctx);
  int64_t tileK = tiling.getVecBytes() * 8 / encoding.getCodeBits();
  return LayoutAttr::get(ctx, LayoutKind::Tiled, /*tileN=*/1, tileK,
                         /*interleave=*/1);
}
