//===- ValidArtifact.h - one small valid artifact for the tests -*- C++ -*-===//
//
// A version 2 artifact with one matvec launch (q_proj, int4 group 128) that
// the validator accepts: ArtifactTest breaks it one rule at a time, and the
// C API's thread tests validate it from many threads.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_RUNTIME_VALIDARTIFACT_H
#define QFUSE_UNITTESTS_RUNTIME_VALIDARTIFACT_H

namespace qfuse::testing {

inline const char *kValidArtifact = R"json({
  "format": "qfuse-artifact",
  "version": 2,
  "producer": "qfuse-compile test",
  "target": {"chip": "sm_90", "ptx_features": "+ptx80"},
  "kernels": [
    {
      "name": "qf_matvec_0",
      "ptx": ".version 8.0\n.target sm_90\n.visible .entry qf_matvec_0(\n.param .u64 p0\n)\n{\nret;\n}\n",
      "cubin_base64": "f0VMRgIB",
      "params": [
        {"name": "x", "type": "ptr"},
        {"name": "codes", "type": "ptr"},
        {"name": "scales", "type": "ptr"},
        {"name": "y", "type": "ptr"},
        {"name": "m", "type": "i32"},
        {"name": "alpha", "type": "f32"},
        {"name": "n", "type": "i64"}
      ],
      "shared_bytes": 1024,
      "max_threads": 256
    },
    {
      "name": "qf_rmsnorm_0",
      "ptx": ".visible .entry qf_rmsnorm_0(.param .u64 a, .param .u64 b)\n{\nret;\n}\n",
      "params": [
        {"name": "x", "type": "ptr"},
        {"name": "w", "type": "ptr"}
      ],
      "max_threads": 128
    },
    {
      "name": "qf_matvec_1",
      "ptx": ".visible .entry qf_matvec_1 (\n)\n{\nret;\n}\n",
      "params": [
        {"name": "codes", "type": "ptr"},
        {"name": "zeros", "type": "ptr"},
        {"name": "out", "type": "ptr"}
      ]
    }
  ],
  "weights": [
    {
      "name": "model.layers.0.self_attn.q_proj",
      "shape": [256, 512],
      "encoding": "int4, group = 128, scale = f16",
      "layout": "tiled, tile_n = 4, tile_k = 256, interleave = 2"
    },
    {
      "name": "model.layers.0.self_attn.k_proj",
      "shape": [128, 512],
      "encoding": "uint4, group = 128, scale = f16, zero = int",
      "layout": "row_major"
    }
  ],
  "tensors": [
    {"name": "model.norm.weight", "shape": [512], "dtype": "f16"}
  ],
  "buffers": [
    {"name": "x", "shape": ["M", 512], "dtype": "f16"},
    {"name": "y", "shape": ["M", 256], "dtype": "f16"},
    {"name": "y_partial", "shape": [2, "M", 256], "dtype": "f32"}
  ],
  "inputs": ["x"],
  "outputs": ["y"],
  "plans": [
    {
      "batch": 1,
      "steps": [
        {"memset": "y_partial"},
        {
          "launch": "qf_rmsnorm_0",
          "grid": [1, 1, 1],
          "block": [128, 1, 1],
          "args": [{"buffer": "x"}, {"tensor": "model.norm.weight"}]
        },
        {
          "launch": "qf_matvec_0",
          "grid": [64, 1, 1],
          "block": [128, 1, 1],
          "shared_bytes": 4096,
          "args": [
            {"buffer": "x"},
            {"weight": "model.layers.0.self_attn.q_proj", "component": "codes"},
            {"weight": "model.layers.0.self_attn.q_proj", "component": "scales"},
            {"buffer": "y"},
            {"i32": -7},
            {"f32": 0.5},
            {"i64": 8589934592}
          ]
        }
      ]
    },
    {
      "batch": 16,
      "steps": [
        {
          "launch": "qf_matvec_1",
          "grid": [32, 2, 1],
          "block": [64, 2, 1],
          "args": [
            {"weight": "model.layers.0.self_attn.k_proj", "component": "codes"},
            {"weight": "model.layers.0.self_attn.k_proj", "component": "zeros"},
            {"buffer": "y_partial"}
          ]
        }
      ]
    }
  ],
  "roofline": [
    {"op": "model.layers.0.self_attn.q_proj", "bytes": 69632, "flops": 262144}
  ]
})json";

} // namespace qfuse::testing

#endif // QFUSE_UNITTESTS_RUNTIME_VALIDARTIFACT_H
