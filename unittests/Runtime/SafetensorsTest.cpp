//===- SafetensorsTest.cpp - safetensors reader and writer ----------------===//
//
// A round trip through the writer, then one malformed file per rule the
// reader enforces, each checked for an error that names the problem (and the
// tensor, where there is one).
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/checkpoint/Safetensors.h"
#include "qfuse/runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

using namespace qfuse::runtime;

namespace {

/// A file from raw parts: the 8-byte length (the header's own unless
/// overridden), the header text and the data buffer.
std::vector<uint8_t> rawFile(const std::string &header,
                             const std::vector<uint8_t> &data,
                             int64_t headerLength = -1) {
  const uint64_t length =
      headerLength < 0 ? header.size() : static_cast<uint64_t>(headerLength);
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 8; ++i)
    bytes.push_back(static_cast<uint8_t>(length >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

std::vector<uint8_t> zeros(size_t n) { return std::vector<uint8_t>(n, 0); }

/// Parses `bytes` expecting a qfuse::Error whose message contains every
/// fragment (and the file's name).
void expectRejected(std::vector<uint8_t> bytes,
                    std::initializer_list<const char *> fragments) {
  try {
    SafetensorsFile::fromBytes(std::move(bytes), "bad.safetensors");
    FAIL() << "accepted a malformed file";
  } catch (const qfuse::Error &e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("bad.safetensors"), std::string::npos) << message;
    for (const char *fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "'" << fragment << "' not in: " << message;
  }
}

/// A small valid file: "a" F32 [2, 2], then "b" I32 [3].
std::vector<uint8_t> twoTensorFile() {
  std::vector<float> a = {1.0f, -2.0f, 3.5f, 0.25f};
  std::vector<int32_t> b = {7, -8, 9};
  SafetensorsWriter writer;
  writer.add("a", DType::F32, {2, 2}, a.data(), a.size() * sizeof(float));
  writer.add("b", DType::I32, {3}, b.data(), b.size() * sizeof(int32_t));
  return writer.serialize();
}

} // namespace

//===----------------------------------------------------------------------===//
// Valid files
//===----------------------------------------------------------------------===//

TEST(Safetensors, RoundTripInMemory) {
  std::vector<uint16_t> half = {0x3c00, 0xc000, 0x0001, 0x7bff, 0, 0x8000};
  std::vector<int32_t> ints = {1, -2, 3, -4};
  std::vector<uint8_t> nibbles = {0x21, 0x43, 0x65, 0x87}; // F4 [2, 4]
  std::vector<uint8_t> fp8 = {0x38, 0xb8, 0x7e};
  double scalar = 3.25;
  SafetensorsWriter writer;
  writer.add("model.w.codes", DType::U8, {2, 2}, nibbles.data(), 4);
  writer.add("h", DType::F16, {2, 3}, half.data(), half.size() * 2);
  writer.add("i", DType::I32, {4}, ints.data(), ints.size() * 4);
  writer.add("empty", DType::BF16, {0, 5}, nullptr, 0);
  writer.add("fp4", DType::F4, {2, 4}, nibbles.data(), nibbles.size());
  writer.add("fp8", DType::F8E4M3, {3}, fp8.data(), fp8.size());
  writer.add("scalar", DType::F64, {}, &scalar, sizeof(scalar));
  writer.setMetadata("format", "pt");
  writer.setMetadata("qfuse", "test");
  std::vector<uint8_t> bytes = writer.serialize();

  // The data buffer starts 8-byte aligned.
  uint64_t headerLength = 0;
  std::memcpy(&headerLength, bytes.data(), 8);
  EXPECT_EQ((8 + headerLength) % 8, 0u);

  SafetensorsFile file = SafetensorsFile::fromBytes(bytes, "round-trip");
  ASSERT_EQ(file.tensors().size(), 7u);
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.metadata().at("qfuse"), "test");

  const TensorInfo &h = file.info("h");
  EXPECT_EQ(h.dtype, DType::F16);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h.numElements(), 6u);
  TensorView hv = file.view("h");
  ASSERT_EQ(hv.size, 12u);
  EXPECT_EQ(std::memcmp(hv.data, half.data(), 12), 0);

  TensorView iv = file.view("i");
  ASSERT_EQ(iv.size, 16u);
  EXPECT_EQ(std::memcmp(iv.data, ints.data(), 16), 0);

  EXPECT_EQ(file.info("empty").numBytes(), 0u);
  EXPECT_EQ(file.info("empty").shape, (std::vector<int64_t>{0, 5}));
  EXPECT_EQ(file.info("fp4").dtype, DType::F4);
  EXPECT_EQ(file.view("fp4").size, 4u);
  EXPECT_EQ(std::memcmp(file.view("fp8").data, fp8.data(), 3), 0);
  EXPECT_TRUE(file.info("scalar").shape.empty());
  double readBack = 0;
  std::memcpy(&readBack, file.view("scalar").data, sizeof(double));
  EXPECT_EQ(readBack, 3.25);
  EXPECT_EQ(std::memcmp(file.view("model.w.codes").data, nibbles.data(), 4), 0);

  // Entries come back in data order and tile the buffer.
  uint64_t cursor = 0;
  for (const TensorInfo &info : file.tensors()) {
    EXPECT_EQ(info.begin, cursor) << info.name;
    cursor = info.end;
  }
  EXPECT_FALSE(file.contains("missing"));
  EXPECT_EQ(file.find("missing"), nullptr);
}

TEST(Safetensors, RoundTripThroughFile) {
  const std::string path = ::testing::TempDir() + "qfuse-roundtrip.safetensors";
  std::vector<float> values(1000);
  std::iota(values.begin(), values.end(), -500.0f);
  SafetensorsWriter writer;
  writer.add("layer.weight", DType::F32, {10, 100}, values.data(),
             values.size() * sizeof(float));
  writer.write(path);

  SafetensorsFile opened = SafetensorsFile::open(path);
  SafetensorsFile file = std::move(opened); // the mapping moves along
  EXPECT_EQ(file.path(), path);
  TensorView view = file.view("layer.weight");
  ASSERT_EQ(view.size, values.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(view.data, values.data(), view.size), 0);
  std::remove(path.c_str());
}

TEST(Safetensors, FileHoldsExactlyTheSerializedBytes) {
  // write() puts the tensors at their offsets by parallel writes: the file
  // must be serialize()'s bytes, for many tensors of odd sizes.
  const std::string path = ::testing::TempDir() + "qfuse-parallel.safetensors";
  SafetensorsWriter writer;
  writer.setMetadata("format", "pt");
  for (int t = 0; t < 37; ++t) {
    std::vector<uint8_t> bytes(size_t(1 + t * 4099));
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = uint8_t(i * 31 + size_t(t));
    writer.add("t" + std::to_string(t), DType::U8,
               {int64_t(bytes.size())}, bytes.data(), bytes.size());
  }
  writer.write(path);
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
  EXPECT_EQ(file, writer.serialize());
  std::remove(path.c_str());
}

TEST(Safetensors, SharedBytesWriteAsCopiedOnes) {
  // add(owner, data) writes what add(data) writes, from bytes it does not
  // copy and keeps alive after the caller drops them; interleaved with
  // copied tensors, in memory and through the file.
  const std::string path = ::testing::TempDir() + "qfuse-shared.safetensors";
  SafetensorsWriter copied, shared;
  for (int t = 0; t < 9; ++t) {
    auto bytes = std::make_shared<std::vector<uint8_t>>(size_t(3 + t * 1021));
    for (size_t i = 0; i < bytes->size(); ++i)
      (*bytes)[i] = uint8_t(i * 7 + size_t(t));
    const std::string name = "t" + std::to_string(t);
    const std::vector<int64_t> shape = {int64_t(bytes->size())};
    copied.add(name, DType::U8, shape, bytes->data(), bytes->size());
    if (t % 2)
      shared.add(name, DType::U8, shape, bytes->data(), bytes->size());
    else
      shared.add(name, DType::U8, shape, bytes, bytes->data(), bytes->size());
  }
  EXPECT_EQ(shared.serialize(), copied.serialize());
  shared.write(path);
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
  EXPECT_EQ(file, copied.serialize());
  std::remove(path.c_str());
  EXPECT_THROW(shared.add("t0", DType::U8, {1}, std::make_shared<int>(0),
                          nullptr, 1),
               qfuse::Error);
}

TEST(Safetensors, EmptyHeaderObjectIsValid) {
  SafetensorsFile file = SafetensorsFile::fromBytes(rawFile("{}", {}), "e");
  EXPECT_TRUE(file.tensors().empty());
}

TEST(Safetensors, HeaderPaddedWithSpacesIsValid) {
  SafetensorsFile file = SafetensorsFile::fromBytes(
      rawFile(R"({"x":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}    )",
              {5, 6}),
      "padded");
  EXPECT_EQ(file.view("x").data[1], 6);
}

TEST(Safetensors, MissingFileNamesThePath) {
  try {
    SafetensorsFile::open("/nonexistent/qfuse.safetensors");
    FAIL();
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/qfuse.safetensors"),
              std::string::npos);
  }
}

TEST(Safetensors, LookupOfAnAbsentTensorNamesIt) {
  SafetensorsFile file = SafetensorsFile::fromBytes(twoTensorFile(), "f.st");
  try {
    file.info("model.nope");
    FAIL();
  } catch (const qfuse::Error &e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("f.st"), std::string::npos);
    EXPECT_NE(message.find("'model.nope'"), std::string::npos);
    EXPECT_NE(message.find("not found"), std::string::npos);
  }
}

//===----------------------------------------------------------------------===//
// Corrupt files, one rule each
//===----------------------------------------------------------------------===//

TEST(Safetensors, RejectsTruncatedData) {
  std::vector<uint8_t> bytes = twoTensorFile();
  bytes.resize(bytes.size() - 3); // cuts into "b"
  expectRejected(bytes, {"truncated", "tensor 'b'"});
}

TEST(Safetensors, RejectsTruncatedHeaderLength) {
  expectRejected({0x10, 0, 0, 0, 0}, {"truncated header", "5 bytes"});
  expectRejected({}, {"truncated header"});
}

TEST(Safetensors, RejectsTruncatedHeader) {
  std::vector<uint8_t> bytes = twoTensorFile();
  bytes.resize(20); // the length says more header follows than there is
  expectRejected(bytes, {"header length", "runs past the end of the file"});
}

TEST(Safetensors, RejectsHeaderLengthPastTheFile) {
  expectRejected(rawFile("{}", {}, 4096),
                 {"header length 4096", "runs past the end of the file"});
}

TEST(Safetensors, RejectsHeaderLengthOverTheCap) {
  expectRejected(rawFile("{}", {}, 200'000'000),
                 {"header length 200000000", "100000000-byte cap"});
}

TEST(Safetensors, RejectsBadJson) {
  expectRejected(rawFile(R"({"a": {"dtype": "F32", )", {}), {"not valid JSON"});
  expectRejected(rawFile("{\"a\": 1,}", {}), {"not valid JSON"});
}

TEST(Safetensors, RejectsHeaderThatIsNotAnObject) {
  expectRejected(rawFile("[1, 2]", {}), {"must start with '{'"});
}

TEST(Safetensors, RejectsUnknownDtype) {
  expectRejected(
      rawFile(R"({"w":{"dtype":"F12","shape":[1],"data_offsets":[0,4]}})",
              zeros(4)),
      {"tensor 'w'", "unknown dtype 'F12'"});
}

TEST(Safetensors, RejectsShapeOffsetSizeMismatch) {
  expectRejected(
      rawFile(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})",
              zeros(12)),
      {"tensor 'w'", "size mismatch", "16 bytes", "span 12"});
}

TEST(Safetensors, RejectsOddSubByteSizes) {
  expectRejected(
      rawFile(R"({"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})",
              zeros(2)),
      {"tensor 'w'", "not a whole number of bytes"});
}

TEST(Safetensors, RejectsOverlappingOffsets) {
  expectRejected(
      rawFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
              zeros(12)),
      {"tensor 'b'", "overlap tensor 'a'"});
}

TEST(Safetensors, RejectsOutOfRangeOffsets) {
  // begin past end
  expectRejected(
      rawFile(R"({"w":{"dtype":"U8","shape":[4],"data_offsets":[8,4]}})",
              zeros(8)),
      {"tensor 'w'", "out of range", "begin is past end"});
  // negative
  expectRejected(
      rawFile(R"({"w":{"dtype":"U8","shape":[4],"data_offsets":[-4,0]}})",
              zeros(4)),
      {"tensor 'w'", "out of range"});
  // beyond 2^64
  expectRejected(rawFile(R"({"w":{"dtype":"U8","shape":[1],)"
                         R"("data_offsets":[0,99999999999999999999]}})",
                         zeros(1)),
                 {"tensor 'w'", "out of range"});
  // inside the header's own arithmetic but past the data buffer
  expectRejected(
      rawFile(R"({"w":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
              R"("v":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})",
              zeros(4)),
      {"tensor 'v'", "runs past the end of the data buffer"});
}

TEST(Safetensors, RejectsHolesAndTrailingBytes) {
  expectRejected(
      rawFile(R"({"w":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})",
              zeros(8)),
      {"tensor 'w'", "hole [0, 4)"});
  expectRejected(
      rawFile(R"({"w":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})",
              zeros(6)),
      {"2 trailing bytes"});
}

TEST(Safetensors, RejectsDuplicateKeys) {
  expectRejected(
      rawFile(R"({"w":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
              R"("w":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})",
              zeros(4)),
      {"duplicate key 'w'"});
  expectRejected(rawFile(R"({"w":{"dtype":"U8","dtype":"I8","shape":[2],)"
                         R"("data_offsets":[0,2]}})",
                         zeros(2)),
                 {"duplicate key 'dtype'"});
}

TEST(Safetensors, RejectsMalformedEntries) {
  expectRejected(
      rawFile(R"({"w":{"shape":[2],"data_offsets":[0,2]}})", zeros(2)),
      {"tensor 'w'", "missing string 'dtype'"});
  expectRejected(
      rawFile(R"({"w":{"dtype":"U8","data_offsets":[0,2]}})", zeros(2)),
      {"tensor 'w'", "missing array 'shape'"});
  expectRejected(rawFile(R"({"w":{"dtype":"U8","shape":[2]}})", zeros(2)),
                 {"tensor 'w'", "data_offsets"});
  expectRejected(
      rawFile(R"({"w":{"dtype":"U8","shape":[-2],"data_offsets":[0,2]}})",
              zeros(2)),
      {"tensor 'w'", "not a non-negative integer"});
  expectRejected(
      rawFile(R"({"w":{"dtype":"U8","shape":[1.5],"data_offsets":[0,2]}})",
              zeros(2)),
      {"tensor 'w'", "not a non-negative integer"});
  expectRejected(
      rawFile(R"({"w":{"dtype":"U8","shape":[2],"data_offsets":[0,2],)"
              R"("extra":1}})",
              zeros(2)),
      {"tensor 'w'", "unexpected key 'extra'"});
  expectRejected(rawFile(R"({"w":[1,2]})", {}),
                 {"tensor 'w'", "entry must be an object"});
}

TEST(Safetensors, RejectsBadMetadata) {
  expectRejected(rawFile(R"({"__metadata__":{"format":1}})", {}),
                 {"__metadata__ entry 'format' must be a string"});
  expectRejected(rawFile(R"({"__metadata__":"pt"})", {}),
                 {"__metadata__ must be an object"});
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

TEST(SafetensorsWriter, RejectsWrongSizesAndDuplicates) {
  SafetensorsWriter writer;
  uint8_t data[8] = {};
  EXPECT_THROW(writer.add("w", DType::F32, {3}, data, 8), qfuse::Error);
  writer.add("w", DType::F32, {2}, data, 8);
  EXPECT_THROW(writer.add("w", DType::F32, {2}, data, 8), qfuse::Error);
  EXPECT_THROW(writer.add("__metadata__", DType::U8, {1}, data, 1),
               qfuse::Error);
  EXPECT_THROW(writer.add("odd", DType::F4, {3}, data, 2), qfuse::Error);
}

TEST(DType, NamesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(DType::F4); ++i) {
    DType type = static_cast<DType>(i);
    EXPECT_EQ(parseSafetensorsDType(safetensorsName(type)), type);
    EXPECT_EQ(parseArtifactDType(artifactName(type)), type);
  }
  EXPECT_EQ(dtypeStorageBytes(DType::BF16, 3), 6u);
  EXPECT_EQ(dtypeStorageBytes(DType::F4, 4), 2u);
  EXPECT_FALSE(dtypeStorageBytes(DType::F4, 3));
  EXPECT_FALSE(dtypeStorageBytes(DType::F64, uint64_t(1) << 62));
  EXPECT_FALSE(parseSafetensorsDType("f16"));
  EXPECT_FALSE(parseArtifactDType("F16"));
}
