// RUN: qfuse-opt %s --qf-roofline -o /dev/null 2>&1 | FileCheck %s
// RUN: qfuse-opt %s --qf-roofline="batch=4 bandwidth-gbps=2000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTS
// RUN: qfuse-opt %s --qf-roofline="json=%t.json" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=JSON --input-file=%t.json

// Llama-3-8B q_proj, int4 g128, M = 1: 4096 * 4096 / 2 bytes of codes,
// 4096 rows * 32 groups * 2 bytes of f16 scales, 4096 * 2 bytes in and out;
// 8667136 B / 4300 GB/s = 2.016 us, + 3 us launch.
#int4 = #qf.enc<int4, group = 128, scale = f16>
func.func @llama_q_proj(%x: tensor<1x4096xf16>) -> tensor<1x4096xf16> {
  %w = qf.weight_ref "model.layers.0.self_attn.q_proj" : !qf.weight<4096x4096, #int4>
  // CHECK: remark: roofline: M = 1, N = 4096, K = 4096;
  // CHECK-SAME: weights 8650752 B (codes 8388608, scales 262144, zeros 0, metadata 0);
  // CHECK-SAME: activations 8192 B; outputs 8192 B (residual 0, bias 0, norm 0); total 8667136 B;
  // CHECK-SAME: 0.5156 B/weight element vs fp16 2 B (3.88x less);
  // CHECK-SAME: 33554432 FLOP (3.87 FLOP/B);
  // CHECK-SAME: predicted 5.016 us at 4300.00 GB/s (memory 2.016 us, compute 0.042 us at 800.00 TFLOP/s, launch 3 us); memory-bound
  // OPTS: remark: roofline: M = 1, N = 4096, K = 4096;
  // OPTS-SAME: predicted 7.334 us at 2000.00 GB/s
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>} : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<1x4096xf16>
  return %y : tensor<1x4096xf16>
}

// JSON: [
// JSON-NEXT:   {
// JSON-NEXT:     "bandwidth_gbps": 4300,
// JSON-NEXT:     "bound": "memory",
// JSON-NEXT:     "bytes": {
// JSON-NEXT:       "activations": 8192,
// JSON-NEXT:       "bias": 0,
// JSON-NEXT:       "codes": 8388608,
// JSON-NEXT:       "metadata": 0,
// JSON-NEXT:       "norm": 0,
// JSON-NEXT:       "outputs": 8192,
// JSON-NEXT:       "residual": 0,
// JSON-NEXT:       "scales": 262144,
// JSON-NEXT:       "total": 8667136,
// JSON-NEXT:       "weights": 8650752,
// JSON-NEXT:       "zeros": 0
// JSON-NEXT:     },
// JSON-NEXT:     "bytes_per_weight_element": 0.515625,
// JSON-NEXT:     "compute_us": 0.04194
// JSON-NEXT:     "encoding": "#qf.enc<int4, group = 128, scale = f16>",
// JSON-NEXT:     "flops": 33554432,
// JSON-NEXT:     "flops_per_byte": 3.87145
// JSON-NEXT:     "fp16_bytes_per_weight_element": 2,
// JSON-NEXT:     "k": 4096,
// JSON-NEXT:     "launch_us": 3,
// JSON-NEXT:     "m": 1,
// JSON-NEXT:     "memory_us": 2.01561
// JSON-NEXT:     "n": 4096,
// JSON-NEXT:     "peak_tflops": 800,
// JSON-NEXT:     "predicted_us": 5.01561
// JSON-NEXT:     "tiling": "#qf.tiling<matvec, block_n = 4, k_unroll = 4>",
// JSON-NEXT:     "weight": "model.layers.0.self_attn.q_proj"
// JSON-NEXT:   },

// The same weight at M = 64 (prefill): 221 FLOP/B is past the ridge point
// (800 TFLOP/s / 4.3 TB/s = 186 FLOP/B), so it is compute-bound.
func.func @llama_q_proj_prefill(%x: tensor<64x4096xf16>) -> tensor<64x4096xf16> {
  %w = qf.weight_ref "model.layers.0.self_attn.q_proj" : !qf.weight<4096x4096, #int4>
  // CHECK: remark: roofline: M = 64, N = 4096, K = 4096;
  // CHECK-SAME: activations 524288 B; outputs 524288 B
  // CHECK-SAME: 2147483648 FLOP (221.41 FLOP/B);
  // CHECK-SAME: predicted 5.256 us at 4300.00 GB/s (memory 2.256 us, compute 2.684 us at 800.00 TFLOP/s, launch 3 us); compute-bound
  %y = qf.fused_matmul %x, %w : tensor<64x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<64x4096xf16>
  return %y : tensor<64x4096xf16>
}
// JSON: "bound": "compute",
// JSON: "flops": 2147483648,

// NF4 (bitsandbytes, blocks of 64, f32 absmax), Llama-3-8B gate_proj:
// 14336 * 64 * 4 bytes of scales, 0.5625 B per weight.
#nf4 = #qf.enc<nf4, group = 64, scale = f32>
func.func @llama_gate_nf4(%x: tensor<1x4096xf16>) -> tensor<1x14336xf16> {
  %w = qf.weight_ref "model.layers.0.mlp.gate_proj" : !qf.weight<14336x4096, #nf4>
  // CHECK: remark: roofline: M = 1, N = 14336, K = 4096;
  // CHECK-SAME: weights 33030144 B (codes 29360128, scales 3670016, zeros 0, metadata 0);
  // CHECK-SAME: activations 8192 B; outputs 28672 B (residual 0, bias 0, norm 0); total 33067008 B;
  // CHECK-SAME: 0.5625 B/weight element vs fp16 2 B (3.56x less);
  // CHECK-SAME: 117440512 FLOP
  // CHECK-SAME: predicted 10.690 us
  %y = qf.fused_matmul %x, %w : tensor<1x4096xf16>, !qf.weight<14336x4096, #nf4> -> tensor<1x14336xf16>
  return %y : tensor<1x14336xf16>
}
// JSON: "encoding": "#qf.enc<nf4, group = 64, scale = f32>",

// 2:4 sparsity: the kept half of the values plus a 2-bit position for each
// (K / 8 bytes a row), fp16 and with int4 codes.
#sp = #qf.enc<f16, sparse = 2:4>
#sp4 = #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>
func.func @sparse_2_4(%x: tensor<1x4096xf16>) {
  %a = qf.weight_ref "model.layers.0.self_attn.o_proj" : !qf.weight<4096x4096, #sp>
  %b = qf.weight_ref "model.layers.1.self_attn.o_proj" : !qf.weight<4096x4096, #sp4>
  // CHECK: remark: roofline: M = 1, N = 4096, K = 4096;
  // CHECK-SAME: weights 18874368 B (codes 16777216, scales 0, zeros 0, metadata 2097152);
  // CHECK-SAME: 1.1250 B/weight element vs fp16 2 B (1.78x less);
  // CHECK-SAME: predicted 7.393 us
  %0 = qf.fused_matmul %x, %a : tensor<1x4096xf16>, !qf.weight<4096x4096, #sp> -> tensor<1x4096xf16>
  // CHECK: remark: roofline: M = 1, N = 4096, K = 4096;
  // CHECK-SAME: weights 6553600 B (codes 4194304, scales 262144, zeros 0, metadata 2097152);
  // CHECK-SAME: 0.3906 B/weight element vs fp16 2 B (5.12x less);
  // CHECK-SAME: predicted 4.528 us
  %1 = qf.fused_matmul %x, %b : tensor<1x4096xf16>, !qf.weight<4096x4096, #sp4> -> tensor<1x4096xf16>
  return
}

// GPTQ asymmetric with act_order, Qwen2.5-1.5B q_proj: packed 4-bit zero
// points (1536 * 12 / 2 bytes) and an int32 g_idx (1536 * 4 bytes).
#gptq = #qf.enc<uint4, group = 128, scale = f16, zero = int, act_order>
func.func @qwen_q_gptq(%x: tensor<1x1536xf16>) -> tensor<1x1536xf16> {
  %w = qf.weight_ref "model.layers.0.self_attn.q_proj" : !qf.weight<1536x1536, #gptq>
  // CHECK: remark: roofline: M = 1, N = 1536, K = 1536;
  // CHECK-SAME: weights 1231872 B (codes 1179648, scales 36864, zeros 9216, metadata 6144);
  // CHECK-SAME: total 1238016 B; 0.5221 B/weight element
  %y = qf.fused_matmul %x, %w : tensor<1x1536xf16>, !qf.weight<1536x1536, #gptq> -> tensor<1x1536xf16>
  return %y : tensor<1x1536xf16>
}

// Llama-3-8B gate and up (two weights) with the RMSNorm prologue, silu_mul
// and the residual, dynamic M: planned for `batch` (1, or 4 in the OPTS
// run). N counts the rows of both weights.
func.func @fused_mlp(%x: tensor<?x4096xf16>, %g: tensor<4096xf16>, %r: tensor<?x14336xf16>) -> tensor<?x14336xf16> {
  %wg = qf.weight_ref "model.layers.1.mlp.gate_proj" : !qf.weight<14336x4096, #int4>
  %wu = qf.weight_ref "model.layers.1.mlp.up_proj" : !qf.weight<14336x4096, #int4>
  // CHECK: remark: roofline: M = 1, N = 28672, K = 4096;
  // CHECK-SAME: weights 60555264 B (codes 58720256, scales 1835008, zeros 0, metadata 0);
  // CHECK-SAME: activations 8192 B; outputs 28672 B (residual 28672, bias 0, norm 8192); total 60628992 B;
  // CHECK-SAME: 234881024 FLOP
  // OPTS: remark: roofline: M = 4, N = 28672, K = 4096;
  // OPTS-SAME: activations 32768 B; outputs 114688 B (residual 114688, bias 0, norm 8192); total 60825600 B;
  // OPTS-SAME: 939524096 FLOP
  // OPTS-SAME: predicted 33.413 us at 2000.00 GB/s
  %y = qf.fused_matmul %x, %wg up(%wu : !qf.weight<14336x4096, #int4>) norm(%g : tensor<4096xf16>) residual(%r : tensor<?x14336xf16>) {norm_eps = 1.0e-05 : f32, activation = #qf<activation silu_mul>} : tensor<?x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<?x14336xf16>
  return %y : tensor<?x14336xf16>
}
// JSON: "weight": "model.layers.1.mlp.gate_proj"
// JSON-NEXT: }
// JSON-NEXT: ]
