// One qf.gptq_block_update per grid the GPU kernel supports, R = 256 rows,
// B = 128 columns, for qfuse-gptq-check (bench/make-artifacts.sh compiles it,
// scripts/gpu-round.sh runs the check). The tool reads each op's grid from
// the name of its weight buffer, "w:<encoding>", so the names below are the
// single statement of what is checked; dynamic ops (no scales operand)
// compute their group parameters inside the block, static ones read one
// scale (and zero) per column, which the tool fits per group with columns
// scattered over the groups as act-order's g_idx scatters them. NVFP4 ops
// also take one global scale per row ("g<i>", [R] f32).
!w = tensor<256x128xf32>
!u = tensor<128x128xf32>
!c = tensor<256x128xi8>
func.func @gptq_blocks(
    %w0: !w {qf.name = "w:int4, group = 32, scale = f16"},
    %u0: !u {qf.name = "u0"},
    %w1: !w {qf.name = "w:int4, group = 128, scale = bf16"},
    %u1: !u {qf.name = "u1"},
    %w2: !w {qf.name = "w:int8, group = 64, scale = f32"},
    %u2: !u {qf.name = "u2"},
    %w3: !w {qf.name = "w:uint4, group = 32, scale = f16, zero = int"},
    %u3: !u {qf.name = "u3"},
    %w4: !w {qf.name = "w:uint8, group = 128, scale = f16, zero = float"},
    %u4: !u {qf.name = "u4"},
    %w5: !w {qf.name = "w:fp4e2m1, group = 32, scale = f8E8M0FNU"},
    %u5: !u {qf.name = "u5"},
    %w6: !w {qf.name = "w:fp8e4m3, group = 128, scale = f32"},
    %u6: !u {qf.name = "u6"},
    %w7: !w {qf.name = "w:nf4, group = 64, scale = f32"},
    %u7: !u {qf.name = "u7"},
    %w8: !w {qf.name = "w:int4, group = 32, scale = f16 (static)"},
    %u8: !u {qf.name = "u8"}, %s8: !w {qf.name = "s8"},
    %w9: !w {qf.name = "w:uint4, group = 32, scale = f16, zero = int (static)"},
    %u9: !u {qf.name = "u9"}, %s9: !w {qf.name = "s9"}, %z9: !w {qf.name = "z9"},
    %w10: !w {qf.name = "w:int8, per_channel, scale = f32 (static)"},
    %u10: !u {qf.name = "u10"}, %s10: !w {qf.name = "s10"},
    %w11: !w {qf.name = "w:codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0]> : tensor<8xf16>, group = 128, scale = f16"},
    %u11: !u {qf.name = "u11"},
    %w12: !w {qf.name = "w:fp4e2m1, group = 16, scale = f8E4M3FN, global_scale"},
    %u12: !u {qf.name = "u12"}, %g12: tensor<256xf32> {qf.name = "g12"},
    %w13: !w {qf.name = "w:fp4e2m1, group = 16, scale = f8E4M3FN, global_scale (static)"},
    %u13: !u {qf.name = "u13"}, %s13: !w {qf.name = "s13"},
    %g13: tensor<256xf32> {qf.name = "g13"})
    -> (!c, !w, tensor<256x4xf32>,
        !c, !w, tensor<256x1xf32>,
        !c, !w, tensor<256x2xf32>,
        !c, !w, tensor<256x4xf32>, tensor<256x4xf32>,
        !c, !w, tensor<256x1xf32>, tensor<256x1xf32>,
        !c, !w, tensor<256x4xf32>,
        !c, !w, tensor<256x1xf32>,
        !c, !w, tensor<256x2xf32>,
        !c, !w, !c, !w, !c, !w,
        !c, !w, tensor<256x1xf32>,
        !c, !w, tensor<256x8xf32>,
        !c, !w) {
  %c0, %e0, %s0 = qf.gptq_block_update %w0, %u0 {grid = #qf.enc<int4, group = 32, scale = f16>, column_offset = 128}
    : (!w, !u) -> (!c, !w, tensor<256x4xf32>)
  %c1, %e1, %s1 = qf.gptq_block_update %w1, %u1 {grid = #qf.enc<int4, group = 128, scale = bf16>}
    : (!w, !u) -> (!c, !w, tensor<256x1xf32>)
  %c2, %e2, %s2 = qf.gptq_block_update %w2, %u2 {grid = #qf.enc<int8, group = 64, scale = f32>}
    : (!w, !u) -> (!c, !w, tensor<256x2xf32>)
  %c3, %e3, %s3, %z3 = qf.gptq_block_update %w3, %u3 {grid = #qf.enc<uint4, group = 32, scale = f16, zero = int>}
    : (!w, !u) -> (!c, !w, tensor<256x4xf32>, tensor<256x4xf32>)
  %c4, %e4, %s4, %z4 = qf.gptq_block_update %w4, %u4 {grid = #qf.enc<uint8, group = 128, scale = f16, zero = float>}
    : (!w, !u) -> (!c, !w, tensor<256x1xf32>, tensor<256x1xf32>)
  %c5, %e5, %s5 = qf.gptq_block_update %w5, %u5 {grid = #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>}
    : (!w, !u) -> (!c, !w, tensor<256x4xf32>)
  %c6, %e6, %s6 = qf.gptq_block_update %w6, %u6 {grid = #qf.enc<fp8e4m3, group = 128, scale = f32>}
    : (!w, !u) -> (!c, !w, tensor<256x1xf32>)
  %c7, %e7, %s7 = qf.gptq_block_update %w7, %u7 {grid = #qf.enc<nf4, group = 64, scale = f32>}
    : (!w, !u) -> (!c, !w, tensor<256x2xf32>)
  %c8, %e8 = qf.gptq_block_update %w8, %u8 scales(%s8 : !w) {grid = #qf.enc<int4, group = 32, scale = f16>}
    : (!w, !u) -> (!c, !w)
  %c9, %e9 = qf.gptq_block_update %w9, %u9 scales(%s9 : !w) zeros(%z9 : !w) {grid = #qf.enc<uint4, group = 32, scale = f16, zero = int>}
    : (!w, !u) -> (!c, !w)
  %c10, %e10 = qf.gptq_block_update %w10, %u10 scales(%s10 : !w) {grid = #qf.enc<int8, per_channel, scale = f32>}
    : (!w, !u) -> (!c, !w)
  %c11, %e11, %s11 = qf.gptq_block_update %w11, %u11 {grid = #qf.enc<codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0]> : tensor<8xf16>, group = 128, scale = f16>}
    : (!w, !u) -> (!c, !w, tensor<256x1xf32>)
  %c12, %e12, %s12 = qf.gptq_block_update %w12, %u12 global_scale(%g12 : tensor<256xf32>) {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
    : (!w, !u) -> (!c, !w, tensor<256x8xf32>)
  %c13, %e13 = qf.gptq_block_update %w13, %u13 scales(%s13 : !w) global_scale(%g13 : tensor<256xf32>) {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
    : (!w, !u) -> (!c, !w)
  return %c0, %e0, %s0, %c1, %e1, %s1, %c2, %e2, %s2, %c3, %e3, %s3, %z3,
         %c4, %e4, %s4, %z4, %c5, %e5, %s5, %c6, %e6, %s6, %c7, %e7, %s7,
         %c8, %e8, %c9, %e9, %c10, %e10, %c11, %e11, %s11,
         %c12, %e12, %s12, %c13, %e13
    : !c, !w, tensor<256x4xf32>, !c, !w, tensor<256x1xf32>, !c, !w, tensor<256x2xf32>,
      !c, !w, tensor<256x4xf32>, tensor<256x4xf32>, !c, !w, tensor<256x1xf32>, tensor<256x1xf32>,
      !c, !w, tensor<256x4xf32>, !c, !w, tensor<256x1xf32>, !c, !w, tensor<256x2xf32>,
      !c, !w, !c, !w, !c, !w, !c, !w, tensor<256x1xf32>,
      !c, !w, tensor<256x8xf32>, !c, !w
}
