// RUN: qfuse-compile %s --emit=ptx --batch-sizes=1,16 -o - 2>/dev/null | FileCheck %s

// prmt takes table bytes only from registers, and ptxas kept a constant
// table in uniform registers, copying it into a register before every
// lookup. The tensor-core kernel hands prmt each constant as c ^ z, z bit 0
// of the activation pointer (zero, but not to ptxas), so the table stays
// in registers (KernelEmitter::pinnedConstant; docs/tensor-core.md,
// "Constants in registers"). The matvec keeps plain constants. 1759520280
// (0x68e02618) is a pool of NF4's low bytes; LLVM writes the xor with a
// bit-0 value as an or.

// CHECK-LABEL: .entry qf_matvec_0_m1(
// CHECK: mov.b32 {{.*}}, 1759520280;
// CHECK-LABEL: .entry qf_mma_1_m16(
// CHECK: ld.param.b64 [[X:%rd[0-9]+]], [qf_mma_1_m16_param_0];
// CHECK: cvt.u32.u64 [[LOW:%r[0-9]+]], [[X]];
// CHECK: and.b32 [[ZERO:%r[0-9]+]], [[LOW]], 1;
// CHECK-NOT: mov.b32 {{.*}}, 1759520280;
// CHECK: or.b32 {{%r[0-9]+}}, [[ZERO]], 1759520280;

func.func @proj(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "w" : !qf.weight<4096x4096, #qf.enc<nf4, group = 64, scale = f32>>
  %y = qf.matmul %x, %w : tensor<?x4096xf16>, !qf.weight<4096x4096, #qf.enc<nf4, group = 64, scale = f32>> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
