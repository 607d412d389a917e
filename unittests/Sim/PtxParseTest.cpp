//===- PtxParseTest.cpp - every compiler output parses --------------------===//
//
// Parses every *.ptx under $QFUSE_SIM_PTX_DIR (the compiler's outputs,
// extracted from its artifacts), and the modules committed under Inputs/.
// Parsing decodes every instruction, so an opcode or operand form the
// simulator does not know fails here, not in a launch.
//
//===----------------------------------------------------------------------===//

#include "qfuse/sim/Ptx.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace qfuse::sim;
namespace fs = std::filesystem;

namespace {

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t parseAll(const fs::path &dir) {
  size_t modules = 0;
  std::vector<fs::path> files;
  for (const auto &entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".ptx")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path &path : files) {
    std::string error;
    auto module = PtxModule::parse(readFile(path), error);
    EXPECT_TRUE(module) << path << ": " << error;
    if (module)
      EXPECT_FALSE(module->kernelNames().empty()) << path;
    ++modules;
  }
  return modules;
}

} // namespace

TEST(PtxParse, CompilerOutputs) {
  const char *dir = std::getenv("QFUSE_SIM_PTX_DIR");
  if (!dir || !*dir)
    GTEST_SKIP() << "QFUSE_SIM_PTX_DIR is not set";
  EXPECT_GT(parseAll(dir), 0u) << "no .ptx files under " << dir;
}

TEST(PtxParse, CommittedInputs) {
  EXPECT_GT(parseAll(QFUSE_SIM_INPUTS), 0u);
}

TEST(PtxParse, ErrorsNameTheLine) {
  std::string error;
  auto module = PtxModule::parse(".version 8.0\n.target sm_90\n"
                                 ".address_size 64\n"
                                 ".visible .entry k()\n{\n"
                                 "  .reg .b32 %r<2>;\n"
                                 "  add.s32 %r1, %r9, 1;\n"
                                 "  ret;\n}\n",
                                 error);
  EXPECT_FALSE(module);
  EXPECT_NE(error.find("line 7"), std::string::npos) << error;
  EXPECT_NE(error.find("%r9"), std::string::npos) << error;
}

TEST(PtxParse, KernelInfo) {
  std::string error;
  auto module = PtxModule::parse(
      ".version 8.0\n.target sm_90\n.address_size 64\n"
      ".shared .align 16 .b8 used[100];\n"
      ".shared .align 16 .b8 unused[4096];\n"
      ".extern .shared .align 16 .b8 dyn[];\n"
      ".visible .entry k(.param .u64 .ptr .global .align 1 k_param_0,\n"
      "  .param .u32 k_param_1, .param .u64 .ptr .global .align 1 k_param_2,\n"
      "  .param .align 8 .b8 k_param_3[16])\n"
      ".maxntid 128, 1, 1\n{\n  .reg .b64 %rd<3>;\n"
      "  mov.u64 %rd1, used;\n  mov.u64 %rd2, dyn;\n  ret;\n}\n",
      error);
  ASSERT_TRUE(module) << error;
  const KernelInfo *k = module->kernel("k");
  ASSERT_TRUE(k);
  ASSERT_EQ(k->params.size(), 4u);
  EXPECT_EQ(k->params[1].offset, 8u);
  // A pointer after a u32 is 8-aligned: `.ptr .global .align 1` is the
  // pointee's alignment.
  EXPECT_EQ(k->params[2].offset, 16u);
  EXPECT_EQ(k->params[3].offset, 24u);
  EXPECT_EQ(k->params[3].size, 16u);
  EXPECT_EQ(k->paramBytes, 40u);
  EXPECT_EQ(k->staticSharedBytes, 100u);
  EXPECT_EQ(k->maxThreads, 128u);
  EXPECT_EQ(module->kernel("nope"), nullptr);
}
