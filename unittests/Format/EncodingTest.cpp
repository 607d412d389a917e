//===- EncodingTest.cpp - #qf.enc text, verification, names ---------------===//
//
// The canonical strings below are what the dialect printer (qfuse-opt)
// prints for the same attributes; the error messages are the dialect
// verifier's, word for word, so the two stay in step.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Encoding.h"

#include "TestUtil.h"

using namespace qfuse::format;
using qfuse::format::test::enc;
using qfuse::format::test::testName;

namespace {

//===----------------------------------------------------------------------===//
// Round trips
//===----------------------------------------------------------------------===//

const char *const kCanonical[] = {
    "int4, group = 128, scale = f16",
    "uint4, group = 128, scale = f16, zero = int",
    "int4, group = 128, scale = f16, act_order",
    "int8, per_channel, scale = bf16",
    "uint8, group = 32, scale = f32, zero = int, act_order, sparse = 2:4",
    "uint4, group = 64, scale = bf16, zero = float, act_order",
    "fp8e4m3, per_channel, scale = f32",
    "fp8e4m3, group = 32, scale = f8E8M0FNU",
    "int8, group = 32, scale = f8E8M0FNU",
    "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale",
    "fp4e2m1, group = 32, scale = f8E8M0FNU",
    "nf4, group = 64, scale = f32",
    "codebook, bits = 2, table = dense<[-1.000000e+00, -9.997550e-02, "
    "1.999510e-01, 6.962890e-01]> : tensor<4xf16>, group = 128, scale = f16",
    "codebook, bits = 2, table = dense<[-1.000000e+00, -1.000000e-01, "
    "2.000000e-01, 6.550400e+04]> : tensor<4xf32>, per_channel, scale = f16",
    "codebook, bits = 2, table = dense<5.000000e-01> : tensor<4xf16>, "
    "group = 128, scale = f16",
    "codebook, bits = 2, table = dense<[0x7C00, 0x7E00, 0xFC00, "
    "-0.000000e+00]> : tensor<4xf16>, group = 128, scale = f16",
    // Signalling NaNs keep their bits, as in the dialect printer (found by
    // fuzz/encoding: 0x7C03 printed as 0x7E03, a different table).
    "codebook, bits = 2, table = dense<[0x7C03, 0xFC01, 0x7D00, "
    "1.000000e+00]> : tensor<4xf16>, group = 128, scale = f16",
    // f32 values that six digits cannot hold print in APFloat's shortest
    // form (these strings are qfuse-opt's output).
    "codebook, bits = 2, table = dense<[-1.000000e+00, -1.000000e-01, "
    "2.000000e-01, 0.6961928]> : tensor<4xf32>, group = 128, scale = f16",
    "codebook, bits = 2, table = dense<[0x7F800000, 0x7FC00000, "
    "1.401300e-45, 3.40282347E+38]> : tensor<4xf32>, group = 128, scale = f16",
    "codebook, bits = 2, table = dense<[1.000000e+10, 6.550400e+04, "
    "1.000000e-07, 4.448280e-41]> : tensor<4xf32>, group = 128, scale = f16",
    "codebook, bits = 3, table = dense<[1.000000e-01, 2.000000e-01, "
    "3.000000e-01, 4.000000e-01, 5.000000e-01, 6.000000e-01, 0.699999988, "
    "8.000000e-01]> : tensor<8xf32>, group = 128, scale = f16",
    "codebook, bits = 4, table = \"lut.layer0\" : f32, per_channel, scale = f16",
    "codebook, bits = 2, table = \"x\\22y\\\\z\" : f16, group = 128, scale = f16",
    "f16",
    "bf16",
    "f16, sparse = 2:4",
    "int4, group = 128, scale = f16, sparse = 2:4",
};

class CanonicalTest : public ::testing::TestWithParam<const char *> {};

/// Index-prefixed, so that similar strings still get distinct test names.
std::string canonicalName(const ::testing::TestParamInfo<const char *> &info) {
  return std::to_string(info.index) + "_" + testName(info.param).substr(0, 40);
}

TEST_P(CanonicalTest, PrintsAsParsedAndReparsesEqual) {
  Encoding e;
  std::string error;
  ASSERT_TRUE(parseEncoding(GetParam(), e, error)) << error;
  EXPECT_EQ(printEncoding(e), GetParam());
  Encoding again;
  ASSERT_TRUE(parseEncoding(printEncoding(e), again, error)) << error;
  EXPECT_TRUE(again == e);
  // The attribute as written in IR parses too.
  ASSERT_TRUE(parseEncoding(std::string("#qf.enc<") + GetParam() + ">", again,
                            error))
      << error;
  EXPECT_TRUE(again == e);
}

INSTANTIATE_TEST_SUITE_P(Encodings, CanonicalTest,
                         ::testing::ValuesIn(kCanonical), canonicalName);

TEST(EncodingTest, NonCanonicalTextPrintsCanonically) {
  const std::pair<const char *, const char *> cases[] = {
      {"  uint4 ,zero=int,scale=f16, group=0x80 ",
       "uint4, group = 128, scale = f16, zero = int"},
      {"nf4, scale = f32, group = 64", "nf4, group = 64, scale = f32"},
      {"int4, sparse = 2 : 4, act_order, scale = f16, group = 128",
       "int4, group = 128, scale = f16, act_order, sparse = 2:4"},
      // Values round to the table type once (MLIR: double -> f16).
      {"codebook, table = dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf16>, "
       "bits = 2, group = 128, scale = f16",
       "codebook, bits = 2, table = dense<[9.997550e-02, 1.999510e-01, "
       "3.000490e-01, 3.999020e-01]> : tensor<4xf16>, group = 128, scale = f16"},
      // A list of equal values is a splat; hex bit patterns; "\"" escapes.
      {"codebook, bits = 2, table = dense<[1.0, 1.0, 1.0, 1.0]> : "
       "tensor<4xf16>, per_channel, scale = f16",
       "codebook, bits = 2, table = dense<1.000000e+00> : tensor<4xf16>, "
       "per_channel, scale = f16"},
      {"codebook, bits = 2, table = dense<\"0x003C00BC0038FF7B\"> : "
       "tensor<4xf16>, per_channel, scale = f16",
       "codebook, bits = 2, table = dense<[1.000000e+00, -1.000000e+00, "
       "5.000000e-01, 6.550400e+04]> : tensor<4xf16>, per_channel, scale = f16"},
      {"codebook, bits = 2, table = \"a\\\"b\" : f16, per_channel, scale = f16",
       "codebook, bits = 2, table = \"a\\22b\" : f16, per_channel, scale = f16"},
  };
  for (const auto &[input, canonical] : cases) {
    Encoding e;
    std::string error;
    ASSERT_TRUE(parseEncoding(input, e, error)) << input << ": " << error;
    EXPECT_EQ(printEncoding(e), canonical) << input;
  }
}

TEST(EncodingTest, F32TableValuesKeepEveryBit) {
  Encoding e = enc("codebook, bits = 2, table = dense<[0.6961928009986877, "
                   "0.7, 3.4028235e38, 1.0e-45]> : tensor<4xf32>, "
                   "per_channel, scale = f16");
  EXPECT_EQ(e.table[0], 0.6961928009986877f);
  EXPECT_EQ(e.table[1], 0.7f);
  Encoding again = enc(printEncoding(e));
  EXPECT_TRUE(again == e) << printEncoding(e);
}

TEST(EncodingTest, LargeTablesPrintAsHexLikeMLIR) {
  // MLIR prints dense attributes of more than 100 values as raw hex.
  Encoding e = enc("codebook, bits = 7, table = \"t\" : f16, group = 128, "
                   "scale = f16");
  e.tableName.clear();
  e.hasInlineTable = true;
  e.tableShape = {128};
  for (int i = 0; i < 128; ++i)
    e.table.push_back(float(i) + 0.5f);
  std::string text = printEncoding(e);
  EXPECT_NE(text.find("table = dense<\"0x0038003E00410043"), std::string::npos)
      << text;
  EXPECT_TRUE(enc(text) == e);
}

// Zero points belong to uint4/uint8, f8 scales to fp4e2m1, fp8e4m3 and
// int8: no encoding has float zero points in an f8 scale type, so the
// generated quantizer needs no f8 rounding of zero points (WeightQuantizer's
// quantizeUnsupportedReason names none).
TEST(EncodingTest, FloatZeroPointsInAnF8ScaleTypeAreNoEncoding) {
  for (const char *format : {"uint4", "uint8", "int8", "fp8e4m3", "fp4e2m1"})
    for (const char *scale : {"f8E4M3FN", "f8E8M0FNU"})
      for (const char *group : {"group = 16", "group = 32"}) {
        const std::string text = std::string(format) + ", " + group +
                                 ", scale = " + scale + ", zero = float";
        Encoding e;
        std::string error;
        EXPECT_FALSE(parseEncoding(text, e, error)) << text;
        EXPECT_FALSE(error.empty()) << text;
      }
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

struct ErrorCase {
  const char *text;
  const char *message; // the whole message (verifier) or its start (syntax)
};

class EncodingErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(EncodingErrorTest, RejectsWithMessage) {
  Encoding e;
  std::string error;
  EXPECT_FALSE(parseEncoding(GetParam().text, e, error)) << GetParam().text;
  EXPECT_EQ(error.substr(0, std::string(GetParam().message).size()),
            GetParam().message)
      << GetParam().text << "\n  got: " << error;
}

// The dialect verifier's rules, in its order.
const ErrorCase kVerifierErrors[] = {
    {"codebook, bits = 1, table = \"t\" : f16, group = 128, scale = f16",
     "codebook index width must be 2 to 8 bits, got 1"},
    {"codebook, bits = 9, table = \"t\" : f16, group = 128, scale = f16",
     "codebook index width must be 2 to 8 bits, got 9"},
    {"codebook, bits = 2, group = 128, scale = f16",
     "codebook needs a table: inline 'table = dense<[...]> : tensor<Nxf16>' "
     "or named 'table = \"name\" : f16'"},
    {"codebook, bits = 3, table = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf16>, "
     "group = 128, scale = f16",
     "codebook of 3-bit indices needs a table of 8 values, got "
     "'tensor<4xf16>'"},
    {"codebook, bits = 2, table = dense<[[1.0, 2.0], [3.0, 4.0]]> : "
     "tensor<2x2xf16>, group = 128, scale = f16",
     "codebook of 2-bit indices needs a table of 4 values, got "
     "'tensor<2x2xf16>'"},
    {"codebook, bits = 2, table = dense<[1.0, 2.0, 3.0, 4.0]> : "
     "tensor<4xbf16>, group = 128, scale = f16",
     "codebook table values must be f16 or f32, got 'bf16'"},
    {"int4, bits = 4, group = 128, scale = f16",
     "'bits' is only meaningful for codebook; 'int4' has a fixed code width"},
    {"nf4, table = \"t\" : f16, group = 64, scale = f32",
     "only 'codebook' takes a table (nf4's table is built in)"},
    {"int4, table = \"t\" : f16, group = 64, scale = f32",
     "only 'codebook' takes a table"},
    {"f16, scale = f16",
     "unquantized 'f16' takes no scales, groups, zero points or act_order"},
    {"bf16, per_channel",
     "unquantized 'bf16' takes no scales, groups, zero points or act_order"},
    {"f16, group = 128", "unquantized 'f16' takes no scales"},
    {"f16, act_order", "unquantized 'f16' takes no scales"},
    {"int4, group = 128",
     "'int4' needs scales: add 'scale = f16' (or bf16, f32, f8E4M3FN, "
     "f8E8M0FNU)"},
    {"int4, scale = f16",
     "'int4' needs a scale granularity: 'group = G' or 'per_channel'"},
    {"int4, group = 1, scale = f16",
     "group size must be at least 2 (or per_channel), got 1"},
    {"uint4, group = 32, scale = f8E8M0FNU, zero = int",
     "E8M0 scales (MX formats) apply to fp4e2m1, fp8e4m3 or int8, not 'uint4'"},
    {"fp4e2m1, group = 16, scale = f8E8M0FNU",
     "E8M0 scales (MX formats) need group = 32, got 16"},
    {"int8, per_channel, scale = f8E8M0FNU",
     "E8M0 scales (MX formats) need group = 32, got per_channel"},
    {"int8, group = 16, scale = f8E4M3FN, global_scale",
     "E4M3 scales (NVFP4) apply to fp4e2m1, not 'int8'"},
    {"fp4e2m1, group = 32, scale = f8E4M3FN, global_scale",
     "E4M3 scales (NVFP4) need group = 16, got 32"},
    {"fp4e2m1, group = 16, scale = f8E4M3FN",
     "E4M3 scales (NVFP4) need 'global_scale': the per-block scales are "
     "relative to one f32 scale"},
    {"fp4e2m1, group = 32, scale = f16, global_scale",
     "'global_scale' belongs to NVFP4 (E4M3 scales), not to scale type 'f16'"},
    {"uint4, group = 128, scale = f16",
     "'uint4' needs a zero point: 'zero = int' or 'zero = float' (use 'int4' "
     "for symmetric weights)"},
    {"uint8, per_channel, scale = f16",
     "'uint8' needs a zero point: 'zero = int' or 'zero = float' (use 'int8' "
     "for symmetric weights)"},
    {"int4, group = 128, scale = f16, zero = int",
     "zero point on symmetric format 'int4'; asymmetric weights use 'uint4' "
     "or 'uint8'"},
    {"int4, per_channel, scale = f16, act_order",
     "'act_order' needs group scales: with per_channel scales the group "
     "index is trivial"},
    {"nf4, group = 64, scale = f32, sparse = 2:4",
     "2:4 sparsity is not supported with 'nf4'; it composes with f16, bf16, "
     "int4, uint4, int8, uint8 and fp8e4m3"},
    {"fp4e2m1, group = 16, scale = f8E4M3FN, global_scale, sparse = 2:4",
     "2:4 sparsity is not supported with 'fp4e2m1'"},
    {"codebook, bits = 4, table = \"t\" : f16, per_channel, scale = f16, "
     "sparse = 2:4",
     "2:4 sparsity is not supported with 'codebook'"},
};

// What the dialect parser rejects before verification.
const ErrorCase kSyntaxErrors[] = {
    {"", "expected an element format"},
    {"int3, group = 128, scale = f16",
     "unknown element format 'int3'; expected one of int4, uint4, int8, "
     "uint8, fp8e4m3, fp4e2m1, nf4, codebook, f16, bf16"},
    {"int4, group = 128, scale = f16, foo",
     "unknown encoding entry 'foo'; expected bits, table, group, per_channel, "
     "scale, global_scale, zero, act_order or sparse"},
    {"int4, group = 128, group = 64, scale = f16", "duplicate entry 'group'"},
    {"int4, act_order, group = 128, scale = f16, act_order",
     "duplicate entry 'act_order'"},
    {"int4, group = 128, per_channel, scale = f16",
     "'group' and 'per_channel' are exclusive; give one granularity"},
    {"int4, per_channel, group = 128, scale = f16",
     "'group' and 'per_channel' are exclusive; give one granularity"},
    {"int4, group = 0, scale = f16",
     "group size must be at least 2 (or per_channel), got 0"},
    {"int4, group = -1, scale = f16",
     "group size must be at least 2 (or per_channel), got -1"},
    {"int4, group = 128, scale = i32",
     "scale type must be f16, bf16, f32, f8E4M3FN or f8E8M0FNU, got 'i32'"},
    {"uint4, group = 128, scale = f16, zero = none",
     "unknown zero point kind 'none'; expected 'int' or 'float'"},
    {"f16, sparse = 1:4",
     "unsupported sparsity 1:4; only 2:4 structured sparsity is supported"},
    {"codebook, bits = 99, table = \"t\" : f16, group = 128, scale = f16",
     "'bits' out of range: 99"},
    {"int4, group = 128 scale = f16", "expected ',' or the end of the encoding"},
    {"int4, group = , scale = f16", "expected an integer"},
    {"int4, group 128, scale = f16", "expected '=' after 'group'"},
    {"codebook, bits = 2, table = dense<[1, 2, 3, 4]> : tensor<4xf16>, "
     "group = 128, scale = f16",
     "unexpected decimal integer literal for a floating point value; add a "
     "trailing dot to make the literal a float"},
    {"codebook, bits = 2, table = 5, group = 128, scale = f16",
     "codebook table must be a dense floating-point tensor (dense<[...]> : "
     "tensor<Nxf16>) or a name (\"name\" : f16)"},
    {"codebook, bits = 2, table = dense<[1.0, 2.0, 3.0]> : tensor<4xf16>, "
     "group = 128, scale = f16",
     "table has 3 values but its type holds 4"},
    {"codebook, bits = 2, table = dense<\"0x003C\"> : tensor<4xf16>, "
     "group = 128, scale = f16",
     "hex table data of 2 bytes does not fill its 4 values"},
    {"codebook, bits = 2, table = \"t : f16, group = 128, scale = f16",
     "unterminated string literal"},
    {"codebook, bits = 2, table = \"t\" : i8, group = 128, scale = f16",
     "codebook table values must be f16 or f32, got 'i8'"},
};

INSTANTIATE_TEST_SUITE_P(Verifier, EncodingErrorTest,
                         ::testing::ValuesIn(kVerifierErrors));
INSTANTIATE_TEST_SUITE_P(Syntax, EncodingErrorTest,
                         ::testing::ValuesIn(kSyntaxErrors));

TEST(EncodingTest, SyntaxErrorsNameTheColumn) {
  Encoding e;
  std::string error;
  EXPECT_FALSE(parseEncoding("int4, group = 128, scale = f16, foo", e, error));
  EXPECT_NE(error.find("at column 33"), std::string::npos) << error;
}

TEST(EncodingTest, TableBothInlineAndNamedIsRejected) {
  // Text cannot say this (a key appears once), but a struct can.
  Encoding e = enc("codebook, bits = 2, table = dense<[1.0, 2.0, 3.0, 4.0]> : "
                   "tensor<4xf16>, group = 128, scale = f16");
  e.tableName = "t";
  std::string error;
  EXPECT_FALSE(verifyEncoding(e, error));
  EXPECT_EQ(error, "codebook table given both inline and by name");
}

TEST(EncodingTest, ValidateChecksTheShape) {
  const struct {
    const char *text;
    int64_t n, k;
    const char *message;
  } cases[] = {
      {"int4, group = 128, scale = f16", 0, 128,
       "weight shape must be positive, got 0x128"},
      {"int4, group = 128, scale = f16", 16, -1,
       "weight shape must be positive, got 16x-1"},
      {"int4, group = 128, scale = f16", 16, 100,
       "group size 128 does not divide K = 100"},
      // Found by fuzz/encoding (fuzz/encoding/crashes/k-int64-max): the
      // byte-boundary check multiplied K by the code width and overflowed.
      {"int8, per_channel, scale = f16", 64, INT64_MAX,
       "weight shape 64x9223372036854775807 has more than 2^48 elements"},
      {"int4, group = 128, scale = f16", int64_t(1) << 24, int64_t(1) << 25,
       "weight shape 16777216x33554432 has more than 2^48 elements"},
      {"f16, sparse = 2:4", 16, 6,
       "2:4 sparsity needs K to be a multiple of 4, got K = 6"},
      {"codebook, bits = 3, table = \"t\" : f16, per_channel, scale = f16", 4,
       12,
       "a row of 12 stored 3-bit codes does not end on a byte boundary (K = "
       "12)"},
      {"int4, per_channel, scale = f16", 4, 3,
       "a row of 3 stored 4-bit codes does not end on a byte boundary (K = 3)"},
  };
  for (const auto &c : cases) {
    std::string error;
    EXPECT_FALSE(validate(enc(c.text), c.n, c.k, error)) << c.text;
    EXPECT_EQ(error, c.message);
  }
  std::string error;
  EXPECT_TRUE(validate(enc("int4, group = 128, scale = f16"), 4096, 14336,
                       error))
      << error;
  EXPECT_TRUE(validate(enc("codebook, bits = 3, table = \"t\" : f16, "
                           "per_channel, scale = f16"),
                       4, 16, error))
      << error;
}

//===----------------------------------------------------------------------===//
// Queries and names
//===----------------------------------------------------------------------===//

TEST(EncodingTest, CodeBitsAndGroups) {
  EXPECT_EQ(codeBits(enc("int4, group = 128, scale = f16")), 4u);
  EXPECT_EQ(codeBits(enc("uint8, per_channel, scale = f16, zero = int")), 8u);
  EXPECT_EQ(codeBits(enc("fp8e4m3, per_channel, scale = f32")), 8u);
  EXPECT_EQ(codeBits(enc("nf4, group = 64, scale = f32")), 4u);
  EXPECT_EQ(codeBits(enc("codebook, bits = 3, table = \"t\" : f16, "
                         "per_channel, scale = f16")),
            3u);
  EXPECT_EQ(codeBits(enc("bf16, sparse = 2:4")), 16u);

  EXPECT_EQ(numGroups(enc("int4, group = 128, scale = f16"), 4096), 32);
  EXPECT_EQ(numGroups(enc("int4, group = 128, scale = f16"), 4000), 32);
  EXPECT_EQ(numGroups(enc("int8, per_channel, scale = f16"), 4096), 1);
  EXPECT_EQ(numGroups(enc("f16"), 4096), 0);
  EXPECT_EQ(storedPerRow(enc("f16, sparse = 2:4"), 64), 32);
  EXPECT_EQ(storedPerRow(enc("int4, group = 128, scale = f16"), 64), 64);

  std::vector<float> nf4 = codebookValues(enc("nf4, group = 64, scale = f32"));
  ASSERT_EQ(nf4.size(), 16u);
  EXPECT_EQ(nf4[0], -1.0f);
  EXPECT_EQ(nf4[15], 1.0f);
  EXPECT_TRUE(codebookValues(enc("int4, group = 128, scale = f16")).empty());
}

TEST(EncodingTest, NamedEncodings) {
  const std::pair<const char *, const char *> names[] = {
      {"int4-g128", "int4, group = 128, scale = f16"},
      {"uint4-g128-asym", "uint4, group = 128, scale = f16, zero = int"},
      {"nf4", "nf4, group = 64, scale = f32"},
      {"nvfp4", "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale"},
      {"mxfp4", "fp4e2m1, group = 32, scale = f8E8M0FNU"},
      {"fp8", "fp8e4m3, per_channel, scale = f32"},
      {"int8", "int8, per_channel, scale = f16"},
      {"2:4", "f16, sparse = 2:4"},
      {"2:4+int4", "int4, group = 128, scale = f16, sparse = 2:4"},
      {"int4-g64", "int4, group = 64, scale = f16"},
      {"int8-g32", "int8, group = 32, scale = f16"},
      {"uint8-g256-asym", "uint8, group = 256, scale = f16, zero = int"},
  };
  for (const auto &[name, text] : names) {
    Encoding e;
    std::string error;
    ASSERT_TRUE(encodingFromName(name, e, error)) << name << ": " << error;
    EXPECT_EQ(printEncoding(e), text) << name;
  }
  EXPECT_EQ(encodingNames().size(), 9u);
  for (const char *bad : {"fp16", "uint4-g128", "int4-g128-asym", "int4-g",
                          "int4-gx", ""}) {
    Encoding e;
    std::string error;
    EXPECT_FALSE(encodingFromName(bad, e, error)) << bad;
    EXPECT_NE(error.find("unknown encoding name"), std::string::npos) << error;
  }
  Encoding e;
  std::string error;
  EXPECT_FALSE(encodingFromName("int4-g1", e, error));
  EXPECT_EQ(error, "group size must be at least 2 (or per_channel), got 1");
}

} // namespace
