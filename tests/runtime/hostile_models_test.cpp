// Hostile model files (GGUF, llama2.c): sizes that overflow, dimensions out of range,
// files too short, NaN / Inf weights — each a clear error, never a crash or garbage.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/errors.h"
#include "runtime/generator.h"
#include "runtime/gguf.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

const std::string kModel = test_data::shared("models/stories260K/stories260K.bin").string();
const std::string kTok = test_data::shared("models/stories260K/tok512.bin").string();

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name = "")
      : path(fs::temp_directory_path() / ("lockstep_hostile_models_" + std::to_string(::getpid()) + name)) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path / name, std::ios::binary) << bytes;
    return file(name);
  }
};

template <typename Fn>
std::string model_error(Fn fn) {
  try {
    fn();
  } catch (const ModelFormatError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a ModelFormatError: " << e.what();
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

template <typename T>
void put(std::string& bytes, size_t at, T value) {
  std::memcpy(&bytes[at], &value, sizeof(T));
}

// A GGUF holding one F32 tensor "t" of `dims` (its data: 64 bytes) and the writer's layout.
std::string one_tensor_gguf(const std::vector<uint64_t>& dims) {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.add_tensor("t", dims, GgmlType::kF32, std::vector<uint8_t>(64, 0));
  TempDir dir("_writer");
  w.write(dir.file("t.gguf"));
  return test_data::read_file(dir.file("t.gguf"));
}

// Byte offset of tensor "t"'s info fields: dims start after name and dimension count.
size_t tensor_info_at(const std::string& bytes) { return bytes.find(std::string("\x01\0\0\0\0\0\0\0t", 9)) + 9; }

TEST(HostileGguf, TensorDimensionsWhoseProductOverflowsAreRejectedWithTheOffset) {
  TempDir dir;
  std::string bytes = one_tensor_gguf({4, 4});
  const size_t dims_at = tensor_info_at(bytes) + 4;
  // Each dimension fits, their product does not (the elements are counted in 64 bits, and
  // never beyond the file's bytes, so no product of dimensions can wrap).
  put<uint64_t>(bytes, dims_at, 16);
  put<uint64_t>(bytes, dims_at + 8, 16);
  std::string e = model_error([&] { GgufFile f(dir.write("a.gguf", bytes)); });
  EXPECT_TRUE(contains(e, fmt::format("byte offset {}: tensor 't' has more elements than the file has bytes (256 > {})",
                                      dims_at + 8, bytes.size())))
      << e;
  put<uint64_t>(bytes, dims_at, UINT32_MAX);
  put<uint64_t>(bytes, dims_at + 8, UINT32_MAX);
  e = model_error([&] { GgufFile f(dir.write("a.gguf", bytes)); });
  EXPECT_TRUE(contains(e, fmt::format("byte offset {}: tensor 't' has more elements than the file has bytes", dims_at)))
      << e;
  put<uint64_t>(bytes, dims_at, uint64_t{1} << 32);
  e = model_error([&] { GgufFile f(dir.write("a.gguf", bytes)); });
  EXPECT_TRUE(contains(e, fmt::format("byte offset {}: tensor 't' has dimension 4294967296", dims_at))) << e;
}

TEST(HostileGguf, TensorOffsetsThatWrapOrRunPastTheEndAreRejected) {
  TempDir dir;
  std::string bytes = one_tensor_gguf({4, 4});
  const size_t offset_at = tensor_info_at(bytes) + 4 + 16 + 4;
  for (const uint64_t offset : {UINT64_MAX - 31, UINT64_MAX - 63, uint64_t{1} << 40}) {
    put<uint64_t>(bytes, offset_at, offset);
    const std::string e = model_error([&] { GgufFile f(dir.write("a.gguf", bytes)); });
    EXPECT_TRUE(contains(e, "runs past the end of the file")) << offset << ": " << e;
  }
  put<uint64_t>(bytes, offset_at, 32);  // 64 bytes at 32: past the end by 32
  EXPECT_TRUE(contains(model_error([&] { GgufFile f(dir.write("a.gguf", bytes)); }), "runs past the end"));
}

TEST(HostileGguf, HugeAlignmentIsRejected) {
  GgufWriter w;
  w.set_u64("general.alignment", uint64_t{1} << 62);
  TempDir dir;
  w.write(dir.file("a.gguf"));
  const std::string e = model_error([&] { GgufFile f(dir.file("a.gguf")); });
  EXPECT_TRUE(contains(e, "general.alignment 4611686018427387904 is not a power of two up to 1048576")) << e;
}

TEST(HostileGguf, LargeIntegersAreReadExactlyAndDimensionsAreRangeChecked) {
  TempDir dir;
  {
    GgufWriter w;
    w.set_u64("big", UINT64_MAX);
    w.set_u64("exact", (uint64_t{1} << 53) + 1);
    w.write(dir.file("a.gguf"));
    GgufFile f(dir.file("a.gguf"));
    EXPECT_EQ(f.get_int("exact"), (int64_t{1} << 53) + 1);
    EXPECT_TRUE(contains(model_error([&] { f.get_int("big"); }), "metadata 'big' is 18446744073709551615: out of range"));
  }
  for (const uint64_t dim : {(uint64_t{1} << 32) + 64, uint64_t{1} << 17, uint64_t{0}}) {
    GgufWriter w;
    w.set_string("general.architecture", "llama");
    w.set_u64("llama.embedding_length", dim);
    w.write(dir.file("m.gguf"));
    const std::string e = model_error([&] { load_gguf_model(std::make_shared<GgufFile>(dir.file("m.gguf"))); });
    EXPECT_TRUE(contains(e, fmt::format("metadata 'llama.embedding_length' is {}; lockstep loads 1..65536", dim))) << e;
  }
}

TEST(HostileModel, FilesTooShortToBeAModelSaySo) {
  TempDir dir;
  for (const std::string& bytes : {std::string(""), std::string("GGU"), std::string("\x01\x02", 2)}) {
    const std::string e = model_error([&] { load_model(dir.write("model.bin", bytes), kTok); });
    EXPECT_TRUE(contains(e, fmt::format("model.bin: byte offset {}: file too short ({} bytes) to be a GGUF or llama2.c model",
                                        bytes.size(), bytes.size())))
        << e;
  }
  // A *.gguf without the magic is reported as a GGUF.
  const std::string e = model_error([&] { load_model(dir.write("model.gguf", std::string(100, 'x')), kTok); });
  EXPECT_TRUE(contains(e, "model.gguf: byte offset 0: wrong magic")) << e;
}

TEST(HostileModel, Llama2cHeaderFieldsAreCheckedBeforeAnyArithmetic) {
  const std::string good = test_data::read_file(kModel);
  TempDir dir;
  struct Case {
    int field;
    int32_t value;
    const char* expected;
  };
  const Case cases[] = {
      {5, INT32_MIN, "vocab_size out of range"},  // was negated before the check
      {5, -(1 << 22), "vocab_size out of range"},
      {5, 0, "vocab_size out of range"},
      {0, INT32_MIN, "dim must be in"},
      {0, INT32_MAX, "dim must be in"},
      {1, -1, "hidden_dim must be in"},
      {2, INT32_MAX, "n_layers must be in"},
      {3, INT32_MIN, "n_heads must divide dim"},
      {4, 1 << 30, "n_kv_heads must divide n_heads"},
      {6, INT32_MIN, "seq_len must be in"},
  };
  for (const Case& c : cases) {
    std::string bytes = good;
    put<int32_t>(bytes, 4 * c.field, c.value);
    const std::string e = model_error([&] { load_llama2c_model(dir.write("m.bin", bytes)); });
    EXPECT_TRUE(contains(e, "m.bin: byte offset 0: header (")) << e;
    EXPECT_TRUE(contains(e, c.expected)) << c.field << "=" << c.value << ": " << e;
  }
}

TEST(HostileModel, NanOrInfWeightsAreAnErrorNamingTheStep) {
  TempDir dir;
  convert_llama2c_to_gguf(kModel, kTok, dir.file("m.gguf"));
  const GgufFile parsed(dir.file("m.gguf"));
  std::string bytes = test_data::read_file(dir.file("m.gguf"));
  GenerateOptions opt;
  opt.max_tokens = 10;
  opt.sampling.temperature = 0;
  {
    // One NaN in the final norm: every logit is NaN from the prompt on.
    std::string b = bytes;
    put<float>(b, parsed.find_tensor("output_norm.weight")->offset, std::numeric_limits<float>::quiet_NaN());
    const LoadedModel m = load_model(dir.write("nan.gguf", b));
    try {
      generate(m, opt);
      FAIL() << "NaN weights generated";
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(contains(e.what(), "nan.gguf: the model computed a NaN logit for token 0 at generation step 0 (the prompt)"))
          << e.what();
    }
  }
  {
    // An untied copy of the model (output.weight apart from token_embd.weight) whose
    // embedding row of a token generated later is infinite: the logits turn non-finite
    // only once that token is run.
    GgufWriter w;
    w.set_string("general.architecture", "llama");
    for (const char* key : {"llama.context_length", "llama.embedding_length", "llama.block_count",
                            "llama.feed_forward_length", "llama.attention.head_count", "llama.attention.head_count_kv"}) {
      w.set_u32(key, static_cast<uint32_t>(parsed.get_int(key)));
    }
    const GenerateResult r = generate(load_model(dir.file("m.gguf")), opt);
    size_t k = 1;  // the first generated token not generated before it
    while (k < r.tokens.size() && std::find(r.tokens.begin(), r.tokens.begin() + k, r.tokens[k]) != r.tokens.begin() + k) ++k;
    ASSERT_LT(k, r.tokens.size());
    for (const GgufTensorInfo& t : parsed.tensors()) {
      std::vector<uint8_t> data(bytes.begin() + t.offset, bytes.begin() + t.offset + t.nbytes);
      if (t.name == "token_embd.weight") {
        w.add_tensor("output.weight", t.dims, GgmlType::kF32, data);
        for (int i = 0; i < 64; ++i) {
          const float inf = std::numeric_limits<float>::infinity();
          std::memcpy(&data[4 * (64 * static_cast<size_t>(r.tokens[k]) + i)], &inf, 4);
        }
      }
      w.add_tensor(t.name, t.dims, GgmlType::kF32, std::move(data));
    }
    w.write(dir.file("inf.gguf"));
    const LoadedModel m = load_model(dir.file("inf.gguf"), kTok);
    try {
      generate(m, opt);
      FAIL() << "Inf weights generated";
    } catch (const std::runtime_error& e) {
      EXPECT_TRUE(contains(e.what(), fmt::format("at generation step {} (after {} generated tokens): its weights hold NaN "
                                                 "or infinite values", k + 1, k + 1)))
          << e.what();
    }
  }
}

}  // namespace
}  // namespace lockstep
