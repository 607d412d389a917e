// RUN: qfuse-compile %s --emit=ptx --batch-sizes=1,4,5,7 -o - 2>/dev/null | FileCheck %s

// The matvec asks ptxas for the resident blocks (.minnctapersm) its register
// estimate leaves with 50% headroom, and for more, up to 128 registers a
// thread, where that lets one wave of the GPU (132 SMs on sm_90) hold the
// whole grid (MatVecKernel.cpp minBlocksPerSM; docs/defaults.md, "Matvec
// occupancy").

// 2048 rows, 2 rows a warp, K split in 2: 512 blocks of 4 warps, one wave
// from 4 blocks an SM. M = 1 and 4 get them from the headroom; M = 5 and 7
// would get 3 and now take 4.
// CHECK-LABEL: .entry qf_matvec_0_m1(
// CHECK: .minnctapersm 6
// CHECK-LABEL: .entry qf_matvec_0_m4(
// CHECK: .minnctapersm 4
// CHECK-LABEL: .entry qf_matvec_0_m5(
// CHECK: .minnctapersm 4
// CHECK-LABEL: .entry qf_matvec_0_m7(
// CHECK: .minnctapersm 4

// 8192 rows, 4 a warp: 512 blocks; M = 4 takes 4 blocks where the headroom
// gave 3.
// CHECK-LABEL: .entry qf_matvec_1_m1(
// CHECK: .minnctapersm 5
// CHECK-LABEL: .entry qf_matvec_1_m4(
// CHECK: .minnctapersm 4

// 14336 rows, 4 a warp: 896 blocks need 7 an SM, more than 128 registers a
// thread allow; M = 4 keeps the headroom's 3.
// CHECK-LABEL: .entry qf_matvec_3_m1(
// CHECK: .minnctapersm 5
// CHECK-LABEL: .entry qf_matvec_3_m4(
// CHECK: .minnctapersm 3

func.func @occupancy(%x: tensor<?x3584xf16>, %a: tensor<?x4096xf16>,
                     %b: tensor<?x4096xf16>)
    -> (tensor<?x2048xf16>, tensor<?x8192xf16>, tensor<?x14336xf16>) {
  %small = qf.weight_ref "small" : !qf.weight<2048x3584, #qf.enc<nf4, group = 64, scale = f32>>
  %y0 = qf.matmul %x, %small : tensor<?x3584xf16>, !qf.weight<2048x3584, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x2048xf16>
  %mid = qf.weight_ref "mid" : !qf.weight<8192x4096, #qf.enc<nf4, group = 64, scale = f32>>
  %y1 = qf.matmul %a, %mid : tensor<?x4096xf16>, !qf.weight<8192x4096, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x8192xf16>
  %wide = qf.weight_ref "wide" : !qf.weight<14336x4096, #qf.enc<nf4, group = 64, scale = f32>>
  %y2 = qf.matmul %b, %wide : tensor<?x4096xf16>, !qf.weight<14336x4096, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x14336xf16>
  return %y0, %y1, %y2 : tensor<?x2048xf16>, tensor<?x8192xf16>, tensor<?x14336xf16>
}
