// Tensor-core tilings that split K across the blocks of a thread-block
// cluster (cluster_k, sm_90), reduced through distributed shared memory;
// checked on the GPU by bench/make-artifacts.sh's mma-cluster run.
!x = tensor<?x1536xf16>

func.func @int4_cluster4(%x: !x) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "int4" : !qf.weight<1536x1536, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 128, block_k = 64, split_k = 2, stages = 3, cluster_k = 4>} : !x, !qf.weight<1536x1536, #qf.enc<int4, group = 128, scale = f16>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
func.func @uint4_cluster2_bias(%x: !x) -> tensor<?x256xf16> {
  %w = qf.weight_ref "uint4" : !qf.weight<256x1536, #qf.enc<uint4, group = 64, scale = f16, zero = int>>
  %bias = qf.tensor_ref "uint4.bias" : tensor<256xf16>
  %y = qf.fused_matmul %x, %w bias(%bias : tensor<256xf16>) {tiling = #qf.tiling<mma, block_m = 32, block_n = 64, block_k = 64, split_k = 1, stages = 4, cluster_k = 2>} : !x, !qf.weight<256x1536, #qf.enc<uint4, group = 64, scale = f16, zero = int>> -> tensor<?x256xf16>
  return %y : tensor<?x256xf16>
}
func.func @nf4_cluster8(%x: tensor<?x8960xf16>) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "nf4" : !qf.weight<1536x8960, #qf.enc<nf4, group = 64, scale = f32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 128, block_k = 64, split_k = 2, stages = 3, cluster_k = 8>} : tensor<?x8960xf16>, !qf.weight<1536x8960, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}
