// Every diagnostic of the #qf.enc and #qf.layout parsers and verifiers and of
// the !qf.weight type, one case each.

// RUN: qfuse-opt %s -split-input-file -verify-diagnostics

// Element formats are spelled as in the ElementFormat enum.
func.func @unknown_element_format_int3_expected_one() {
  // expected-error@+1 {{unknown element format 'int3'; expected one of int4, uint4, int8, uint8, fp8e4m3, fp4e2m1, nf4, codebook, f16, bf16}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int3, group = 32, scale = f16>>
  return
}

// -----

func.func @unknown_encoding_entry_groups_expected_bits() {
  // expected-error@+1 {{unknown encoding entry 'groups'; expected bits, table, group, per_channel, scale, global_scale, zero, act_order or sparse}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, groups = 32, scale = f16>>
  return
}

// -----

// 'none' is spelled by leaving 'zero' out.
func.func @unknown_zero_point_kind_none_expected() {
  // expected-error@+1 {{unknown zero point kind 'none'; expected 'int' or 'float'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<uint4, group = 32, scale = f16, zero = none>>
  return
}

// -----

func.func @unknown_zero_point_kind_half_expected() {
  // expected-error@+1 {{unknown zero point kind 'half'; expected 'int' or 'float'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<uint4, group = 32, scale = f16, zero = half>>
  return
}

// -----

func.func @unsupported_sparsity_1_4_only_2() {
  // expected-error@+1 {{unsupported sparsity 1:4; only 2:4 structured sparsity is supported}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<f16, sparse = 1:4>>
  return
}

// -----

// A splat table of 2^31 values is refused before its values are read.
func.func @codebook_table_too_large() {
  // expected-error@+1 {{a codebook table holds at most 256 values (2^bits, bits <= 8), got 2147483648}}
  %0 = qf.weight_ref "w" : !qf.weight<64x256, #qf.enc<codebook, bits = 7, table = dense<0.125> : tensor<2147483648xf16>, group = 128, scale = f16>>
  return
}

// -----

func.func @codebook_table_must_be_a_dense() {
  // expected-error@+1 {{codebook table must be a dense floating-point tensor (dense<[...]> : tensor<Nxf16>) or a name ("name" : f16)}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = 2, table = dense<[0, 1, 2, 3]> : tensor<4xi8>, per_channel, scale = f16>>
  return
}

// -----

func.func @bits_out_of_range_65() {
  // expected-error@+1 {{'bits' out of range: 65}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = 65, table = "lut" : f16, per_channel, scale = f16>>
  return
}

// -----

func.func @bits_out_of_range_1() {
  // expected-error@+1 {{'bits' out of range: -1}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = -1, table = "lut" : f16, per_channel, scale = f16>>
  return
}

// -----

// An entry given twice is an error, not "the last one wins".
func.func @duplicate_entry_scale() {
  // expected-error@+1 {{duplicate entry 'scale'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, group = 32, scale = f16, scale = bf16>>
  return
}

// -----

func.func @duplicate_entry_table() {
  // expected-error@+1 {{duplicate entry 'table'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = 2, table = "lut" : f16, table = dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf16>, per_channel, scale = f16>>
  return
}

// -----

func.func @group_and_per_channel_are_exclusive() {
  // expected-error@+1 {{'group' and 'per_channel' are exclusive; give one granularity}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, group = 32, per_channel, scale = f16>>
  return
}

// -----

func.func @group_and_per_channel_are_exclusive() {
  // expected-error@+1 {{'group' and 'per_channel' are exclusive; give one granularity}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, per_channel, group = 32, scale = f16>>
  return
}

// -----

// group = 0 and group = -1 are not other spellings of per_channel / unset.
func.func @group_size_must_be_at_least() {
  // expected-error@+1 {{group size must be at least 2 (or per_channel), got 0}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, group = 0, scale = f16>>
  return
}

// -----

func.func @group_size_must_be_at_least() {
  // expected-error@+1 {{group size must be at least 2 (or per_channel), got -1}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, group = -1, scale = f16>>
  return
}

// -----

func.func @group_size_must_be_at_least() {
  // expected-error@+1 {{group size must be at least 2 (or per_channel), got -64}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, group = -64, scale = f16>>
  return
}

// -----

// Codebooks.
func.func @codebook_index_width_must_be_2() {
  // expected-error@+1 {{codebook index width must be 2 to 8 bits, got 1}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = 1, table = dense<[0.0, 1.0]> : tensor<2xf16>, per_channel, scale = f16>>
  return
}

// -----

func.func @codebook_index_width_must_be_2() {
  // expected-error@+1 {{codebook index width must be 2 to 8 bits, got 9}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = 9, table = "lut" : f16, per_channel, scale = f16>>
  return
}

// -----

func.func @codebook_index_width_must_be_2() {
  // expected-error@+1 {{codebook index width must be 2 to 8 bits, got 0}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, table = "lut" : f16, per_channel, scale = f16>>
  return
}

// -----

func.func @codebook_needs_a_table_inline_table() {
  // expected-error@+1 {{codebook needs a table: inline 'table = dense<[...]> : tensor<Nxf16>' or named 'table = "name" : f16'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = 4, per_channel, scale = f16>>
  return
}

// -----

func.func @codebook_of_3_bit_indices_needs() {
  // expected-error@+1 {{codebook of 3-bit indices needs a table of 8 values, got 'tensor<4xf16>'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = 3, table = dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf16>, per_channel, scale = f16>>
  return
}

// -----

func.func @codebook_of_2_bit_indices_needs() {
  // expected-error@+1 {{codebook of 2-bit indices needs a table of 4 values, got 'tensor<2x2xf32>'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = 2, table = dense<[[0.0, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>, per_channel, scale = f16>>
  return
}

// -----

func.func @codebook_table_values_must_be_f16() {
  // expected-error@+1 {{codebook table values must be f16 or f32, got 'bf16'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = 2, table = dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xbf16>, per_channel, scale = f16>>
  return
}

// -----

func.func @codebook_table_values_must_be_f16() {
  // expected-error@+1 {{codebook table values must be f16 or f32, got 'f64'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = 4, table = "lut" : f64, per_channel, scale = f16>>
  return
}

// -----

func.func @bits_is_only_meaningful_for_codebook() {
  // expected-error@+1 {{'bits' is only meaningful for codebook; 'int4' has a fixed code width}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, bits = 4, group = 32, scale = f16>>
  return
}

// -----

func.func @only_codebook_takes_a_table_nf4() {
  // expected-error@+1 {{only 'codebook' takes a table (nf4's table is built in)}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<nf4, table = "lut" : f16, group = 32, scale = f16>>
  return
}

// -----

func.func @only_codebook_takes_a_table() {
  // expected-error@+1 {{only 'codebook' takes a table}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, table = dense<[0.0, 1.0]> : tensor<2xf16>, per_channel, scale = f16>>
  return
}

// -----

// Unquantized formats.
func.func @unquantized_f16_takes_no_scales_groups() {
  // expected-error@+1 {{unquantized 'f16' takes no scales, groups, zero points or act_order}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<f16, scale = f16>>
  return
}

// -----

func.func @unquantized_bf16_takes_no_scales_groups() {
  // expected-error@+1 {{unquantized 'bf16' takes no scales, groups, zero points or act_order}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<bf16, group = 32>>
  return
}

// -----

func.func @unquantized_f16_takes_no_scales_groups() {
  // expected-error@+1 {{unquantized 'f16' takes no scales, groups, zero points or act_order}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<f16, per_channel, sparse = 2:4>>
  return
}

// -----

func.func @unquantized_bf16_takes_no_scales_groups() {
  // expected-error@+1 {{unquantized 'bf16' takes no scales, groups, zero points or act_order}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<bf16, zero = int>>
  return
}

// -----

func.func @unquantized_f16_takes_no_scales_groups() {
  // expected-error@+1 {{unquantized 'f16' takes no scales, groups, zero points or act_order}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<f16, global_scale>>
  return
}

// -----

func.func @unquantized_f16_takes_no_scales_groups() {
  // expected-error@+1 {{unquantized 'f16' takes no scales, groups, zero points or act_order}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<f16, act_order>>
  return
}

// -----

// Scales and groups.
func.func @int4_needs_scales_add_scale_f16() {
  // expected-error@+1 {{'int4' needs scales: add 'scale = f16' (or bf16, f32, f8E4M3FN, f8E8M0FNU)}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, group = 32>>
  return
}

// -----

func.func @scale_type_must_be_f16_bf16() {
  // expected-error@+1 {{scale type must be f16, bf16, f32, f8E4M3FN or f8E8M0FNU, got 'i8'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = i8>>
  return
}

// -----

func.func @scale_type_must_be_f16_bf16() {
  // expected-error@+1 {{scale type must be f16, bf16, f32, f8E4M3FN or f8E8M0FNU, got 'f64'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f64>>
  return
}

// -----

func.func @nf4_needs_a_scale_granularity_group() {
  // expected-error@+1 {{'nf4' needs a scale granularity: 'group = G' or 'per_channel'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<nf4, scale = f32>>
  return
}

// -----

func.func @group_size_must_be_at_least() {
  // expected-error@+1 {{group size must be at least 2 (or per_channel), got 1}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, group = 1, scale = f16>>
  return
}

// -----

// MX: E8M0 scales.
func.func @e8m0_scales_mx_formats_apply_to() {
  // expected-error@+1 {{E8M0 scales (MX formats) apply to fp4e2m1, fp8e4m3 or int8, not 'nf4'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<nf4, group = 32, scale = f8E8M0FNU>>
  return
}

// -----

func.func @e8m0_scales_mx_formats_need_group() {
  // expected-error@+1 {{E8M0 scales (MX formats) need group = 32, got 16}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<fp4e2m1, group = 16, scale = f8E8M0FNU>>
  return
}

// -----

func.func @e8m0_scales_mx_formats_need_group() {
  // expected-error@+1 {{E8M0 scales (MX formats) need group = 32, got per_channel}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f8E8M0FNU>>
  return
}

// -----

// NVFP4: E4M3 scales.
func.func @e4m3_scales_nvfp4_apply_to_fp4e2m1() {
  // expected-error@+1 {{E4M3 scales (NVFP4) apply to fp4e2m1, not 'int4'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, group = 16, scale = f8E4M3FN, global_scale>>
  return
}

// -----

func.func @e4m3_scales_nvfp4_need_group_16() {
  // expected-error@+1 {{E4M3 scales (NVFP4) need group = 16, got 32}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<fp4e2m1, group = 32, scale = f8E4M3FN, global_scale>>
  return
}

// -----

func.func @e4m3_scales_nvfp4_need_group_16() {
  // expected-error@+1 {{E4M3 scales (NVFP4) need group = 16, got per_channel}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<fp4e2m1, per_channel, scale = f8E4M3FN, global_scale>>
  return
}

// -----

func.func @e4m3_scales_nvfp4_need_global_scale() {
  // expected-error@+1 {{E4M3 scales (NVFP4) need 'global_scale': the per-block scales are relative to one f32 scale}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN>>
  return
}

// -----

func.func @global_scale_belongs_to_nvfp4_e4m3() {
  // expected-error@+1 {{'global_scale' belongs to NVFP4 (E4M3 scales), not to scale type 'f16'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<fp4e2m1, group = 16, scale = f16, global_scale>>
  return
}

// -----

func.func @global_scale_belongs_to_nvfp4_e4m3() {
  // expected-error@+1 {{'global_scale' belongs to NVFP4 (E4M3 scales), not to scale type 'f8E8M0FNU'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU, global_scale>>
  return
}

// -----

// Zero points.
func.func @uint4_needs_a_zero_point_zero() {
  // expected-error@+1 {{'uint4' needs a zero point: 'zero = int' or 'zero = float' (use 'int4' for symmetric weights)}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<uint4, group = 32, scale = f16>>
  return
}

// -----

func.func @uint8_needs_a_zero_point_zero() {
  // expected-error@+1 {{'uint8' needs a zero point: 'zero = int' or 'zero = float' (use 'int8' for symmetric weights)}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<uint8, per_channel, scale = f16>>
  return
}

// -----

func.func @zero_point_on_symmetric_format_int4() {
  // expected-error@+1 {{zero point on symmetric format 'int4'; asymmetric weights use 'uint4' or 'uint8'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, group = 32, scale = f16, zero = int>>
  return
}

// -----

func.func @zero_point_on_symmetric_format_fp8e4m3() {
  // expected-error@+1 {{zero point on symmetric format 'fp8e4m3'; asymmetric weights use 'uint4' or 'uint8'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<fp8e4m3, per_channel, scale = f32, zero = float>>
  return
}

// -----

// act_order.
func.func @act_order_needs_group_scales_with() {
  // expected-error@+1 {{'act_order' needs group scales: with per_channel scales the group index is trivial}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int4, per_channel, scale = f16, act_order>>
  return
}

// -----

// 2:4 sparsity.
func.func @sparse24_not_supported() {
  // expected-error@+1 {{2:4 sparsity is not supported with 'nf4'; it composes with f16, bf16, int4, uint4, int8, uint8 and fp8e4m3}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<nf4, group = 32, scale = f16, sparse = 2:4>>
  return
}

// -----

func.func @sparse24_not_supported() {
  // expected-error@+1 {{2:4 sparsity is not supported with 'codebook'; it composes with f16, bf16, int4, uint4, int8, uint8 and fp8e4m3}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<codebook, bits = 4, table = "lut" : f16, group = 32, scale = f16, sparse = 2:4>>
  return
}

// -----

func.func @sparse24_not_supported() {
  // expected-error@+1 {{2:4 sparsity is not supported with 'fp4e2m1'; it composes with f16, bf16, int4, uint4, int8, uint8 and fp8e4m3}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU, sparse = 2:4>>
  return
}

// -----

// Layouts.
func.func @unknown_layout_col_major_expected_row() {
  // expected-error@+1 {{unknown layout 'col_major'; expected 'row_major' or 'tiled'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<col_major>>
  return
}

// -----

func.func @unknown_layout_entry_tile_m_expected() {
  // expected-error@+1 {{unknown layout entry 'tile_m'; expected tile_n, tile_k or interleave}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_m = 16, tile_k = 64>>
  return
}

// -----

func.func @duplicate_entry_tile_k() {
  // expected-error@+1 {{duplicate entry 'tile_k'}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 16, tile_k = 64, tile_k = 32>>
  return
}

// -----

func.func @row_major_layout_takes_no_tile() {
  // expected-error@+1 {{row_major layout takes no tile_n, tile_k or interleave}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<row_major, tile_n = 16>>
  return
}

// -----

func.func @row_major_layout_takes_no_tile() {
  // expected-error@+1 {{row_major layout takes no tile_n, tile_k or interleave}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<row_major, interleave = 2>>
  return
}

// -----

func.func @tiled_layout_needs_positive_tile_n() {
  // expected-error@+1 {{tiled layout needs positive tile_n and tile_k, got 16 and 0}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 16>>
  return
}

// -----

func.func @tiled_layout_needs_positive_tile_n() {
  // expected-error@+1 {{tiled layout needs positive tile_n and tile_k, got -16 and 64}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = -16, tile_k = 64>>
  return
}

// -----

func.func @interleave_must_be_positive_and_divide() {
  // expected-error@+1 {{interleave must be positive and divide tile_n = 16, got 3}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 3>>
  return
}

// -----

func.func @interleave_must_be_positive_and_divide() {
  // expected-error@+1 {{interleave must be positive and divide tile_n = 16, got 0}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 0>>
  return
}

// -----

// The weight type.
func.func @weight_shape_must_be_nxk_out() {
  // expected-error@+1 {{weight shape must be NxK (out x in), got 1 dimension(s)}}
  %0 = qf.weight_ref "w" : !qf.weight<4096, #qf.enc<int8, per_channel, scale = f16>>
  return
}

// -----

func.func @weight_shape_must_be_nxk_out() {
  // expected-error@+1 {{weight shape must be NxK (out x in), got 3 dimension(s)}}
  %0 = qf.weight_ref "w" : !qf.weight<2x64x64, #qf.enc<int8, per_channel, scale = f16>>
  return
}

// -----

func.func @weight_shape_must_be_positive_got() {
  // expected-error@+1 {{weight shape must be positive, got 0x64}}
  %0 = qf.weight_ref "w" : !qf.weight<0x64, #qf.enc<int8, per_channel, scale = f16>>
  return
}

// -----

func.func @group_size_128_does_not_divide() {
  // expected-error@+1 {{group size 128 does not divide K = 4000}}
  %0 = qf.weight_ref "w" : !qf.weight<64x4000, #qf.enc<int4, group = 128, scale = f16>>
  return
}

// -----

func.func @group_size_7_does_not_divide() {
  // expected-error@+1 {{group size 7 does not divide K = 64}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, group = 7, scale = f16>>
  return
}

// -----

func.func @sparse24_needs_k_multiple_of_4() {
  // expected-error@+1 {{2:4 sparsity needs K to be a multiple of 4, got K = 6}}
  %0 = qf.weight_ref "w" : !qf.weight<64x6, #qf.enc<f16, sparse = 2:4>>
  return
}

// -----

func.func @sparse24_needs_k_multiple_of_4() {
  // expected-error@+1 {{2:4 sparsity needs K to be a multiple of 4, got K = 66}}
  %0 = qf.weight_ref "w" : !qf.weight<64x66, #qf.enc<int8, per_channel, scale = f16, sparse = 2:4>>
  return
}

// -----

// An odd K of 4-bit codes: group 7 divides K = 35, but a row ends mid-byte.
func.func @a_row_of_35_stored_4() {
  // expected-error@+1 {{a row of 35 stored 4-bit codes does not end on a byte boundary (K = 35)}}
  %0 = qf.weight_ref "w" : !qf.weight<64x35, #qf.enc<int4, group = 7, scale = f16>>
  return
}

// -----

func.func @a_row_of_7_stored_4() {
  // expected-error@+1 {{a row of 7 stored 4-bit codes does not end on a byte boundary (K = 7)}}
  %0 = qf.weight_ref "w" : !qf.weight<64x7, #qf.enc<nf4, per_channel, scale = f16>>
  return
}

// -----

func.func @a_row_of_4_stored_3() {
  // expected-error@+1 {{a row of 4 stored 3-bit codes does not end on a byte boundary (K = 4)}}
  %0 = qf.weight_ref "w" : !qf.weight<64x4, #qf.enc<codebook, bits = 3, table = "lut" : f16, per_channel, scale = f16>>
  return
}

// -----

func.func @tiled_layout_needs_tile_k_to() {
  // expected-error@+1 {{tiled layout needs tile_k to divide K; got tile_k = 48, K = 64}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>, #qf.layout<tiled, tile_n = 16, tile_k = 48>>
  return
}

// -----

func.func @act_order_sparse_is_row_major_only() {
  // expected-error@+1 {{act_order with 2:4 sparsity is defined in row_major only (its columns stay in checkpoint order: sorting them by group would break the quads), not <tiled, tile_n = 1, tile_k = 32>}}
  %0 = qf.weight_ref "w" : !qf.weight<256x4096, #qf.enc<int4, group = 128, scale = f16, act_order, sparse = 2:4>, #qf.layout<tiled, tile_n = 1, tile_k = 32>>
  return
}

// -----

// The encoding and layout slots take only their own attributes.
func.func @invalid_kind_of_attribute_specified() {
  // expected-error@+1 {{invalid kind of attribute specified}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.layout<row_major>>
  return
}

// -----

func.func @invalid_kind_of_attribute_specified() {
  // expected-error@+1 {{invalid kind of attribute specified}}
  %0 = qf.weight_ref "w" : !qf.weight<64x64, #qf.enc<f16>, #qf.enc<f16>>
  return
}

// -----

func.func @expected_static_shape() {
  // expected-error@+1 {{expected static shape}}
  %0 = qf.weight_ref "w" : !qf.weight<?x64, #qf.enc<f16>>
  return
}

// -----

// #qf.tiling.
// expected-error@+1 {{unknown kernel kind 'wmma'; expected 'matvec', 'mma' or 'wgmma'}}
func.func @unknown_kernel_kind_wmma_expected_matvec() attributes {qf.t = #qf.tiling<wmma, block_m = 16>} {
  return
}

// -----

// expected-error@+1 {{unknown tiling entry 'warps'; expected block_m, block_n, block_k, threads_per_row, vec_bytes, k_unroll, split_k, stages or cluster_k}}
func.func @unknown_tiling_entry_warps_expected_block() attributes {qf.t = #qf.tiling<mma, warps = 4>} {
  return
}

// -----

// expected-error@+1 {{duplicate entry 'block_n'}}
func.func @duplicate_entry_block_n() attributes {qf.t = #qf.tiling<matvec, block_n = 4, block_n = 8>} {
  return
}

// -----

// expected-error@+1 {{tiling sizes must be positive (block_k may be 0 for 'whole K')}}
func.func @tiling_sizes_must_be_positive_block() attributes {qf.t = #qf.tiling<mma, block_m = 0>} {
  return
}

// -----

// expected-error@+1 {{tiling sizes must be positive (block_k may be 0 for 'whole K')}}
func.func @tiling_sizes_must_be_positive_block() attributes {qf.t = #qf.tiling<mma, block_k = -64>} {
  return
}

// -----

// expected-error@+1 {{tiling sizes must be positive (block_k may be 0 for 'whole K')}}
func.func @tiling_sizes_must_be_positive_block() attributes {qf.t = #qf.tiling<mma, stages = 0>} {
  return
}

// -----

// expected-error@+1 {{tiling sizes must be positive (block_k may be 0 for 'whole K')}}
func.func @tiling_sizes_must_be_positive_block() attributes {qf.t = #qf.tiling<matvec, split_k = 0>} {
  return
}

// -----

// expected-error@+1 {{threads_per_row must be a power of two from 1 to 32 (a warp shares a row), got 3}}
func.func @threads_per_row_must_be_a() attributes {qf.t = #qf.tiling<matvec, threads_per_row = 3>} {
  return
}

// -----

// expected-error@+1 {{threads_per_row must be a power of two from 1 to 32 (a warp shares a row), got 64}}
func.func @threads_per_row_must_be_a() attributes {qf.t = #qf.tiling<matvec, threads_per_row = 64>} {
  return
}

// -----

// expected-error@+1 {{vec_bytes must be 4, 8 or 16, got 2}}
func.func @vec_bytes_must_be_4_8() attributes {qf.t = #qf.tiling<matvec, vec_bytes = 2>} {
  return
}

// -----

// expected-error@+1 {{cluster_k applies to mma kernels; matvec kernels split K inside a block (split_k)}}
func.func @cluster_k_on_matvec() attributes {qf.t = #qf.tiling<matvec, cluster_k = 2>} {
  return
}

// -----

// expected-error@+1 {{cluster_k must be at most 8 (the portable cluster size), got 16}}
func.func @cluster_k_too_large() attributes {qf.t = #qf.tiling<mma, block_m = 16, cluster_k = 16>} {
  return
}

// -----

// expected-error@+1 {{matvec kernels take batch block_m <= 8, got 16; use 'mma' for larger batches}}
func.func @matvec_kernels_take_batch_block_m() attributes {qf.t = #qf.tiling<matvec, block_m = 16>} {
  return
}

// -----

// The epilogue activation enum.
// expected-error@+2 {{expected ::mlir::qf::EpilogueActivation to be one of: none, silu_mul}}
// expected-error@+1 {{failed to parse QF_EpilogueActivationAttr parameter 'value'}}
func.func @expected_mlir_qf_epilogueactivation_to_be() attributes {qf.a = #qf<activation gelu>} {
  return
}
