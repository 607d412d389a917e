//===- PtxErrorTest.cpp - launches that must fail, and say why ------------===//

#include "SimTestUtil.h"

#include <gtest/gtest.h>

using namespace qfuse::sim;
using namespace qfuse::sim::test;

namespace {

std::string run(const std::string &kernel, uint32_t threads,
                uint64_t arg = 0) {
  std::string error;
  auto module = loadInput("errors.ptx", error);
  EXPECT_TRUE(module) << error;
  if (!module)
    return error;
  return launch(*module, kernel, {1}, {threads}, {arg});
}

void expectHas(const std::string &text, const std::string &part) {
  EXPECT_NE(text.find(part), std::string::npos)
      << "'" << part << "' not in: " << text;
}

} // namespace

TEST(PtxError, OutOfBoundsGlobalStoreNamesTheAllocation) {
  Buffer small(128, "small-buffer");
  std::string e = run("oob_store", 64, small.address());
  expectHas(e, "small-buffer");
  expectHas(e, "past the end");
  expectHas(e, "kernel oob_store");
  expectHas(e, "line 23");
  expectHas(e, "thread (32,0,0)");
  expectHas(e, "block (0,0,0)");
}

TEST(PtxError, OutOfBoundsShared) {
  std::string e = run("oob_shared", 1);
  expectHas(e, "out-of-bounds shared access");
  expectHas(e, "offset 128");
}

TEST(PtxError, BarrierDeadlockIsReportedNotHung) {
  std::string e = run("deadlock", 64);
  expectHas(e, "deadlock");
  expectHas(e, "bar.sync");
}

TEST(PtxError, CollectiveWithAnExitedLane) {
  std::string e = run("shfl_exited", 32);
  expectHas(e, "deadlock");
  expectHas(e, "warp collective");
}

TEST(PtxError, Trap) { expectHas(run("traps", 32), "trap"); }

TEST(PtxError, UnsupportedInstructionFailsOnlyWhenRun) {
  std::string error;
  auto module = loadInput("errors.ptx", error);
  ASSERT_TRUE(module) << error;
  auto names = module->unsupportedOpcodes();
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0], "wgmma.fence.sync.aligned");
  std::string e = launch(*module, "unsupported", {1}, {32}, {0});
  expectHas(e, "unsupported instruction 'wgmma.fence.sync.aligned'");
}

TEST(PtxError, Misaligned) {
  Buffer b(64, "b");
  expectHas(run("misaligned", 1, b.address()), "misaligned");
}

TEST(PtxError, BadLaunches) {
  std::string error;
  auto module = loadInput("errors.ptx", error);
  ASSERT_TRUE(module) << error;
  expectHas(launch(*module, "nope", {1}, {1}, {0}), "no kernel named nope");
  expectHas(launch(*module, "traps", {1}, {2048}, {0}), "exceeds");
  expectHas(launch(*module, "traps", {3}, {32}, {0}, 0, {2}),
            "whole number of clusters");
}
