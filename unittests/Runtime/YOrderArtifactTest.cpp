//===- YOrderArtifactTest.cpp - the y_order kernel parameter --------------===//
//
// A gated gate/up kernel whose output feeds an act_order matmul binds that
// matmul's "inv_perm" as `y_order` (docs/artifact.md). The weight is the
// reader's: the validator checks its K against the launch's y, not its x.
//
//===----------------------------------------------------------------------===//

#include "ValidArtifact.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/artifact/Artifact.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

using namespace qfuse::runtime;
using nlohmann::json;

namespace {

/// The valid artifact whose q_proj matvec (x [M, 512] -> y [M, 256]) also
/// binds the inv_perm of an act_order reader [64, `readerK`] as y_order.
std::string withYOrder(int64_t readerK) {
  json a = json::parse(qfuse::testing::kValidArtifact);
  a["kernels"][0]["params"].push_back({{"name", "y_order"}, {"type", "ptr"}});
  a["weights"].push_back(
      {{"name", "model.layers.0.mlp.down_proj"},
       {"shape", {64, readerK}},
       {"encoding", "int4, group = 128, scale = f16, act_order"},
       {"layout", "row_major"}});
  a["plans"][0]["steps"][2]["args"].push_back(
      {{"weight", "model.layers.0.mlp.down_proj"}, {"component", "inv_perm"}});
  return a.dump();
}

TEST(YOrder, ReadersInvPermIsAComponentSizedByY) {
  Artifact artifact = Artifact::parse(withYOrder(256), "test.qfa");
  const WeightSpec *down = artifact.findWeight("model.layers.0.mlp.down_proj");
  ASSERT_NE(down, nullptr);
  const qfuse::format::ComponentSpec *inv = down->findComponent("inv_perm");
  ASSERT_NE(inv, nullptr);
  EXPECT_EQ(inv->dtype, qfuse::format::DType::I32);
  EXPECT_EQ(inv->shape, (std::vector<int64_t>{256}));
}

TEST(YOrder, ReaderWhoseKIsNotYsExtentIsRejected) {
  try {
    Artifact::parse(withYOrder(512), "test.qfa");
    FAIL() << "accepted a y_order weight whose K is not y's last extent";
  } catch (const qfuse::Error &e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("plans[0].steps[2].args[7]"), std::string::npos)
        << message;
    EXPECT_NE(message.find("(y_order) does not fit the launch's y 'y'"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("the reader's K = 512"), std::string::npos)
        << message;
  }
}

} // namespace
