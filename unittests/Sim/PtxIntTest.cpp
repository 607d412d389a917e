//===- PtxIntTest.cpp - integer and bit instructions vs C++ ---------------===//

#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <random>

using namespace qfuse::sim;
using namespace qfuse::sim::test;

namespace {

uint32_t bfeRef(uint32_t a, uint32_t pos, uint32_t len, bool sign) {
  pos &= 0xff;
  len &= 0xff;
  uint32_t sbit = 0;
  if (sign && len)
    sbit = (a >> std::min(pos + len - 1, 31u)) & 1;
  uint32_t d = 0;
  for (uint32_t i = 0; i < 32; ++i) {
    uint32_t bit = (i < len && pos + i <= 31) ? (a >> (pos + i)) & 1 : sbit;
    d |= bit << i;
  }
  return d;
}

uint32_t prmtRef(uint32_t a, uint32_t b, uint32_t c) {
  uint8_t bytes[8];
  for (int i = 0; i < 4; ++i) {
    bytes[i] = uint8_t(a >> (8 * i));
    bytes[4 + i] = uint8_t(b >> (8 * i));
  }
  uint32_t d = 0;
  for (int i = 0; i < 4; ++i) {
    uint32_t sel = (c >> (4 * i)) & 15;
    uint8_t v = bytes[sel & 7];
    if (sel & 8)
      v = (v & 0x80) ? 0xff : 0;
    d |= uint32_t(v) << (8 * i);
  }
  return d;
}

std::vector<uint32_t> reference(uint32_t a, uint32_t b, uint32_t c) {
  int32_t sa = int32_t(a), sb = int32_t(b);
  std::vector<uint32_t> r(32);
  r[0] = a + b;
  r[1] = a - b;
  r[2] = a * b;
  r[3] = uint32_t((int64_t(sa) * sb) >> 32);
  r[4] = uint32_t((uint64_t(a) * b) >> 32);
  r[5] = a * b + c;
  r[6] = b == 0 ? ~0u : (sb == -1 ? 0u - a : uint32_t(sa / sb));
  r[7] = b == 0 ? a : a % b;
  r[8] = uint32_t(std::min(sa, sb));
  r[9] = std::max(a, b);
  r[10] = b >= 32 ? 0 : a << b;
  r[11] = uint32_t(b >= 32 ? sa >> 31 : sa >> b);
  r[12] = b >= 32 ? 0 : a >> b;
  r[13] = prmtRef(a, b, c);
  r[14] = (a & b) | c;
  r[15] = a ^ b ^ c;
  uint32_t l = 0;
  for (int i = 0; i < 8; ++i)
    if (45 >> i & 1)
      l |= (i & 4 ? a : ~a) & (i & 2 ? b : ~b) & (i & 1 ? c : ~c);
  r[16] = l;
  r[17] = bfeRef(a, b, c, false);
  r[18] = bfeRef(a, b, c, true);
  uint32_t pos = c & 0xff, len = (c >> 8) & 0xff, d = b;
  for (uint32_t i = 0; i < len && pos + i <= 31; ++i)
    d = (d & ~(1u << (pos + i))) | (((a >> i) & 1) << (pos + i));
  r[19] = d;
  uint64_t ba = (uint64_t(b) << 32) | a;
  r[20] = uint32_t((ba << (c & 31)) >> 32);
  r[21] = uint32_t(ba >> std::min(c, 32u));
  r[22] = uint32_t(__builtin_popcount(a));
  r[23] = a ? uint32_t(__builtin_clz(a)) : 32;
  uint32_t rev = 0;
  for (int i = 0; i < 32; ++i)
    rev |= ((a >> i) & 1) << (31 - i);
  r[24] = rev;
  int64_t wide = int64_t(sa) * sb;
  r[26] = uint32_t(uint64_t(wide));
  r[27] = uint32_t(uint64_t(wide) >> 32);
  r[28] = uint32_t(int32_t(int16_t(a)));
  r[29] = uint32_t(uint16_t(std::clamp(sa, -32768, 32767)));
  r[30] = sa < sb;
  bool p2 = a > c;
  r[31] = (b != c && !p2) ? uint32_t(-9) : 7;
  return r;
}

} // namespace

TEST(PtxInt, MatchesReference) {
  std::string error;
  auto module = loadInput("int-ops.ptx", error);
  ASSERT_TRUE(module) << error;
  const int n = 64;
  std::mt19937 rng(7);
  std::vector<uint32_t> in(3 * n);
  for (int i = 0; i < n; ++i) {
    in[3 * i] = rng();
    in[3 * i + 1] = i % 4 == 0 ? rng() % 40 : rng();
    in[3 * i + 2] = i % 3 == 0 ? rng() % 0x2040 : rng();
  }
  in[3] = 0x80000000u, in[4] = 0xffffffffu; // INT_MIN / -1
  in[6] = 5, in[7] = 0;                     // division by zero
  Buffer input(in.size() * 4, "in"), output(n * 128, "out");
  input.fill(in);
  ASSERT_EQ(launch(*module, "int_ops", {1}, {n},
                   {input.address(), output.address()}),
            "");
  auto out = output.read<uint32_t>(32 * n);
  static const char *names[32] = {
      "add", "sub", "mul.lo", "mul.hi.s32", "mul.hi.u32", "mad.lo", "div.s32",
      "rem.u32", "min.s32", "max.u32", "shl", "shr.s32", "shr.u32", "prmt",
      "lop3 0xea", "lop3 0x96", "lop3 45", "bfe.u32", "bfe.s32", "bfi",
      "shf.l.wrap", "shf.r.clamp", "popc", "clz", "brev", "-",
      "mul.wide lo", "mul.wide hi", "cvt.s32.s16", "cvt.sat.s16.s32", "setp",
      "setp.and"};
  for (int i = 0; i < n; ++i) {
    auto ref = reference(in[3 * i], in[3 * i + 1], in[3 * i + 2]);
    for (int j = 0; j < 32; ++j)
      if (j != 25)
        EXPECT_EQ(out[32 * i + j], ref[j])
            << names[j] << " thread " << i << " a=" << in[3 * i]
            << " b=" << in[3 * i + 1] << " c=" << in[3 * i + 2];
  }
}
