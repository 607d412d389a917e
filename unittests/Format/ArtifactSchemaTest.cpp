//===- ArtifactSchemaTest.cpp - the artifact schema's one serializer ------===//
//
// The serializer both sides use: a file in the layout qfuse-compile has
// always written reads into the schema and prints back byte for byte (every
// field survives, and the text layout is the one existing artifacts have);
// what the reader rejects on its own (types, version-gated fields); base64.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/ArtifactJson.h"

#include <gtest/gtest.h>

#include <functional>

using namespace qfuse::format::artifact;
using nlohmann::json;

namespace {

/// Every kind of field, in the layout llvm::json's pretty printer gave
/// (two-space indent, sorted keys, an f32 as 17 significant digits).
const char *kGolden = R"json({
  "buffers": [
    {
      "dtype": "f16",
      "name": "x",
      "shape": [
        "M",
        512
      ]
    },
    {
      "dtype": "f16",
      "name": "cache",
      "shape": [
        16,
        512
      ],
      "state": true
    },
    {
      "dtype": "f16",
      "name": "qf.workspace.f16",
      "shape": [
        131072
      ],
      "workspace": true
    }
  ],
  "format": "qfuse-artifact",
  "inputs": [
    "x"
  ],
  "kernels": [
    {
      "max_threads": 256,
      "name": "k",
      "params": [
        {
          "name": "x",
          "type": "ptr"
        },
        {
          "name": "n",
          "type": "i32"
        },
        {
          "name": "big",
          "type": "i64"
        },
        {
          "name": "eps",
          "type": "f32"
        },
        {
          "name": "codes",
          "type": "ptr"
        },
        {
          "name": "t",
          "type": "ptr"
        }
      ],
      "shared_bytes": 0
    },
    {
      "grid_dependency": true,
      "max_threads": 32,
      "name": "own",
      "params": [],
      "ptx": ".visible .entry own()\n{\nret;\n}\n",
      "shared_bytes": 16
    }
  ],
  "model": {
    "architecture": "llama",
    "eps": 9.9999997473787516e-06,
    "max_seq": 16,
    "nested": {
      "empty": {},
      "list": [
        1,
        "two"
      ]
    },
    "none": [],
    "note": "tab\there\u0001",
    "rope_theta": 500000,
    "tied": false
  },
  "module": {
    "cubin_base64": "f0VMRgIB",
    "ptx": ".visible .entry k(\n\t.param .u64 x\n)\n{\nret;\n}\n"
  },
  "outputs": [
    "x"
  ],
  "plans": [
    {
      "batch": 1,
      "steps": [
        {
          "memset": "cache"
        },
        {
          "args": [
            {
              "buffer": "x"
            },
            {
              "i32": -3
            },
            {
              "i64": 8589934592
            },
            {
              "f32": 9.9999997473787516e-06
            },
            {
              "component": "codes",
              "weight": "w"
            },
            {
              "tensor": "norm"
            }
          ],
          "block": [
            128,
            1,
            1
          ],
          "encoding": "int4, group = 128, scale = f16",
          "grid": [
            2,
            1,
            1
          ],
          "launch": "k",
          "op": "qf.gptq_block_update",
          "shared_bytes": 4096
        },
        {
          "gemm": {
            "bias": "norm",
            "residual": "cache",
            "weight_buffer": "qf.workspace.f16",
            "x": "x",
            "y": "x"
          }
        },
        {
          "gemm": {
            "weight": "w",
            "x": "x",
            "y": "x"
          }
        }
      ]
    }
  ],
  "producer": "qfuse-compile test",
  "target": {
    "chip": "sm_90a",
    "ptx_features": "+ptx80"
  },
  "tensors": [
    {
      "dtype": "f16",
      "name": "norm",
      "shape": [
        512
      ]
    }
  ],
  "version": 5,
  "weights": [
    {
      "encoding": "int4, group = 128, scale = f16",
      "layout": "tiled, tile_n = 1, tile_k = 32",
      "name": "w",
      "shape": [
        256,
        512
      ]
    },
    {
      "encoding": "int4, group = 128, scale = f16",
      "layout": "row_major",
      "name": "w@row_major",
      "shape": [
        256,
        512
      ],
      "source": "w"
    }
  ]
})json";

Artifact read(const std::string &text) {
  Artifact artifact;
  std::optional<ReadError> error = fromJson(json::parse(text), artifact);
  EXPECT_FALSE(error) << error->where << ": " << error->what;
  return artifact;
}

/// The read error for the golden artifact after `edit`.
ReadError readError(const std::function<void(json &)> &edit,
                    const std::string &prefix = "") {
  json root = json::parse(kGolden);
  edit(root);
  Artifact artifact;
  std::optional<ReadError> error = fromJson(root, artifact, prefix);
  EXPECT_TRUE(error) << "accepted " << root.dump();
  return error.value_or(ReadError());
}

} // namespace

TEST(ArtifactSchema, PrintsWhatItReadByteForByte) {
  EXPECT_EQ(printArtifact(read(kGolden)), std::string(kGolden) + "\n");
}

TEST(ArtifactSchema, ReadsEveryField) {
  Artifact a = read(kGolden);
  EXPECT_EQ(a.version, 5);
  EXPECT_EQ(a.chip, "sm_90a");
  EXPECT_EQ(a.moduleCubin, (std::vector<uint8_t>{0x7f, 'E', 'L', 'F', 2, 1}));
  ASSERT_EQ(a.kernels.size(), 2u);
  EXPECT_EQ(a.kernels[0].params[3].type, ParamType::F32);
  EXPECT_EQ(a.kernels[1].sharedBytes, 16);
  EXPECT_FALSE(a.kernels[0].gridDependency);
  EXPECT_TRUE(a.kernels[1].gridDependency);
  EXPECT_EQ(a.weights[1].checkpointName(), "w");
  ASSERT_EQ(a.buffers.size(), 3u);
  EXPECT_TRUE(a.buffers[0].shape[0].isBatch);
  EXPECT_TRUE(a.buffers[1].state);
  EXPECT_TRUE(a.buffers[2].workspace);
  const std::vector<Step> &steps = a.plans[0].steps;
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[0].kind, Step::Kind::Memset);
  EXPECT_EQ(steps[1].op, "qf.gptq_block_update");
  EXPECT_EQ(steps[1].args[1].intValue, -3);
  EXPECT_EQ(steps[1].args[2].intValue, int64_t(1) << 33);
  EXPECT_EQ(steps[1].args[3].floatValue, 1e-5f);
  EXPECT_EQ(steps[1].args[4].component, "codes");
  EXPECT_EQ(steps[2].gemm.weightBuffer, "qf.workspace.f16");
  EXPECT_EQ(steps[3].gemm.weight, "w");
  EXPECT_TRUE(a.model.present);
  EXPECT_EQ(a.model.maxSeq, 16);
  EXPECT_EQ(a.model.architecture, "llama");
}

TEST(ArtifactSchema, PrintsJsonAsLlvmJsonDid) {
  EXPECT_EQ(printJson(json::parse(R"([0.5, 1e-05, -2, 18446744073709551615,
                                      "a\"b\\c\u001f", {}, []])")),
            "[\n  0.5,\n  1.0000000000000001e-05,\n  -2,\n"
            "  18446744073709551615,\n  \"a\\\"b\\\\c\\u001f\",\n  {},\n"
            "  []\n]");
}

TEST(ArtifactSchema, ReaderNamesTheField) {
  ReadError e = readError(
      [](json &a) { a["plans"][0]["steps"][1]["args"][1]["i32"] = "3"; });
  EXPECT_EQ(e.where, "plans[0].steps[1].args[1].i32");
  EXPECT_EQ(e.what, "expected an integer, found \"3\"");
  e = readError([](json &a) { a["version"] = 3; });
  EXPECT_EQ(e.where, "buffers[2].workspace");
  e = readError([](json &a) { a["plans"][0]["steps"][0]["grid"] = 1; },
                "variants[1]");
  EXPECT_EQ(e.where, "variants[1].plans[0].steps[0]");
  EXPECT_NE(e.what.find("unknown field 'grid'"), std::string::npos) << e.what;
  e = readError([](json &a) { a.erase("kernels"); }, "variants[1]");
  EXPECT_EQ(e.where, "variants[1]");
  EXPECT_EQ(e.what, "missing field 'kernels'");
}

TEST(ArtifactSchema, Base64RoundTrips) {
  for (size_t size : {0, 1, 2, 3, 4, 5, 64}) {
    std::vector<uint8_t> bytes(size);
    for (size_t i = 0; i < size; ++i)
      bytes[i] = static_cast<uint8_t>(37 * i + 11);
    EXPECT_EQ(decodeBase64(encodeBase64(bytes)), bytes) << size;
  }
  EXPECT_EQ(encodeBase64({'h', 'e', 'l', 'l', 'o'}), "aGVsbG8=");
  EXPECT_FALSE(decodeBase64("aGVsbG8"));
}

TEST(ArtifactSchema, ReadsTheSetItPrints) {
  json other = json::parse(kGolden);
  other["target"]["chip"] = "sm_80";
  const std::string first = std::string(kGolden) + "\n";
  const std::string second = printJson(other) + "\n";
  ArtifactFile file;
  std::optional<ReadError> error =
      fromJson(json::parse(printArtifactSet({first, second})), file);
  ASSERT_FALSE(error) << error->where << ": " << error->what;
  EXPECT_TRUE(file.isSet);
  ASSERT_EQ(file.variants.size(), 2u);
  EXPECT_EQ(printArtifact(file.variants[0]), first);
  EXPECT_EQ(printArtifact(file.variants[1]), second);

  // A plain artifact is a file of one variant; a set's own fields are
  // checked, and a variant's errors carry its index.
  ASSERT_FALSE(fromJson(json::parse(kGolden), file));
  EXPECT_FALSE(file.isSet);
  EXPECT_EQ(file.variants.size(), 1u);
  json set = json::parse(printArtifactSet({first, second}));
  set["variants"][1]["plans"][0]["batch"] = 0;
  error = fromJson(set, file);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->where, "variants[1].plans[0].batch");
  set["extra"] = 1;
  error = fromJson(set, file);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->where, "extra");
}
