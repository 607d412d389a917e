// Gate/up with silu_mul on the mma.sync kernel at block_m 128: 128 sums a
// lane for each of gate and up, more than a lane's registers hold at once,
// so the up warps read each gate sum where they store (TensorCoreEpilogue.cpp,
// storeOutputs). M = 130: a full and a 2-row m block.
func.func @gate_up(%x: tensor<130x512xf16>) -> tensor<130x256xf16> {
  %w = qf.weight_ref "gate" : !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16>>
  %u = qf.weight_ref "up" : !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.fused_matmul %x, %w up(%u : !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16>>) {tiling = #qf.tiling<mma, block_m = 128, block_n = 32, block_k = 64, split_k = 2, stages = 3>, activation = #qf<activation silu_mul>} : tensor<130x512xf16>, !qf.weight<256x512, #qf.enc<int4, group = 128, scale = f16>> -> tensor<130x256xf16>
  return %y : tensor<130x256xf16>
}
