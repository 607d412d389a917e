//===- ArtifactSetTest.cpp - artifact sets and the variant a device runs --===//
//
// selectVariant against fake compute capabilities (no GPU: 8.0, 8.6, 8.9,
// 9.0, 10.0, 12.0), then ArtifactSet: a plain artifact as a set of one, a
// set of three chips, and one broken set per rule of docs/artifact.md
// (Artifact sets), each failing with the variant's index and field.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/artifact/ArtifactSet.h"
#include "qfuse/runtime/Error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>

using namespace qfuse::runtime;
using nlohmann::json;

namespace {

/// A small valid artifact for `chip`: one buffer zeroed by the only plan.
json artifactFor(const std::string &chip) {
  return {{"format", "qfuse-artifact"},
          {"version", 2},
          {"producer", "qfuse-compile test"},
          {"target", {{"chip", chip}, {"ptx_features", "+ptx80"}}},
          {"kernels", json::array()},
          {"weights", json::array()},
          {"tensors", json::array()},
          {"buffers", {{{"name", "y"}, {"shape", {"M", 8}}, {"dtype", "f16"}}}},
          {"inputs", json::array()},
          {"outputs", {"y"}},
          {"plans", {{{"batch", 1}, {"steps", {{{"memset", "y"}}}}}}}};
}

json setOf(std::initializer_list<const char *> chips) {
  json set = {{"format", "qfuse-artifact-set"},
              {"version", 1},
              {"variants", json::array()}};
  for (const char *chip : chips)
    set["variants"].push_back(artifactFor(chip));
  return set;
}

std::vector<ChipTarget> targets(std::initializer_list<const char *> chips) {
  std::vector<ChipTarget> out;
  for (const char *chip : chips)
    out.push_back(*ChipTarget::parse(chip));
  return out;
}

/// The chip selectVariant picks from `chips` for major.minor, or "none".
std::string picked(std::initializer_list<const char *> chips, int major,
                   int minor) {
  std::vector<ChipTarget> list = targets(chips);
  std::optional<size_t> index = selectVariant(list, major, minor);
  return index ? list[*index].str() : "none";
}

void expectError(const json &value,
                 std::initializer_list<const char *> fragments) {
  try {
    ArtifactSet::parse(value.dump(), "set.qfa");
    ADD_FAILURE() << "expected an error for " << value.dump().substr(0, 200);
  } catch (const qfuse::Error &e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("artifact 'set.qfa'"), std::string::npos)
        << message;
    for (const char *fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "missing '" << fragment << "' in: " << message;
  }
}

TEST(SelectVariant, TheDefaultSetOnEachDevice) {
  const auto set = {"sm_80", "sm_90", "sm_90a"};
  EXPECT_EQ(picked(set, 8, 0), "sm_80");  // A100
  EXPECT_EQ(picked(set, 8, 6), "sm_80");  // A10, RTX 30
  EXPECT_EQ(picked(set, 8, 9), "sm_80");  // L4, L40, RTX 40
  EXPECT_EQ(picked(set, 9, 0), "sm_90a"); // H100, H200: wgmma
  EXPECT_EQ(picked(set, 10, 0), "sm_90"); // B200: sm_90 PTX, JIT-compiled
  EXPECT_EQ(picked(set, 12, 0), "sm_90"); // RTX 50
  EXPECT_EQ(picked(set, 7, 5), "none");   // older than every variant
}

TEST(SelectVariant, NewestChipAtOrBelowTheDevice) {
  EXPECT_EQ(picked({"sm_80", "sm_89", "sm_90"}, 8, 9), "sm_89");
  EXPECT_EQ(picked({"sm_80", "sm_89", "sm_90"}, 8, 6), "sm_80");
  EXPECT_EQ(picked({"sm_80", "sm_89", "sm_90"}, 9, 0), "sm_90");
  // File order does not matter.
  EXPECT_EQ(picked({"sm_90a", "sm_90", "sm_80"}, 9, 0), "sm_90a");
  EXPECT_EQ(picked({"sm_90", "sm_80"}, 8, 6), "sm_80");
  EXPECT_EQ(picked({"sm_90a", "sm_90", "sm_80"}, 12, 0), "sm_90");
}

TEST(SelectVariant, ArchSpecificOnlyOnItsOwnCapability) {
  EXPECT_EQ(picked({"sm_90a"}, 9, 0), "sm_90a");
  EXPECT_EQ(picked({"sm_90a"}, 10, 0), "none");
  EXPECT_EQ(picked({"sm_90a"}, 8, 0), "none");
  EXPECT_EQ(picked({"sm_90a", "sm_80"}, 10, 0), "sm_80");
  EXPECT_EQ(picked({"sm_90a", "sm_80"}, 9, 0), "sm_90a");
  EXPECT_EQ(picked({"sm_90"}, 8, 6), "none");
  EXPECT_EQ(picked({}, 9, 0), "none");
}

TEST(SelectVariant, MismatchTextsForOneTarget) {
  EXPECT_EQ(targetMismatch(*ChipTarget::parse("sm_80"), 9, 0, "dev"), "");
  const std::string newer =
      targetMismatch(*ChipTarget::parse("sm_90"), 8, 0, "device 0 (A100)");
  EXPECT_NE(newer.find("targets sm_90 but device 0 (A100) has compute "
                       "capability 8.0 (older); recompile for sm_80"),
            std::string::npos)
      << newer;
  const std::string exact =
      targetMismatch(*ChipTarget::parse("sm_90a"), 10, 0, "device 1");
  EXPECT_NE(exact.find("sm_90a, which runs only on compute capability 9.0, "
                       "but device 1 is 10.0; recompile for sm_100"),
            std::string::npos)
      << exact;
}

TEST(ArtifactSet, APlainArtifactIsASetOfOne) {
  ArtifactSet set = ArtifactSet::parse(artifactFor("sm_90").dump(), "a.qfa");
  EXPECT_FALSE(set.isSet());
  ASSERT_EQ(set.variants().size(), 1u);
  EXPECT_EQ(set.chips(), "sm_90");
  EXPECT_EQ(set.variants()[0].describeTarget(), "sm_90");
  EXPECT_TRUE(set.variants()[0].setChips.empty());
  EXPECT_EQ(set.variantFor(10, 0, "dev").chip, "sm_90");
  try {
    set.variantFor(8, 6, "device 0 (NVIDIA A10, sm_86)");
    ADD_FAILURE() << "an sm_90 artifact ran on 8.6";
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find("artifact 'a.qfa': the artifact "
                                         "targets sm_90 but device 0"),
              std::string::npos)
        << e.what();
  }
}

TEST(ArtifactSet, ThreeChipsParsedAndChosen) {
  ArtifactSet set =
      ArtifactSet::parse(setOf({"sm_80", "sm_90", "sm_90a"}).dump(), "s.qfa");
  EXPECT_TRUE(set.isSet());
  ASSERT_EQ(set.variants().size(), 3u);
  EXPECT_EQ(set.chips(), "sm_80, sm_90, sm_90a");
  EXPECT_EQ(set.variants()[1].variantIndex, 1u);
  EXPECT_EQ(set.variants()[2].source, "s.qfa");
  EXPECT_EQ(set.variantIndexFor(9, 0, "an H200"), 2u);
  EXPECT_EQ(set.variantFor(8, 6, "an A10").chip, "sm_80");
  const Artifact &hopper = set.variantFor(9, 0, "an H200");
  EXPECT_EQ(hopper.describeTarget(),
            "sm_90a (variant 3 of the set sm_80, sm_90, sm_90a)");
  EXPECT_EQ(hopper.plans.size(), 1u);

  Artifact taken = std::move(set).takeVariantFor(12, 0, "an RTX 5090");
  EXPECT_EQ(taken.chip, "sm_90");
  EXPECT_EQ(taken.findBuffer("y")->shape.size(), 2u);
}

TEST(ArtifactSet, NoVariantForTheDeviceListsThemAll) {
  ArtifactSet set =
      ArtifactSet::parse(setOf({"sm_90", "sm_90a"}).dump(), "s.qfa");
  try {
    set.variantFor(8, 0, "device 0 (NVIDIA A100, sm_80)");
    ADD_FAILURE() << "an sm_90 set ran on 8.0";
  } catch (const qfuse::Error &e) {
    const std::string message = e.what();
    for (const char *fragment :
         {"artifact 's.qfa': no variant of the set runs on device 0 (NVIDIA "
          "A100, sm_80) (compute capability 8.0)",
          "the set has sm_90, sm_90a", "includes sm_80"})
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "missing '" << fragment << "' in: " << message;
  }
}

TEST(ArtifactSet, BadSetsNameTheField) {
  json empty = setOf({});
  expectError(empty, {"variants: empty: a set holds at least one artifact"});

  json missing = setOf({"sm_80"});
  missing.erase("variants");
  expectError(missing, {"missing field 'variants'"});

  json notArray = setOf({"sm_80"});
  notArray["variants"] = artifactFor("sm_80");
  expectError(notArray, {"variants: expected an array of artifacts"});

  json version = setOf({"sm_80"});
  version["version"] = 2;
  expectError(version, {"version: found 2", "artifact sets of version 1"});

  json unknown = setOf({"sm_80"});
  unknown["chips"] = {"sm_80"};
  expectError(unknown, {"chips: unknown field in an artifact set"});

  json duplicate = setOf({"sm_80", "sm_90", "sm_90"});
  expectError(duplicate,
              {"variants[2].target.chip: \"sm_90\" is also the chip of "
               "variants[1]; a set holds one artifact per chip"});
}

TEST(ArtifactSet, AnInvalidVariantNamesItsIndexAndField) {
  json badChip = setOf({"sm_80", "sm_90"});
  badChip["variants"][1]["target"]["chip"] = "hopper";
  expectError(badChip, {"variants[1].target.chip: \"hopper\" is not a chip"});

  json noOutputs = setOf({"sm_80", "sm_90"});
  noOutputs["variants"][0].erase("outputs");
  expectError(noOutputs, {"variants[0]: missing field 'outputs'"});

  json badStep = setOf({"sm_80", "sm_90", "sm_90a"});
  badStep["variants"][2]["plans"][0]["steps"][0]["memset"] = "nowhere";
  expectError(badStep, {"variants[2].plans[0].steps[0]", "nowhere"});

  json badVersion = setOf({"sm_80"});
  badVersion["variants"][0]["version"] = 99;
  expectError(badVersion, {"variants[0].version: found 99"});

  json nested = setOf({"sm_80"});
  nested["variants"].push_back(setOf({"sm_90"}));
  expectError(nested, {"variants[1].format: expected \"qfuse-artifact\""});

  json notObject = setOf({"sm_80"});
  notObject["variants"].push_back(3);
  expectError(notObject, {"variants[1]: expected an object"});
}

TEST(ArtifactSet, ArtifactParseRefusesASet) {
  try {
    Artifact::parse(setOf({"sm_80", "sm_90"}).dump(), "s.qfa");
    ADD_FAILURE() << "Artifact::parse took a set";
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "format: this file is an artifact set"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("ArtifactSet::load"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
