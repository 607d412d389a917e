//===- ColumnGatherTest.cpp - column permutations as field gathers --------===//
//
// runFieldGather (the kernel's arithmetic on the host) of a columnGather
// plan must give every row's columns in the order asked for (a shuffle
// with a repeat, then more columns than the source has), every byte of
// every element unchanged, for elements of 1, 2 and 4 bytes moved as
// fields of 1, 2, 4 and 8 bits; and bad plans are refused.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "qfuse/format/FieldGather.h"

#include <algorithm>
#include <numeric>

using namespace qfuse::format;
using namespace qfuse::format::test;

namespace {

class ColumnGatherTest : public SeededTest {};

TEST_F(ColumnGatherTest, MovesWholeElements) {
  for (unsigned elementBytes : {1u, 2u, 4u})
    for (unsigned fieldBits : {1u, 2u, 4u, 8u})
      for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 7}, {5, 64},
                                {1, 129}}) {
        std::vector<int64_t> from(static_cast<size_t>(cols));
        std::iota(from.begin(), from.end(), int64_t(0));
        std::shuffle(from.begin(), from.end(), rng);
        // A repeated source column too (GPTQ's group parameters repeat).
        from[0] = from[size_t(cols - 1)];
        // And wider than the source (positions from groups).
        const int64_t srcCols = cols;
        for (int i = 0; i < 5; ++i)
          from.push_back(uniformInt(0, srcCols - 1));
        const int64_t dstCols = int64_t(from.size());
        std::vector<uint8_t> src(size_t(rows * srcCols * elementBytes));
        for (uint8_t &b : src)
          b = uint8_t(uniformInt(0, 255));
        FieldGather g;
        std::string why;
        ASSERT_TRUE(columnGather(rows, cols, elementBytes, from, fieldBits, g,
                                 why))
            << why;
        std::vector<uint8_t> dst;
        ASSERT_TRUE(runFieldGather(g, src.data(), dst));
        ASSERT_GE(int64_t(dst.size()), g.dstBytes);
        ASSERT_EQ(g.dstBytes, rows * dstCols * int64_t(elementBytes));
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < dstCols; ++j)
            for (unsigned b = 0; b < elementBytes; ++b)
              ASSERT_EQ(dst[size_t((r * dstCols + j) * elementBytes + b)],
                        src[size_t((r * srcCols + from[size_t(j)]) *
                                       elementBytes +
                                   b)])
                  << "element bytes " << elementBytes << ", fields of "
                  << fieldBits << " bits, row " << r << ", column " << j;
      }
}

TEST_F(ColumnGatherTest, RefusesWhatItCannotMove) {
  FieldGather g;
  std::string why;
  EXPECT_FALSE(columnGather(2, 3, 4, {0, 1, 3}, 8, g, why));
  EXPECT_NE(why.find("column 2 gathers column 3 of 3"), std::string::npos)
      << why;
  EXPECT_FALSE(columnGather(2, 3, 4, {0, -1}, 8, g, why));
  EXPECT_FALSE(columnGather(2, 3, 4, {0, 1, 2}, 3, g, why));
  // 32-bit field indices: 2^31 fields do not fit.
  std::vector<int64_t> from(size_t(1) << 16);
  std::iota(from.begin(), from.end(), int64_t(0));
  EXPECT_FALSE(columnGather(int64_t(1) << 13, int64_t(1) << 16, 4, from, 2, g,
                            why));
  EXPECT_NE(why.find("32-bit"), std::string::npos) << why;
}

} // namespace
