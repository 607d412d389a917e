//===- PtxMmaTest.cpp - ldmatrix, mma.sync and mma.sp vs a C++ matmul -----===//
//
// The fragment orders are the PTX ISA's; the sparse test arranges A, its
// metadata and B on the host by the ISA's tables (as format/'s
// SparseMmaLayout does), with garbage in the lanes the selector leaves out.
//
//===----------------------------------------------------------------------===//

#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace qfuse::sim;
using namespace qfuse::sim::test;

namespace {

uint16_t toHalf(double v) { return half(v); }
uint16_t toBf16(float f) { // round to nearest even (finite inputs)
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
double fromBf16(uint16_t u) {
  uint32_t v = uint32_t(u) << 16;
  float f;
  std::memcpy(&f, &v, 4);
  return f;
}

std::unique_ptr<PtxModule> mmaModule() {
  std::string error;
  auto module = loadInput("mma.ptx", error);
  EXPECT_TRUE(module) << error;
  return module;
}

/// Random A [16][16], B [16][8] in f16 or bf16 bits, and their values.
struct Dense {
  std::vector<uint16_t> a, b, bt; ///< bt: B transposed, [8][16]
  std::vector<double> av, bv;
  Dense(bool bf, unsigned seed) : a(256), b(128), bt(128), av(256), bv(128) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-2, 2);
    for (int i = 0; i < 256; ++i) {
      a[i] = bf ? toBf16(dist(rng)) : toHalf(dist(rng));
      av[i] = bf ? fromBf16(a[i]) : fromHalf(a[i]);
    }
    for (int i = 0; i < 128; ++i) {
      b[i] = bf ? toBf16(dist(rng)) : toHalf(dist(rng));
      bv[i] = bf ? fromBf16(b[i]) : fromHalf(b[i]);
    }
    for (int k = 0; k < 16; ++k)
      for (int n = 0; n < 8; ++n)
        bt[n * 16 + k] = b[k * 8 + n];
  }
  double product(int m, int n) const {
    double s = 0;
    for (int k = 0; k < 16; ++k)
      s += av[m * 16 + k] * bv[k * 8 + n];
    return s;
  }
};

} // namespace

TEST(PtxMma, F16WithLdmatrixTrans) {
  auto module = mmaModule();
  ASSERT_TRUE(module);
  Dense d(false, 1);
  Buffer a(512, "A"), b(256, "B"), out(512, "D");
  a.fill(d.a);
  b.fill(d.b);
  ASSERT_EQ(launch(*module, "mma_f16", {1}, {32},
                   {a.address(), b.address(), out.address()}),
            "");
  auto got = out.read<float>(128);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n)
      EXPECT_NEAR(got[m * 8 + n], d.product(m, n), 1e-5) << m << "," << n;
}

TEST(PtxMma, Bf16WithLdmatrix) {
  auto module = mmaModule();
  ASSERT_TRUE(module);
  Dense d(true, 2);
  Buffer a(512, "A"), b(256, "B"), out(512, "D");
  a.fill(d.a);
  b.fill(d.bt);
  ASSERT_EQ(launch(*module, "mma_bf16", {1}, {32},
                   {a.address(), b.address(), out.address()}),
            "");
  auto got = out.read<float>(128);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n)
      EXPECT_NEAR(got[m * 8 + n], d.product(m, n), 1e-5) << m << "," << n;
}

TEST(PtxMma, F16Accumulators) {
  auto module = mmaModule();
  ASSERT_TRUE(module);
  Dense d(false, 3);
  std::vector<uint16_t> c(128);
  for (int i = 0; i < 128; ++i)
    c[i] = toHalf(0.25 * (i % 13) - 1.5);
  Buffer a(512, "A"), b(256, "B"), out(256, "D"), cb(256, "C");
  a.fill(d.a);
  b.fill(d.b);
  cb.fill(c);
  ASSERT_EQ(launch(*module, "mma_f16_acc", {1}, {32},
                   {a.address(), b.address(), out.address(), cb.address()}),
            "");
  auto got = out.read<uint16_t>(128);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      double want = d.product(m, n) + fromHalf(c[m * 8 + n]);
      EXPECT_NEAR(fromHalf(got[m * 8 + n]), want, std::fabs(want) * 1e-3 + 1e-3)
          << m << "," << n;
    }
}

class PtxMmaSparse : public testing::TestWithParam<int> {};

TEST_P(PtxMmaSparse, MatchesDenseExpansion) {
  int sel = GetParam();
  auto module = mmaModule();
  ASSERT_TRUE(module);
  std::mt19937 rng(11 + sel);
  std::uniform_real_distribution<float> dist(-2, 2);
  // Logical A [16][32] with two kept values per quad of four columns.
  uint16_t kept[16][16];
  int pos[16][8][2];
  std::vector<double> dense(16 * 32, 0.0);
  for (int r = 0; r < 16; ++r)
    for (int q = 0; q < 8; ++q) {
      int p0 = int(rng() % 3), p1 = p0 + 1 + int(rng() % (3 - p0));
      pos[r][q][0] = p0;
      pos[r][q][1] = p1;
      for (int i = 0; i < 2; ++i) {
        kept[r][2 * q + i] = toHalf(dist(rng));
        dense[r * 32 + 4 * q + pos[r][q][i]] = fromHalf(kept[r][2 * q + i]);
      }
    }
  std::vector<uint16_t> b(32 * 8);
  for (auto &v : b)
    v = toHalf(dist(rng));
  std::vector<uint32_t> afrag(128), meta(32), bfrag(128);
  for (int l = 0; l < 32; ++l) {
    int g = l / 4, t = l % 4;
    for (int reg = 0; reg < 4; ++reg) {
      uint32_t w = 0;
      for (int i = 0; i < 2; ++i)
        w |= uint32_t(kept[g + 8 * (reg % 2)][2 * t + 8 * (reg / 2) + i])
             << (16 * i);
      afrag[4 * l + reg] = w;
      uint32_t bw = 0;
      for (int i = 0; i < 2; ++i)
        bw |= uint32_t(b[(2 * t + i + 8 * reg) * 8 + g]) << (16 * i);
      bfrag[4 * l + reg] = bw;
    }
    meta[l] = uint32_t(rng()); // garbage unless the selector names the lane
    if (t / 2 == sel) {
      int h = t % 2;
      uint32_t w = 0;
      for (int hi = 0; hi < 2; ++hi)
        for (int q = 0; q < 4; ++q)
          for (int i = 0; i < 2; ++i)
            w |= uint32_t(pos[g + 8 * hi][4 * h + q][i])
                 << (16 * hi + 4 * q + 2 * i);
      meta[l] = w;
    }
  }
  Buffer ab(512, "A"), mb(128, "meta"), bb(512, "B"), out(512, "D");
  ab.fill(afrag);
  mb.fill(meta);
  bb.fill(bfrag);
  ASSERT_EQ(launch(*module, sel ? "mma_sp1" : "mma_sp0", {1}, {32},
                   {ab.address(), mb.address(), bb.address(), out.address()}),
            "");
  auto got = out.read<float>(128);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      double want = 0;
      for (int k = 0; k < 32; ++k)
        want += dense[m * 32 + k] * fromHalf(b[k * 8 + n]);
      EXPECT_NEAR(got[m * 8 + n], want, 1e-4) << m << "," << n;
    }
}

INSTANTIATE_TEST_SUITE_P(Selectors, PtxMmaSparse, testing::Values(0, 1));
