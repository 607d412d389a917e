// The wgmma (sm_90a) kernel on an explicit tiling, the smallest shape that
// is whole tiles: M = 128, N = 128, K = 256 (bench/sanitize/README.md;
// test/Tools/qfuse-compile/Inputs/wgmma.mlir has the full set).
func.func @int4_wgmma(%x: tensor<128x256xf16> {qf.name = "x"}) -> tensor<128x128xf16> {
  %w = qf.weight_ref "w" : !qf.weight<128x256, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<128x256xf16>, !qf.weight<128x256, #qf.enc<int4, group = 128, scale = f16>, #qf.layout<tiled, tile_n = 32, tile_k = 32>> -> tensor<128x128xf16>
  return %y : tensor<128x128xf16>
}
