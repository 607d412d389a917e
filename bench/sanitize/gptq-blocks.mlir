// Two qf.gptq_block_update launches for the sanitizer round
// (bench/sanitize/README.md): the dynamic mode (group parameters computed
// in the block, at a column offset) and the static mode (one scale per
// column read from an operand), R = 256 rows, B = 128 columns, as
// test/Tools/qfuse-compile/Inputs/gptq-blocks.mlir writes every grid; the
// weight buffer names say the grid to qfuse-gptq-check.
!w = tensor<256x128xf32>
!u = tensor<128x128xf32>
!c = tensor<256x128xi8>
func.func @gptq_blocks(
    %w0: !w {qf.name = "w:int4, group = 32, scale = f16"},
    %u0: !u {qf.name = "u0"},
    %w1: !w {qf.name = "w:int4, group = 32, scale = f16 (static)"},
    %u1: !u {qf.name = "u1"}, %s1: !w {qf.name = "s1"})
    -> (!c, !w, tensor<256x4xf32>, !c, !w) {
  %c0, %e0, %s0 = qf.gptq_block_update %w0, %u0 {grid = #qf.enc<int4, group = 32, scale = f16>, column_offset = 128}
    : (!w, !u) -> (!c, !w, tensor<256x4xf32>)
  %c1, %e1 = qf.gptq_block_update %w1, %u1 scales(%s1 : !w) {grid = #qf.enc<int4, group = 32, scale = f16>}
    : (!w, !u) -> (!c, !w)
  return %c0, %e0, %s0, %c1, %e1 : !c, !w, tensor<256x4xf32>, !c, !w
}
