//===- TensorPartsTest.cpp - a large tensor split into row ranges --------===//
//
// rowParts: whole rows, in order, covering every element once, none larger
// than asked (but at least one row), one part for a small or empty tensor.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/TensorParts.h"

#include <gtest/gtest.h>

using namespace qfuse::runtime;

namespace {

/// The parts cover [0, rows * rowElements) in order, whole rows each.
void expectCover(const std::vector<ElementRange> &parts, uint64_t rows,
                 uint64_t rowElements, uint64_t partElements) {
  uint64_t next = 0;
  for (const ElementRange &part : parts) {
    EXPECT_EQ(part.first, next);
    if (rowElements) {
      EXPECT_EQ(part.first % rowElements, 0u);
      EXPECT_EQ(part.count % rowElements, 0u);
      EXPECT_GE(part.count, rows ? rowElements : 0);
      EXPECT_LE(part.count, std::max(partElements, rowElements));
    }
    next += part.count;
  }
  EXPECT_EQ(next, rows * rowElements);
}

TEST(TensorParts, Llama3EmbeddingInPartsOf32MElements) {
  const std::vector<ElementRange> parts = rowParts(128256, 4096, 1u << 25);
  ASSERT_EQ(parts.size(), 16u);
  EXPECT_EQ(parts[0], (ElementRange{0, 8192u * 4096}));
  EXPECT_EQ(parts[15], (ElementRange{15u * 8192 * 4096, 5376u * 4096}));
  expectCover(parts, 128256, 4096, 1u << 25);
}

TEST(TensorParts, CoversEveryShape) {
  for (uint64_t rows : {0u, 1u, 2u, 7u, 100u})
    for (uint64_t rowElements : {1u, 3u, 64u})
      for (uint64_t partElements : {0u, 1u, 5u, 64u, 1000u, 1u << 20}) {
        SCOPED_TRACE(std::to_string(rows) + " x " +
                     std::to_string(rowElements) + " in parts of " +
                     std::to_string(partElements));
        const std::vector<ElementRange> parts =
            rowParts(rows, rowElements, partElements);
        ASSERT_FALSE(parts.empty());
        expectCover(parts, rows, rowElements, partElements);
      }
}

TEST(TensorParts, SmallTensorIsOnePart) {
  EXPECT_EQ(rowParts(32, 128, 1u << 25).size(), 1u);
  EXPECT_EQ(rowParts(0, 128, 1u << 25), (std::vector<ElementRange>{{0, 0}}));
  // A vector (one row of everything) cannot be split by rows.
  EXPECT_EQ(rowParts(1, 1u << 26, 1u << 20).size(), 1u);
}

} // namespace
