//===- PtxBranchTest.cpp - brx.idx through a .branchtargets table ---------===//

#include "SimTestUtil.h"

#include <gtest/gtest.h>

using namespace qfuse::sim;
using namespace qfuse::sim::test;

TEST(PtxBranch, JumpTablePicksTheIndexedTarget) {
  std::string error;
  auto module = loadInput("branch.ptx", error);
  ASSERT_TRUE(module) << error;
  const int n = 64; // lanes of two warps diverge three ways
  Buffer output(n * 4, "out");
  ASSERT_EQ(launch(*module, "jump_table", {1}, {n}, {output.address(), 0}),
            "");
  auto out = output.read<uint32_t>(n);
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(out[i], 100u + 10u * (i % 3)) << "thread " << i;
}

TEST(PtxBranch, IndexPastTheTableFails) {
  std::string error;
  auto module = loadInput("branch.ptx", error);
  ASSERT_TRUE(module) << error;
  Buffer output(32 * 4, "out");
  std::string e =
      launch(*module, "jump_table", {1}, {32}, {output.address(), 2});
  EXPECT_NE(e.find("brx.idx index 3 past its 3 targets"), std::string::npos)
      << e;
}
