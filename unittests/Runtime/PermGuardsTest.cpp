//===- PermGuardsTest.cpp - which guarded steps of a plan run -------------===//
//
// The load-time check of act_order groups (PermGuards.h): equal perms run
// the fused group's steps, perms that differ (or one not bound) its
// fallback; and the artifact's "when" as the reader and validator take it.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/artifact/PermGuards.h"
#include "qfuse/runtime/artifact/Artifact.h"

#include "qfuse/runtime/Error.h"

#include "ValidArtifact.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <numeric>
#include <random>

using namespace qfuse::runtime;
using nlohmann::json;
using When = PermGuard::When;

namespace {

std::vector<int32_t> shuffled(int64_t k, uint64_t seed) {
  std::vector<int32_t> perm(static_cast<size_t>(k));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(seed));
  return perm;
}

PermGuard guard(When when, std::vector<std::string> weights) {
  PermGuard g;
  g.when = when;
  g.weights = std::move(weights);
  return g;
}

void bindPerm(BoundPerms &perms, const std::string &weight,
              const std::vector<int32_t> &perm) {
  perms.set(weight, perm.data(), perm.size() * sizeof(int32_t));
}

TEST(PermGuards, EqualPermsRunTheGroupAndNotTheFallback) {
  BoundPerms perms;
  const std::vector<int32_t> p = shuffled(4096, 1);
  for (const char *w : {"q", "k", "v"})
    bindPerm(perms, w, p);
  EXPECT_TRUE(perms.holds(guard(When::PermsEqual, {"q", "k", "v"})));
  EXPECT_FALSE(perms.holds(guard(When::PermsDiffer, {"q", "k", "v"})));
  EXPECT_TRUE(perms.holds(PermGuard())); // unguarded steps always run
}

TEST(PermGuards, DifferentPermsRunTheFallback) {
  BoundPerms perms;
  const std::vector<int32_t> p = shuffled(4096, 1);
  std::vector<int32_t> other = p;
  std::swap(other[17], other[4000]); // one transposition is enough
  bindPerm(perms, "q", p);
  bindPerm(perms, "k", p);
  bindPerm(perms, "v", other);
  EXPECT_FALSE(perms.holds(guard(When::PermsEqual, {"q", "k", "v"})));
  EXPECT_TRUE(perms.holds(guard(When::PermsDiffer, {"q", "k", "v"})));
  // q and k alone still agree.
  EXPECT_TRUE(perms.holds(guard(When::PermsEqual, {"q", "k"})));
}

TEST(PermGuards, RebindingChangesTheAnswer) {
  BoundPerms perms;
  bindPerm(perms, "gate", shuffled(512, 1));
  bindPerm(perms, "up", shuffled(512, 2));
  EXPECT_TRUE(perms.holds(guard(When::PermsDiffer, {"gate", "up"})));
  bindPerm(perms, "up", shuffled(512, 1));
  EXPECT_TRUE(perms.holds(guard(When::PermsEqual, {"gate", "up"})));
}

TEST(PermGuards, AnUnboundPermCountsAsDiffering) {
  // The fallback is exact for any perms: it is the side taken when a perm
  // is unknown.
  BoundPerms perms;
  bindPerm(perms, "gate", shuffled(512, 1));
  EXPECT_FALSE(perms.holds(guard(When::PermsEqual, {"gate", "up"})));
  EXPECT_TRUE(perms.holds(guard(When::PermsDiffer, {"gate", "up"})));
  perms.forget("gate");
  EXPECT_EQ(perms.find("gate"), nullptr);
}

//===----------------------------------------------------------------------===//
// "when" in the artifact (version 7)
//===----------------------------------------------------------------------===//

/// kValidArtifact with its q_proj and k_proj (both K = 512) act_order and
/// its first matvec launch guarded by `when`.
json guardedArtifact(const json &when, int64_t version = 7) {
  json a = json::parse(qfuse::testing::kValidArtifact);
  a["version"] = version;
  json &weights = a["weights"];
  weights[0]["encoding"] = "int4, group = 128, scale = f16, act_order";
  weights[1]["encoding"] = "uint4, group = 128, scale = f16, zero = int, "
                           "act_order";
  for (json &step : a["plans"][0]["steps"])
    if (step.contains("launch") && step["launch"] == "qf_matvec_0")
      step["when"] = when;
  return a;
}

Artifact parse(const json &a) {
  return Artifact::parse(a.dump(), "guards.qfa");
}

std::string parseError(const json &a) {
  try {
    parse(a);
  } catch (const qfuse::Error &e) {
    return e.what();
  }
  return "";
}

const Step &guardedStep(const Artifact &artifact) {
  for (const Step &step : artifact.plans[0].steps)
    if (step.guard.when != When::Always)
      return step;
  throw qfuse::Error("no guarded step");
}

TEST(PermGuardsArtifact, ReadsPermsEqualAndPermsDiffer) {
  const std::vector<std::string> weights = {"model.layers.0.self_attn.q_proj",
                                            "model.layers.0.self_attn.k_proj"};
  Artifact equal = parse(guardedArtifact({{"perms_equal", weights}}));
  EXPECT_EQ(guardedStep(equal).guard.when, When::PermsEqual);
  EXPECT_EQ(guardedStep(equal).guard.weights, weights);
  Artifact differ = parse(guardedArtifact({{"perms_differ", weights}}));
  EXPECT_EQ(guardedStep(differ).guard.when, When::PermsDiffer);
}

TEST(PermGuardsArtifact, RejectsWhatCannotBeCompared) {
  const std::string q = "model.layers.0.self_attn.q_proj",
                    k = "model.layers.0.self_attn.k_proj";
  EXPECT_NE(parseError(guardedArtifact({{"perms_equal", {q, k}}}, 6))
                .find("needs version 7, the file says 6"),
            std::string::npos);
  EXPECT_NE(parseError(guardedArtifact({{"perms_equal", {q}}}))
                .find("two or more weight names"),
            std::string::npos);
  EXPECT_NE(parseError(guardedArtifact({{"perms_equal", {q, "nope"}}}))
                .find("weight 'nope' is not declared"),
            std::string::npos);
  EXPECT_NE(parseError(guardedArtifact(
                           {{"perms_equal", {q, k}}, {"perms_differ", {q, k}}}))
                .find("exactly one of"),
            std::string::npos);
  json plain = guardedArtifact({{"perms_equal", {q, k}}});
  plain["weights"][1]["encoding"] =
      "uint4, group = 128, scale = f16, zero = int";
  EXPECT_NE(parseError(plain).find("has no perm to compare"),
            std::string::npos);
}

} // namespace
