#include "io/safetensors.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "io/atomic_file.h"

namespace transduce::io {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << p;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Plain, non-atomic write: for crafting test inputs independently of the code under test.
void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << p;
}

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

uint64_t read_le64(const std::string& s) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(s[i])) << (8 * i);
  return v;
}

// A safetensors file built by hand: length, header text as given, data.
std::string make_file(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

template <typename T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string s(values.size() * sizeof(T), '\0');
  std::memcpy(s.data(), std::data(values), s.size());
  return s;
}

Tensor random_tensor(const Shape& shape, DType dtype, uint32_t seed) {
  Tensor t = Tensor::empty(shape, dtype);
  std::mt19937 rng(seed);
  auto* p = static_cast<unsigned char*>(t.raw());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<unsigned char>(rng() & 0xff);
  return t;
}

void expect_same_tensor(const Tensor& a, const Tensor& b, const std::string& name) {
  EXPECT_EQ(a.dtype(), b.dtype()) << name;
  EXPECT_EQ(a.shape(), b.shape()) << name << ": " << a.shape().str() << " vs " << b.shape().str();
  ASSERT_EQ(a.nbytes(), b.nbytes()) << name;
  if (a.nbytes()) {
    EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0) << name;
  }
}

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           fmt::format("transduce-{}-{}-{}", ::getpid(), info->test_suite_name(), info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

using SafetensorsTest = TempDirTest;
using AtomicFileTest = TempDirTest;

std::map<std::string, Tensor> sample_tensors() {
  std::map<std::string, Tensor> t;
  t["encoder.layers.0.attn.w_q"] = random_tensor({3, 4}, DType::F32, 1);
  t["b.bf16"] = random_tensor({2, 3, 5}, DType::BF16, 2);
  t["half"] = random_tensor({1, 1, 3}, DType::F16, 3);
  t["ids"] = random_tensor({7}, DType::I64, 4);
  t["counts"] = random_tensor({2, 2}, DType::I32, 5);
  t["mask"] = random_tensor({5}, DType::U8, 6);  // 5 bytes: later tensors are not 8-aligned
  t["empty"] = random_tensor({0, 3}, DType::F32, 7);
  t["scalar"] = random_tensor({}, DType::F32, 8);
  t["five.dims"] = random_tensor({1, 2, 1, 2, 3}, DType::F32, 9);
  return t;
}

// Expects loading `file` to fail with one line naming the file and containing `keyword`.
void expect_refused(const std::string& file, const std::string& keyword) {
  try {
    load_safetensors(file);
    ADD_FAILURE() << "loading " << file << " should have failed with '" << keyword << "'";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(file), std::string::npos) << "message does not name the file: " << msg;
    EXPECT_NE(msg.find(keyword), std::string::npos) << "expected '" << keyword << "' in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message is not one line: " << msg;
  }
}

TEST_F(SafetensorsTest, RoundTripIsExactAndDeterministic) {
  const auto tensors = sample_tensors();
  const std::map<std::string, std::string> meta = {{"format", "pt"}, {"step", "12"}, {"e", ""}};
  save_safetensors(path("a.safetensors"), tensors, meta);

  const SafetensorsFile loaded = load_safetensors(path("a.safetensors"));
  EXPECT_EQ(loaded.metadata, meta);
  ASSERT_EQ(loaded.tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    auto it = loaded.tensors.find(name);
    ASSERT_NE(it, loaded.tensors.end()) << name;
    expect_same_tensor(it->second, t, name);
    EXPECT_EQ(it->second.device(), Device::CPU);
    EXPECT_TRUE(it->second.is_contiguous());
  }
  EXPECT_EQ(loaded.tensors.at("scalar").ndim(), 0);
  EXPECT_EQ(loaded.tensors.at("scalar").numel(), 1);
  EXPECT_EQ(loaded.tensors.at("empty").numel(), 0);

  // Same content, same bytes: whether saved from the loaded copy or again from the original.
  save_safetensors(path("b.safetensors"), loaded.tensors, loaded.metadata);
  save_safetensors(path("c.safetensors"), tensors, meta);
  const std::string a = read_bytes(path("a.safetensors"));
  EXPECT_EQ(a, read_bytes(path("b.safetensors")));
  EXPECT_EQ(a, read_bytes(path("c.safetensors")));
  EXPECT_EQ(listing(),
            (std::vector<std::string>{"a.safetensors", "b.safetensors", "c.safetensors"}));
}

TEST_F(SafetensorsTest, NoTensorsAndNoMetadataRoundTrips) {
  save_safetensors(path("e.safetensors"), {});
  const std::string bytes = read_bytes(path("e.safetensors"));
  EXPECT_EQ(bytes, le64(8) + "{}      ");
  const SafetensorsFile f = load_safetensors(path("e.safetensors"));
  EXPECT_TRUE(f.tensors.empty());
  EXPECT_TRUE(f.metadata.empty());
}

TEST_F(SafetensorsTest, HeaderLayoutIsWhatTheFormatSays) {
  const auto tensors = sample_tensors();
  save_safetensors(path("a.safetensors"), tensors, {{"k", "v"}});
  const std::string bytes = read_bytes(path("a.safetensors"));
  ASSERT_GE(bytes.size(), 8u);
  const uint64_t n = read_le64(bytes);
  EXPECT_EQ(n % 8, 0u);
  ASSERT_LE(8 + n, bytes.size());
  const std::string text = bytes.substr(8, n);
  EXPECT_EQ(text.front(), '{');
  const size_t close = text.find_last_of('}');
  ASSERT_NE(close, std::string::npos);
  EXPECT_LT(text.size() - close - 1, 8u);
  EXPECT_EQ(text.find_first_not_of(' ', close + 1), std::string::npos) << "padding is not spaces";
  EXPECT_EQ(text.find('\n'), std::string::npos) << "header is not compact";

  const json header = json::parse(text);
  ASSERT_TRUE(header.is_object());
  EXPECT_EQ(header.at("__metadata__"), json({{"k", "v"}}));
  EXPECT_EQ(header.size(), tensors.size() + 1);

  // Tensors are laid out in name order, back to back from offset 0, and fill the data section.
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    SCOPED_TRACE(name);
    const json& e = header.at(name);
    EXPECT_EQ(e.at("dtype").get<std::string>(), std::string(dtype_name(t.dtype())));
    EXPECT_EQ(e.at("shape"), json(std::vector<int64_t>(t.shape().begin(), t.shape().end())));
    EXPECT_EQ(e.at("data_offsets"), json({offset, offset + t.nbytes()}));
    EXPECT_EQ(bytes.compare(8 + n + offset, t.nbytes(),
                            std::string(static_cast<const char*>(t.raw()), t.nbytes())),
              0);
    offset += t.nbytes();
  }
  EXPECT_EQ(8 + n + offset, bytes.size());
  EXPECT_EQ(header.at("scalar").at("shape"), json::array());
  EXPECT_EQ(header.at("empty").at("shape"), json({0, 3}));
}

TEST_F(SafetensorsTest, ExactBytesOfATinyFile) {
  Tensor x = Tensor::empty({2}, DType::F32);
  x.f32()[0] = 1.0f;
  x.f32()[1] = -2.0f;
  save_safetensors(path("x.safetensors"), {{"x", x}});
  std::string header = R"({"x":{"data_offsets":[0,8],"dtype":"F32","shape":[2]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  EXPECT_EQ(read_bytes(path("x.safetensors")),
            le64(header.size()) + header + bytes_of<float>({1.0f, -2.0f}));
}

TEST_F(SafetensorsTest, LoadsAHandWrittenFile) {
  // Written the way another implementation might: other key order, data not in name order,
  // whitespace and an unpadded header, metadata first.
  const std::string header = R"({ "__metadata__": {"format": "pt", "note": "hand made"},
    "w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
    "ids": {"shape": [2], "data_offsets": [16, 32], "dtype": "I64"},
    "h": {"dtype": "BF16", "data_offsets": [32, 34], "shape": []},
    "none": {"dtype": "U8", "shape": [3, 0], "data_offsets": [34, 34]},
    "bytes": {"dtype": "U8", "shape": [3], "data_offsets": [34, 37]}
  })";
  const std::string data = bytes_of<float>({1.5f, -2.0f, 3.25f, 4.0f}) +
                           bytes_of<int64_t>({7, -9000000000LL}) + std::string("\x80\x3f", 2) +
                           std::string("\x01\xfe\x7f", 3);
  write_bytes(path("hand.safetensors"), make_file(header, data));

  const SafetensorsFile f = load_safetensors(path("hand.safetensors"));
  EXPECT_EQ(f.metadata,
            (std::map<std::string, std::string>{{"format", "pt"}, {"note", "hand made"}}));
  ASSERT_EQ(f.tensors.size(), 5u);
  const Tensor& w = f.tensors.at("w");
  EXPECT_EQ(w.dtype(), DType::F32);
  EXPECT_EQ(w.shape(), Shape({2, 2}));
  EXPECT_EQ(w.f32()[0], 1.5f);
  EXPECT_EQ(w.f32()[1], -2.0f);
  EXPECT_EQ(w.f32()[2], 3.25f);
  EXPECT_EQ(w.f32()[3], 4.0f);
  const Tensor& ids = f.tensors.at("ids");
  EXPECT_EQ(ids.dtype(), DType::I64);
  EXPECT_EQ(ids.shape(), Shape({2}));
  EXPECT_EQ(static_cast<const int64_t*>(ids.raw())[0], 7);
  EXPECT_EQ(static_cast<const int64_t*>(ids.raw())[1], -9000000000LL);
  const Tensor& h = f.tensors.at("h");
  EXPECT_EQ(h.dtype(), DType::BF16);
  EXPECT_EQ(h.ndim(), 0);
  EXPECT_EQ(static_cast<const uint16_t*>(h.raw())[0], 0x3f80);  // bf16 1.0
  EXPECT_EQ(f.tensors.at("none").shape(), Shape({3, 0}));
  const Tensor& b = f.tensors.at("bytes");
  EXPECT_EQ(b.u8()[0], 0x01);
  EXPECT_EQ(b.u8()[1], 0xfe);
  EXPECT_EQ(b.u8()[2], 0x7f);
}

// The golden fixtures were written by tests/fixtures/make_golden.py with Python's struct + json,
// independently of this code. They must load, and survive a save/load round trip.
TEST_F(SafetensorsTest, LoadsTheGoldenFixtures) {
  for (const char* name : {"golden_post_ln", "golden_dk_variant", "golden_pre_ln_learned"}) {
    SCOPED_TRACE(name);
    const std::string file = fmt::format("{}/{}.safetensors", TRANSDUCE_FIXTURES_DIR, name);
    ASSERT_TRUE(fs::exists(file)) << file << " is missing: run tests/fixtures/make_golden.py";
    const SafetensorsFile f = load_safetensors(file);
    EXPECT_EQ(f.metadata.at("generator"), "tests/fixtures/make_golden.py");
    const json config = json::parse(f.metadata.at("config"));
    EXPECT_EQ(config.at("d_model"), 16);

    const Tensor& src = f.tensors.at("batch.src");
    EXPECT_EQ(src.dtype(), DType::I32);
    EXPECT_EQ(src.ndim(), 2);
    const int vocab = config.at("vocab_size").get<int>();
    for (int64_t i = 0; i < src.numel(); ++i) {
      EXPECT_GE(src.i32()[i], 0);
      EXPECT_LT(src.i32()[i], vocab);
    }
    // expect.tokens counts the non-pad targets.
    const Tensor& tgt = f.tensors.at("batch.tgt_out");
    int nonpad = 0;
    for (int64_t i = 0; i < tgt.numel(); ++i) nonpad += tgt.i32()[i] != 0;
    EXPECT_EQ(f.tensors.at("expect.tokens").i32()[0], nonpad);
    const Tensor& loss = f.tensors.at("expect.loss");
    EXPECT_EQ(loss.shape(), Shape({1}));
    EXPECT_TRUE(std::isfinite(loss.f32()[0]) && loss.f32()[0] > 0.0f);

    save_safetensors(path("copy.safetensors"), f.tensors, f.metadata);
    const SafetensorsFile g = load_safetensors(path("copy.safetensors"));
    EXPECT_EQ(g.metadata, f.metadata);
    ASSERT_EQ(g.tensors.size(), f.tensors.size());
    for (const auto& [tname, t] : f.tensors) expect_same_tensor(g.tensors.at(tname), t, tname);
    // The same layout as the fixture's writer, so the same data section.
    const std::string ours = read_bytes(path("copy.safetensors"));
    const std::string theirs = read_bytes(file);
    EXPECT_EQ(ours.substr(8 + read_le64(ours)), theirs.substr(8 + read_le64(theirs)));
  }
}

TEST_F(SafetensorsTest, RefusesBadFiles) {
  const std::string f32x4 = bytes_of<float>({1, 2, 3, 4});
  const std::string good_header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                  R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})";
  const std::string good = make_file(good_header, f32x4);
  write_bytes(path("good.safetensors"), good);
  ASSERT_NO_THROW(load_safetensors(path("good.safetensors")));

  // Writes `bytes` to a file named after the case and expects loading it to fail.
  auto check = [&](const std::string& name, const std::string& bytes, const std::string& keyword) {
    SCOPED_TRACE(name);
    const std::string file = path(name + ".safetensors");
    write_bytes(file, bytes);
    expect_refused(file, keyword);
  };
  auto with_header = [&](const std::string& header, const std::string& data = "") {
    return make_file(header, data.empty() ? f32x4 : data);
  };

  expect_refused(path("missing.safetensors"), "cannot open");
  expect_refused(path("missing.safetensors"), "No such file");
  check("empty", "", "empty");
  check("short", std::string("\x10\0\0", 3), "truncated");
  check("cut_data", good.substr(0, good.size() - 3), "truncated");
  check("cut_header", good.substr(0, 8 + good_header.size() / 2), "truncated");
  check("header_too_long", le64(good.size()) + good.substr(8), "truncated");
  check("absurd_header", le64(uint64_t{1} << 40) + good.substr(8), "limit");
  check("garbage_json", with_header("{\"a\": [1, 2,, }"), "not valid JSON");
  check("binary_junk", le64(4) + std::string("\xff\xfe\0\x01", 4), "not valid JSON");
  check("not_object", with_header("[1, 2, 3]"), "JSON object");
  check("entry_not_object", with_header(R"({"a": 5})"), "should be an object");
  check("unknown_dtype", with_header(R"({"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}})"),
        "F64");
  check("unknown_dtype_names_tensor",
        with_header(R"({"a":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}})"), "'a'");
  check("no_dtype", with_header(R"({"a":{"shape":[4],"data_offsets":[0,16]}})"), "\"dtype\"");
  check("no_shape", with_header(R"({"a":{"dtype":"F32","data_offsets":[0,16]}})"), "\"shape\"");
  check("no_offsets", with_header(R"({"a":{"dtype":"F32","shape":[4]}})"), "\"data_offsets\"");
  check("dtype_not_string", with_header(R"({"a":{"dtype":4,"shape":[4],"data_offsets":[0,16]}})"),
        "should be a string");
  check("shape_not_array", with_header(R"({"a":{"dtype":"F32","shape":4,"data_offsets":[0,16]}})"),
        "should be an array");
  check("dim_not_integer",
        with_header(R"({"a":{"dtype":"F32","shape":[4.0],"data_offsets":[0,16]}})"), "integer");
  check("negative_dim", with_header(R"({"a":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})"),
        "negative");
  check("too_many_dims",
        with_header(R"({"a":{"dtype":"F32","shape":[1,1,1,1,1,4],"data_offsets":[0,16]}})"),
        "dimensions");
  check(
      "huge_shape",
      with_header(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,16]}})"),
      "too large");
  check("huge_shape_with_a_zero",
        with_header(
            R"({"a":{"dtype":"F32","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}})"),
        "too large");
  check("huge_product_of_bytes",
        with_header(R"({"a":{"dtype":"I64","shape":[4611686018427387904],"data_offsets":[0,16]}})"),
        "too large");
  check("offsets_one_number",
        with_header(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[16]}})"), "[begin, end]");
  check("negative_offset",
        with_header(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[-16,0]}})"), "negative");
  check("offsets_backwards",
        with_header(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[16,0]}})"),
        "begin is after end");
  check("offsets_vs_shape",
        with_header(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})"),
        "needs 12 bytes");
  check("offsets_vs_dtype",
        with_header(R"({"a":{"dtype":"I64","shape":[4],"data_offsets":[0,16]}})"),
        "needs 32 bytes");
  check("past_the_end", with_header(R"({"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})"),
        "truncated");
  check("overlap",
        with_header(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})"),
        "overlap");
  check("same_place",
        with_header(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                    R"("b":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})"),
        "overlap");
  check("hole",
        with_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})"),
        "hole");
  check("trailing", good + "xyz", "trailing");
  check("trailing_no_tensors", with_header("{}", "abcd"), "trailing");
  check("metadata_not_string",
        with_header(R"({"__metadata__":{"step":12},)"
                    R"("a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})"),
        "metadata 'step'");
  check(
      "metadata_not_object",
      with_header(R"({"__metadata__":"x","a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})"),
      "__metadata__");
  check("duplicate_name",
        with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                    R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})"),
        "more than once");

  // A directory is not a file.
  fs::create_directory(path("dir.safetensors"));
  expect_refused(path("dir.safetensors"), "not a regular file");
}

TEST_F(SafetensorsTest, SaveRefusesWhatItCannotWrite) {
  EXPECT_THROW(save_safetensors(path("m.safetensors"), {{"__metadata__", Tensor::zeros({1})}}),
               Error);
  EXPECT_THROW(save_safetensors(path("u.safetensors"), {{"a", Tensor()}}), Error);
  const std::string bad_dir = path("no/such/dir/x.safetensors");
  try {
    save_safetensors(bad_dir, {{"a", Tensor::zeros({2})}});
    ADD_FAILURE() << "saving into a missing directory should fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad_dir), std::string::npos) << e.what();
  }
  EXPECT_TRUE(listing().empty());
}

TEST_F(SafetensorsTest, SaveReplacesAnExistingFile) {
  const std::string file = path("w.safetensors");
  save_safetensors(file, sample_tensors(), {{"old", "yes"}});
  save_safetensors(file, {{"only", Tensor::zeros({2})}});
  const SafetensorsFile f = load_safetensors(file);
  EXPECT_TRUE(f.metadata.empty());
  ASSERT_EQ(f.tensors.size(), 1u);
  EXPECT_EQ(f.tensors.at("only").shape(), Shape({2}));
  EXPECT_EQ(listing(), std::vector<std::string>{"w.safetensors"});
}

TEST_F(AtomicFileTest, ReplacesAnExistingFileWholly) {
  const std::string file = path("f.txt");
  write_file_atomically(file, std::string(10000, 'x'));
  EXPECT_EQ(read_bytes(file), std::string(10000, 'x'));
  write_file_atomically(file, "short");
  EXPECT_EQ(read_bytes(file), "short");
  write_file_atomically(file, [](std::FILE* f) { std::fprintf(f, "n=%d\n", 42); });
  EXPECT_EQ(read_bytes(file), "n=42\n");
  write_file_atomically(file, std::string_view());
  EXPECT_EQ(read_bytes(file), "");
  EXPECT_EQ(listing(), std::vector<std::string>{"f.txt"});
}

TEST_F(AtomicFileTest, ThrowingWriterLeavesTheOriginalAndNoTemporary) {
  const std::string file = path("f.txt");
  write_file_atomically(file, "original");
  EXPECT_THROW(write_file_atomically(file,
                                     [](std::FILE* f) {
                                       std::fputs("half of the new con", f);
                                       std::fflush(f);
                                       throw std::runtime_error("writer gave up");
                                     }),
               std::runtime_error);
  EXPECT_EQ(read_bytes(file), "original");
  EXPECT_EQ(listing(), std::vector<std::string>{"f.txt"});

  // Same for a writer that fails before there is any original.
  EXPECT_THROW(write_file_atomically(path("new.txt"), [](std::FILE*) { fail("no"); }), Error);
  EXPECT_EQ(listing(), std::vector<std::string>{"f.txt"});
}

TEST_F(AtomicFileTest, StreamErrorIsReportedAndNothingIsReplaced) {
  const std::string file = path("f.txt");
  write_file_atomically(file, "original");
  try {
    write_file_atomically(file, [](std::FILE* f) {
      std::fputs("new", f);
      std::fgetc(f);  // reading a write-only stream sets its error flag, like a failed write
    });
    ADD_FAILURE() << "a stream error should fail the write";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(file), std::string::npos) << msg;
    EXPECT_NE(msg.find("writing failed"), std::string::npos) << msg;
  }
  EXPECT_EQ(read_bytes(file), "original");
  EXPECT_EQ(listing(), std::vector<std::string>{"f.txt"});
}

TEST_F(AtomicFileTest, MissingDirectoryNamesThePathAndTheReason) {
  const std::string file = path("missing/f.txt");
  try {
    write_file_atomically(file, "x");
    ADD_FAILURE() << "writing into a missing directory should fail";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(file), std::string::npos) << msg;
    EXPECT_NE(msg.find("No such file or directory"), std::string::npos) << msg;
  }
  EXPECT_TRUE(listing().empty());
}

}  // namespace
}  // namespace transduce::io
