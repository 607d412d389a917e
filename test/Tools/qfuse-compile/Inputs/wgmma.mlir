// The wgmma (sm_90a) variant of the tensor-core kernel on explicit
// tilings: warpgroup MMAs with the decoded weights as the register A
// operand and the activation tile as the shared-memory B operand, for
// 4-bit and 8-bit codes, group and per-channel scales, a shape that is
// not whole tiles, bf16 activations, split-K (a warpgroup per k group)
// and cluster_k; M = 77 leaves a partial batch
// tile. Compiled for --chip=sm_90a by the PTX test and by
// bench/make-artifacts.sh, whose GPU round checks every launch.
func.func @int4_g128_m128(%x: tensor<128x4096xf16> {qf.name = "x_int4_g128_m128"}) -> tensor<128x4096xf16> {
  %w = qf.weight_ref "int4_g128" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 3>} : tensor<128x4096xf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x4096xf16>
  return %y : tensor<128x4096xf16>
}
func.func @int4_g128_m64_m128(%x: tensor<128x4096xf16> {qf.name = "x_int4_g128_m64_m128"}) -> tensor<128x4096xf16> {
  %w = qf.weight_ref "int4_g128_m64" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<128x4096xf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x4096xf16>
  return %y : tensor<128x4096xf16>
}
func.func @uint4_g32_m128(%x: tensor<128x4096xf16> {qf.name = "x_uint4_g32_m128"}) -> tensor<128x1024xf16> {
  %w = qf.weight_ref "uint4_g32" : !qf.weight<1024x4096, #qf.enc<uint4, group = 32, scale = f16, zero = int>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<128x4096xf16>, !qf.weight<1024x4096, #qf.enc<uint4, group = 32, scale = f16, zero = int>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x1024xf16>
  return %y : tensor<128x1024xf16>
}
func.func @nf4_g64_m128(%x: tensor<128x1536xf16> {qf.name = "x_nf4_g64_m128"}) -> tensor<128x2048xf16> {
  %w = qf.weight_ref "nf4_g64" : !qf.weight<2048x1536, #qf.enc<nf4, group = 64, scale = f32>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<128x1536xf16>, !qf.weight<2048x1536, #qf.enc<nf4, group = 64, scale = f32>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x2048xf16>
  return %y : tensor<128x2048xf16>
}
func.func @nvfp4_m128(%x: tensor<128x1536xf16> {qf.name = "x_nvfp4_m128"}) -> tensor<128x1536xf16> {
  %w = qf.weight_ref "nvfp4" : !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<128x1536xf16>, !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x1536xf16>
  return %y : tensor<128x1536xf16>
}
func.func @int8_pc_m128(%x: tensor<128x1536xf16> {qf.name = "x_int8_pc_m128"}) -> tensor<128x1536xf16> {
  %w = qf.weight_ref "int8_pc" : !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<128x1536xf16>, !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x1536xf16>
  return %y : tensor<128x1536xf16>
}
func.func @fp8_pc_m128(%x: tensor<128x1536xf16> {qf.name = "x_fp8_pc_m128"}) -> tensor<128x2048xf16> {
  %w = qf.weight_ref "fp8_pc" : !qf.weight<2048x1536, #qf.enc<fp8e4m3, per_channel, scale = f32>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<128x1536xf16>, !qf.weight<2048x1536, #qf.enc<fp8e4m3, per_channel, scale = f32>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x2048xf16>
  return %y : tensor<128x2048xf16>
}
func.func @int4_odd_m128(%x: tensor<128x1000xf16> {qf.name = "x_int4_odd_m128"}) -> tensor<128x1000xf16> {
  %w = qf.weight_ref "int4_odd" : !qf.weight<1000x1000, #qf.enc<int4, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<128x1000xf16>, !qf.weight<1000x1000, #qf.enc<int4, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x1000xf16>
  return %y : tensor<128x1000xf16>
}
func.func @int4_bf16_m128(%x: tensor<128x4096xbf16> {qf.name = "x_int4_bf16_m128"}) -> tensor<128x4096xbf16> {
  %w = qf.weight_ref "int4_bf16" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<128x4096xbf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x4096xbf16>
  return %y : tensor<128x4096xbf16>
}
func.func @int4_g128_m77(%x: tensor<77x4096xf16> {qf.name = "x_int4_g128_m77"}) -> tensor<77x4096xf16> {
  %w = qf.weight_ref "int4_g128" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 3>} : tensor<77x4096xf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x4096xf16>
  return %y : tensor<77x4096xf16>
}
func.func @int4_g128_m64_m77(%x: tensor<77x4096xf16> {qf.name = "x_int4_g128_m64_m77"}) -> tensor<77x4096xf16> {
  %w = qf.weight_ref "int4_g128_m64" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<77x4096xf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x4096xf16>
  return %y : tensor<77x4096xf16>
}
func.func @uint4_g32_m77(%x: tensor<77x4096xf16> {qf.name = "x_uint4_g32_m77"}) -> tensor<77x1024xf16> {
  %w = qf.weight_ref "uint4_g32" : !qf.weight<1024x4096, #qf.enc<uint4, group = 32, scale = f16, zero = int>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<77x4096xf16>, !qf.weight<1024x4096, #qf.enc<uint4, group = 32, scale = f16, zero = int>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x1024xf16>
  return %y : tensor<77x1024xf16>
}
func.func @nf4_g64_m77(%x: tensor<77x1536xf16> {qf.name = "x_nf4_g64_m77"}) -> tensor<77x2048xf16> {
  %w = qf.weight_ref "nf4_g64" : !qf.weight<2048x1536, #qf.enc<nf4, group = 64, scale = f32>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<77x1536xf16>, !qf.weight<2048x1536, #qf.enc<nf4, group = 64, scale = f32>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x2048xf16>
  return %y : tensor<77x2048xf16>
}
func.func @nvfp4_m77(%x: tensor<77x1536xf16> {qf.name = "x_nvfp4_m77"}) -> tensor<77x1536xf16> {
  %w = qf.weight_ref "nvfp4" : !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<77x1536xf16>, !qf.weight<1536x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x1536xf16>
  return %y : tensor<77x1536xf16>
}
func.func @int8_pc_m77(%x: tensor<77x1536xf16> {qf.name = "x_int8_pc_m77"}) -> tensor<77x1536xf16> {
  %w = qf.weight_ref "int8_pc" : !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<77x1536xf16>, !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x1536xf16>
  return %y : tensor<77x1536xf16>
}
func.func @fp8_pc_m77(%x: tensor<77x1536xf16> {qf.name = "x_fp8_pc_m77"}) -> tensor<77x2048xf16> {
  %w = qf.weight_ref "fp8_pc" : !qf.weight<2048x1536, #qf.enc<fp8e4m3, per_channel, scale = f32>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<77x1536xf16>, !qf.weight<2048x1536, #qf.enc<fp8e4m3, per_channel, scale = f32>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x2048xf16>
  return %y : tensor<77x2048xf16>
}
func.func @int4_odd_m77(%x: tensor<77x1000xf16> {qf.name = "x_int4_odd_m77"}) -> tensor<77x1000xf16> {
  %w = qf.weight_ref "int4_odd" : !qf.weight<1000x1000, #qf.enc<int4, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<77x1000xf16>, !qf.weight<1000x1000, #qf.enc<int4, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x1000xf16>
  return %y : tensor<77x1000xf16>
}
func.func @int4_bf16_m77(%x: tensor<77x4096xbf16> {qf.name = "x_int4_bf16_m77"}) -> tensor<77x4096xbf16> {
  %w = qf.weight_ref "int4_bf16" : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<77x4096xbf16>, !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x4096xbf16>
  return %y : tensor<77x4096xbf16>
}
func.func @down_splitk_m128(%x: tensor<128x14336xf16> {qf.name = "x_down_splitk_m128"}) -> tensor<128x4096xf16> {
  %w = qf.weight_ref "down_splitk" : !qf.weight<4096x14336, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 4, stages = 3>} : tensor<128x14336xf16>, !qf.weight<4096x14336, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x4096xf16>
  return %y : tensor<128x4096xf16>
}
func.func @q_cluster_m128(%x: tensor<128x4096xf16> {qf.name = "x_q_cluster_m128"}) -> tensor<128x4096xf16> {
  %w = qf.weight_ref "q_cluster" : !qf.weight<4096x4096, #qf.enc<uint4, group = 128, scale = f16, zero = int>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, split_k = 2, stages = 4, cluster_k = 2>} : tensor<128x4096xf16>, !qf.weight<4096x4096, #qf.enc<uint4, group = 128, scale = f16, zero = int>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x4096xf16>
  return %y : tensor<128x4096xf16>
}
func.func @down_splitk_m77(%x: tensor<77x14336xf16> {qf.name = "x_down_splitk_m77"}) -> tensor<77x4096xf16> {
  %w = qf.weight_ref "down_splitk" : !qf.weight<4096x14336, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 4, stages = 3>} : tensor<77x14336xf16>, !qf.weight<4096x14336, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x4096xf16>
  return %y : tensor<77x4096xf16>
}
func.func @q_cluster_m77(%x: tensor<77x4096xf16> {qf.name = "x_q_cluster_m77"}) -> tensor<77x4096xf16> {
  %w = qf.weight_ref "q_cluster" : !qf.weight<4096x4096, #qf.enc<uint4, group = 128, scale = f16, zero = int>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, split_k = 2, stages = 4, cluster_k = 2>} : tensor<77x4096xf16>, !qf.weight<4096x4096, #qf.enc<uint4, group = 128, scale = f16, zero = int>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x4096xf16>
  return %y : tensor<77x4096xf16>
}
func.func @gated_int4_m128(%x: tensor<128x4096xf16> {qf.name = "x_gated_int4_m128"}) -> tensor<128x2048xf16> {
  %g = qf.weight_ref "gated_gate" : !qf.weight<2048x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %u = qf.weight_ref "gated_up" : !qf.weight<2048x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %g up(%u : !qf.weight<2048x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 3>} : tensor<128x4096xf16>, !qf.weight<2048x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x2048xf16>
  return %y : tensor<128x2048xf16>
}
func.func @gated_int4_m77(%x: tensor<77x4096xf16> {qf.name = "x_gated_int4_m77"}) -> tensor<77x2048xf16> {
  %g = qf.weight_ref "gated_gate" : !qf.weight<2048x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %u = qf.weight_ref "gated_up" : !qf.weight<2048x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %g up(%u : !qf.weight<2048x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 4>} : tensor<77x4096xf16>, !qf.weight<2048x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<77x2048xf16>
  return %y : tensor<77x2048xf16>
}
func.func @gated_nvfp4_split_m128(%x: tensor<128x1536xf16> {qf.name = "x_gated_nvfp4_split_m128"}) -> tensor<128x1000xf16> {
  %g = qf.weight_ref "gated_nvfp4_gate" : !qf.weight<1000x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %u = qf.weight_ref "gated_nvfp4_up" : !qf.weight<1000x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %g up(%u : !qf.weight<1000x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 3>} : tensor<128x1536xf16>, !qf.weight<1000x1536, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x1000xf16>
  return %y : tensor<128x1000xf16>
}
func.func @gated_int8_pc_m96(%x: tensor<96x1536xf16> {qf.name = "x_gated_int8_pc_m96"}) -> tensor<96x1536xf16> {
  %g = qf.weight_ref "gated_int8_gate" : !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %u = qf.weight_ref "gated_int8_up" : !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %g up(%u : !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>) {activation = #qf<activation silu_mul>, tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 4>} : tensor<96x1536xf16>, !qf.weight<1536x1536, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<96x1536xf16>
  return %y : tensor<96x1536xf16>
}
// The sm_90a default at M = 384 and up on a wide weight (block_m 128, one
// k group): 128 sums a thread, stored to a row stride N that is no power
// of two.
func.func @int4_g128_n14336_m512(%x: tensor<512x4096xf16> {qf.name = "x_int4_g128_n14336_m512"}) -> tensor<512x14336xf16> {
  %w = qf.weight_ref "int4_g128_n14336" : !qf.weight<14336x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 4>} : tensor<512x4096xf16>, !qf.weight<14336x4096, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<512x14336xf16>
  return %y : tensor<512x14336xf16>
}
