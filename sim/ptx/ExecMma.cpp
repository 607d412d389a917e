//===- ExecMma.cpp - ldmatrix, mma.sync and mma.sp.sync -------------------===//
//
// The warp-wide matrix instructions, with the fragment layouts of the PTX
// ISA ("Matrix Fragments for mma.m16n8k*", "Sparse matrix fragments",
// "ldmatrix"): lane L = 4 g + t. A warp's fragments are gathered into dense
// A, B and C, multiplied with products summed in double (rounded once to the
// accumulator type), and scattered back. mma.sp rebuilds the logical A
// columns from the metadata of the lanes the sparsity selector names.
//
//===----------------------------------------------------------------------===//

#include "Exec.h"
#include "qfuse/sim/Half.h"
#include "PtxDecode.h"

#include <cstdio>

namespace qfuse::sim::ptx {
namespace {

const Instr &instrOf(const Exec &x, const Thread *t) {
  return x.fn->code[t->pc];
}

// ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 {d..}, [a]: op[0..n)
// destinations, op[4] the address base (imm), vec = N.
bool ldmatrix(Exec &x, Thread *const *lanes, uint32_t, const Instr &first) {
  unsigned n = first.vec;
  bool trans = first.flags;
  uint16_t m[4][8][8];
  for (unsigned k = 0; k < n; ++k)
    for (unsigned row = 0; row < 8; ++row) {
      const Thread *src = lanes[8 * k + row];
      const Instr &in = instrOf(x, src);
      uint64_t a = src->r[in.op[4]] + uint64_t(in.imm);
      if (a & 15) {
        x.error = "ldmatrix row address not 16-byte aligned (lane " +
                  std::to_string(8 * k + row) + ")";
        return false;
      }
      const uint8_t *p = x.memory(in.space, a, 16, false);
      if (!p)
        return false;
      std::memcpy(m[k][row], p, 16);
    }
  for (unsigned l = 0; l < 32; ++l) {
    const Instr &in = instrOf(x, lanes[l]);
    unsigned g = l / 4, t = l % 4;
    for (unsigned k = 0; k < n; ++k) {
      uint32_t lo = trans ? m[k][2 * t][g] : m[k][g][2 * t];
      uint32_t hi = trans ? m[k][2 * t + 1][g] : m[k][g][2 * t + 1];
      setAt<uint32_t>(lanes[l]->r, in.op[k], lo | hi << 16);
    }
  }
  return true;
}

/// An element of an A or B fragment register as a double.
double element(uint32_t reg, unsigned j, Ty t) {
  switch (t) {
  case Ty::F16: return halfToDouble(uint16_t(reg >> (16 * j)));
  case Ty::BF16: return bf16ToDouble(uint16_t(reg >> (16 * j)));
  case Ty::S8: return int8_t(reg >> (8 * j));
  case Ty::U8: return uint8_t(reg >> (8 * j));
  case Ty::E4M3x2: return e4m3ToDouble(uint8_t(reg >> (8 * j)));
  case Ty::E5M2x2: return e5m2ToDouble(uint8_t(reg >> (8 * j)));
  default: return 0;
  }
}

struct MmaShape {
  unsigned k;          ///< logical K
  unsigned na, nb, nc; ///< registers of A, B, C (= D)
  unsigned perReg;     ///< A / B elements per 32-bit register
};

/// Gathers C (f32 / s32: 4 registers; f16: 2 registers of f16x2).
void gatherC(const Exec &x, Thread *const *lanes, const MmaShape &s, Ty ct,
             double c[16][8]) {
  for (unsigned l = 0; l < 32; ++l) {
    const Instr &in = instrOf(x, lanes[l]);
    const uint64_t *r = lanes[l]->r;
    unsigned g = l / 4, t = l % 4, base = s.nc + s.na + s.nb;
    for (unsigned i = 0; i < s.nc; ++i) {
      uint32_t v = getAt<uint32_t>(r, in.op[base + i]);
      if (ct == Ty::F16) {
        c[g + 8 * i][2 * t] = halfToDouble(uint16_t(v));
        c[g + 8 * i][2 * t + 1] = halfToDouble(uint16_t(v >> 16));
      } else {
        c[g + 8 * (i / 2)][2 * t + i % 2] =
            ct == Ty::S32 ? double(int32_t(v)) : double(floatOf(v));
      }
    }
  }
}

void scatterD(Thread *const *lanes, const Exec &x, const MmaShape &s, Ty dt,
              double d[16][8]) {
  for (unsigned l = 0; l < 32; ++l) {
    const Instr &in = instrOf(x, lanes[l]);
    uint64_t *r = lanes[l]->r;
    unsigned g = l / 4, t = l % 4;
    for (unsigned i = 0; i < s.nc; ++i) {
      uint32_t v;
      if (dt == Ty::F16)
        v = halfFromDouble(d[g + 8 * i][2 * t]) |
            uint32_t(halfFromDouble(d[g + 8 * i][2 * t + 1])) << 16;
      else if (dt == Ty::S32)
        v = uint32_t(int32_t(int64_t(d[g + 8 * (i / 2)][2 * t + i % 2])));
      else
        v = bitsOf(float(d[g + 8 * (i / 2)][2 * t + i % 2]));
      setAt<uint32_t>(r, in.op[i], v);
    }
  }
}

/// B (K x 8, "col"): register i, element j of lane 4 g + t is
/// B[perReg t + j + K/2 i... ] for K = 8 / 16; the k32 int8 form likewise.
void gatherB(const Exec &x, Thread *const *lanes, const MmaShape &s, Ty bt,
             unsigned kLogical, double b[64][8]) {
  unsigned half = s.nb > 1 ? kLogical / s.nb : 0;
  for (unsigned l = 0; l < 32; ++l) {
    const Instr &in = instrOf(x, lanes[l]);
    unsigned g = l / 4, t = l % 4;
    for (unsigned i = 0; i < s.nb; ++i) {
      uint32_t v = getAt<uint32_t>(lanes[l]->r, in.op[s.nc + s.na + i]);
      for (unsigned j = 0; j < s.perReg; ++j)
        b[s.perReg * t + j + half * i][g] = element(v, j, bt);
    }
  }
}

// mma.sync: op = D (nc), A (na), B (nb), C (nc). width: A/B type, vec: the
// accumulator type, aux: K.
bool mma(Exec &x, Thread *const *lanes, uint32_t, const Instr &first) {
  Ty at = Ty(first.width), ct = Ty(first.vec);
  unsigned k = first.aux;
  unsigned bits = at == Ty::F16 || at == Ty::BF16 ? 16 : 8;
  MmaShape s{k, k * bits / 64, k * bits / 128, ct == Ty::F16 ? 2u : 4u,
             32 / bits};
  double a[16][64], b[64][8], c[16][8];
  for (unsigned l = 0; l < 32; ++l) {
    const Instr &in = instrOf(x, lanes[l]);
    unsigned g = l / 4, t = l % 4;
    for (unsigned i = 0; i < s.na; ++i) {
      uint32_t v = getAt<uint32_t>(lanes[l]->r, in.op[s.nc + i]);
      for (unsigned j = 0; j < s.perReg; ++j)
        a[g + 8 * (i % 2)][s.perReg * t + j + (k / 2) * (i / 2)] =
            element(v, j, at);
    }
  }
  gatherB(x, lanes, s, at, k, b);
  gatherC(x, lanes, s, ct, c);
  for (unsigned row = 0; row < 16; ++row)
    for (unsigned col = 0; col < 8; ++col) {
      double acc = c[row][col];
      for (unsigned kk = 0; kk < k; ++kk)
        acc += a[row][kk] * b[kk][col];
      c[row][col] = acc;
    }
  scatterD(lanes, x, s, ct, c);
  return true;
}

// mma.sp.sync m16n8k32 (f16 / bf16): A holds 16 x 16 kept values; after C
// comes the metadata register, and in.imm is the sparsity selector.
bool mmaSparse(Exec &x, Thread *const *lanes, uint32_t, const Instr &first) {
  Ty at = Ty(first.width), ct = Ty(first.vec);
  MmaShape s{32, 4, 4, ct == Ty::F16 ? 2u : 4u, 2};
  unsigned sel = unsigned(first.imm);
  double kept[16][16], b[64][8], c[16][8];
  uint32_t meta[32];
  for (unsigned l = 0; l < 32; ++l) {
    const Instr &in = instrOf(x, lanes[l]);
    unsigned g = l / 4, t = l % 4;
    meta[l] = getAt<uint32_t>(lanes[l]->r, in.op[2 * s.nc + s.na + s.nb]);
    for (unsigned r = 0; r < 4; ++r) {
      uint32_t v = getAt<uint32_t>(lanes[l]->r, in.op[s.nc + r]);
      for (unsigned i = 0; i < 2; ++i)
        kept[g + 8 * (r % 2)][2 * t + 8 * (r / 2) + i] = element(v, i, at);
    }
  }
  gatherB(x, lanes, s, at, 32, b);
  gatherC(x, lanes, s, ct, c);
  for (unsigned row = 0; row < 16; ++row) {
    unsigned g = row % 8, hi = row / 8;
    for (unsigned h = 0; h < 2; ++h) {
      uint32_t m = meta[4 * g + 2 * sel + h];
      for (unsigned q = 0; q < 4; ++q)
        for (unsigned i = 0; i < 2; ++i) {
          unsigned pos = (m >> (16 * hi + 4 * q + 2 * i)) & 3;
          unsigned col = 16 * h + 4 * q + pos;
          double v = kept[row][8 * h + 2 * q + i];
          for (unsigned n = 0; n < 8; ++n)
            c[row][n] += v * b[col][n];
        }
    }
  }
  scatterD(lanes, x, s, ct, c);
  return true;
}

Decoded decodeLdmatrix(Decoder &d, const Statement &s, const Parts &p,
                       Instr &in) {
  in.vec = p.has("x4") ? 4 : p.has("x2") ? 2 : 1;
  in.flags = p.has("trans");
  in.space = p.has("shared::cluster") ? Space::Cluster
             : (p.has("shared") || p.has("shared::cta")) ? Space::Shared
                                                         : Space::Generic;
  if (!p.has("m8n8") || p.lastType() != Ty::B16 || !d.count(s, 2))
    return Decoded::Error;
  const Operand &dst = s.ops[0];
  size_t n = dst.kind == Operand::Vector ? dst.elems.size() : 1;
  if (n != in.vec)
    return Decoded::Error;
  for (size_t i = 0; i < n; ++i)
    in.op[i] = d.dst(n > 1 ? dst.elems[i] : dst);
  if (!d.address(s.ops[1], in, 4))
    return Decoded::Error;
  in.coll = ldmatrix;
  return Decoded::Ok;
}

} // namespace

Decoded decodeMma(Decoder &d, const Statement &s, const Parts &p,
                  Instr &in) {
  std::string_view op = p[0];
  if (op == "ldmatrix") {
    in.ctl = Ctl::Warp;
    in.target = d.constant(0xffffffffu);
    return decodeLdmatrix(d, s, p, in);
  }
  if (op != "mma" || !p.has("sync"))
    return Decoded::NotMine;
  bool sparse = p.size() > 1 && p[1] == "sp";
  unsigned k = p.has("m16n8k8") ? 8 : p.has("m16n8k16") ? 16
               : p.has("m16n8k32") ? 32 : 0;
  // .dtype.atype.btype.ctype are the last four parts.
  Ty dt = p.typeAt(3), at = p.typeAt(2), ct = p.typeAt(0);
  if (at == Ty::None)
    return Decoded::Error;
  bool half = at == Ty::F16 || at == Ty::BF16;
  bool int8 = at == Ty::S8 || at == Ty::U8;
  if (!p.has("row") || !p.has("col") || dt != ct || !(half || int8) ||
      (sparse && !(half && k == 32)) ||
      (!sparse && !((half && (k == 8 || k == 16)) ||
                    (int8 && (k == 16 || k == 32)))))
    return Decoded::NotMine; // left to Ctl::Unsupported
  unsigned bits = half ? 16 : 8;
  unsigned nc = ct == Ty::F16 ? 2 : 4;
  unsigned na = sparse ? 4 : k * bits / 64, nb = sparse ? 4 : k * bits / 128;
  if (s.ops.size() != (sparse ? 6u : 4u))
    return Decoded::Error;
  unsigned counts[4] = {nc, na, nb, nc};
  unsigned slot = 0;
  for (unsigned g = 0; g < 4; ++g) {
    const Operand &v = s.ops[g];
    if ((v.kind == Operand::Vector ? v.elems.size() : 1) != counts[g])
      return Decoded::Error;
    for (unsigned i = 0; i < counts[g]; ++i) {
      const Operand &e = v.kind == Operand::Vector ? v.elems[i] : v;
      in.op[slot++] = g == 0 ? d.dst(e) : d.src(e, Ty::B32);
    }
  }
  if (sparse) {
    in.op[slot++] = d.src(s.ops[4], Ty::B32);
    Number sel;
    if (s.ops[5].kind != Operand::Number ||
        !parseNumber(s.ops[5].text, false, sel) || sel.bits > 1)
      return Decoded::Error;
    in.imm = int64_t(sel.bits);
  }
  in.width = uint8_t(at);
  in.vec = uint8_t(ct);
  in.aux = k;
  in.ctl = Ctl::Warp;
  in.coll = sparse ? mmaSparse : mma;
  in.target = d.constant(0xffffffffu);
  return d.error.empty() ? Decoded::Ok : Decoded::Error;
}

} // namespace qfuse::sim::ptx
