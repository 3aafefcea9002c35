// GGUF: the bundled model converted to GGUF generates what the llama2.c checkpoint does;
// malformed files are clear errors with the byte offset or the key.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

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

struct TempPath {
  fs::path path;
  explicit TempPath(const std::string& name)
      : path(fs::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)) {}
  ~TempPath() { fs::remove(path); }
  std::string str() const { return path.string(); }
};

void write_bytes(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(Gguf, ConvertedModelGeneratesTheSameGreedyTokens) {
  TempPath f32("stories_f32.gguf");
  convert_llama2c_to_gguf(kModel, kTok, f32.str());
  GenerateOptions opt;
  opt.max_tokens = 200;
  opt.sampling.temperature = 0;
  const GenerateResult from_bin = generate(load_model(kModel), opt);
  const LoadedModel gguf = load_model(f32.str());
  EXPECT_EQ(gguf.tokenizer_path, f32.str());  // the vocabulary comes from the GGUF itself
  const GenerateResult from_gguf = generate(gguf, opt);
  EXPECT_EQ(from_gguf.tokens, from_bin.tokens);
  EXPECT_EQ(from_gguf.text, test_data::read_file(
                                test_data::shared("models/stories260K/expected_greedy_200steps.txt")));
  // The GGUF's SentencePiece vocabulary tokenizes like the llama2.c one.
  const LoadedModel bin = load_model(kModel);
  for (const std::string s : {"Once upon a time", "Lily's mom said, \"Hi!\" 🙂"}) {
    EXPECT_EQ(gguf.tokenizer->encode(s, true), bin.tokenizer->encode(s, true)) << s;
  }
}

TEST(Gguf, MetadataAndTensorsReadBack) {
  TempPath f32("stories_meta.gguf");
  convert_llama2c_to_gguf(kModel, kTok, f32.str());
  GgufFile f(f32.str());
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.get_int("llama.embedding_length"), 64);
  EXPECT_EQ(f.get_int("llama.attention.head_count_kv"), 4);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens").size(), 512u);
  EXPECT_EQ(f.get_string_array("tokenizer.ggml.tokens")[1], "<s>");
  const GgufTensorInfo* q = f.find_tensor("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dims, (std::vector<uint64_t>{64, 64}));
  EXPECT_EQ(q->offset % 32, 0u);
  EXPECT_EQ(f.tensors().size(), 1u + 5 * 9 + 1);  // embedding, 5 layers × 9, output norm
}

TEST(Gguf, Q8_0ModelIsWithinQuantizationErrorAndRuns) {
  TempPath q8("stories_q8.gguf");
  convert_llama2c_to_gguf(kModel, kTok, q8.str(), WeightType::kQ8_0);
  const auto ref = load_model(kModel).model;
  const LoadedModel m = load_model(q8.str());
  EXPECT_LT(fs::file_size(q8.path), fs::file_size(kModel) / 2);
  // Every weight within half a quantization step of its block (scale = max |w| / 127).
  const float* a = ref->layer(2).w1;
  const float* b = m.model->layer(2).w1;
  for (size_t blk = 0; blk < 172 * 64 / 32; ++blk) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(a[blk * 32 + i]));
    for (int i = 0; i < 32; ++i) {
      ASSERT_LE(std::fabs(a[blk * 32 + i] - b[blk * 32 + i]), amax / 127.0f * 0.5f + 1e-3f * amax);
    }
  }
  GenerateOptions opt;
  opt.max_tokens = 50;
  opt.sampling.temperature = 0;
  EXPECT_EQ(generate(m, opt).tokens.size(), 50u);
}

TEST(Gguf, F16ModelLoadsWithHalfPrecisionWeights) {
  TempPath f16("stories_f16.gguf");
  convert_llama2c_to_gguf(kModel, kTok, f16.str(), WeightType::kF16);
  GgufFile f(f16.str());
  EXPECT_EQ(f.find_tensor("blk.0.ffn_up.weight")->type, static_cast<uint32_t>(GgmlType::kF16));
  const auto ref = load_model(kModel).model;
  const LoadedModel m = load_model(f16.str());
  const float* a = ref->layer(4).wo;
  const float* b = m.model->layer(4).wo;
  for (size_t i = 0; i < 64 * 64; ++i) ASSERT_NEAR(a[i], b[i], std::fabs(a[i]) / 1024 + 1e-7f);
  GenerateOptions opt;
  opt.max_tokens = 20;
  opt.sampling.temperature = 0;
  EXPECT_EQ(generate(m, opt).tokens.size(), 20u);
}

TEST(Gguf, HalfPrecisionConversions) {
  for (float x : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.333251953125f}) {
    EXPECT_EQ(half_to_float(float_to_half(x)), x) << x;
  }
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_TRUE(std::isinf(half_to_float(float_to_half(1e6f))));
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
}

TEST(Gguf, MalformedFilesAreClearErrorsWithTheOffset) {
  TempPath good("good.gguf");
  convert_llama2c_to_gguf(kModel, kTok, good.str());
  const std::string bytes = test_data::read_file(good.path);
  TempPath bad("bad.gguf");

  write_bytes(bad.path, "GGML" + bytes.substr(4));
  EXPECT_NE(error_of([&] { GgufFile f(bad.str()); }).find("byte offset 0: wrong magic"), std::string::npos);

  write_bytes(bad.path, bytes.substr(0, 5000));  // cut inside the metadata
  std::string e = error_of([&] { GgufFile f(bad.str()); });
  EXPECT_NE(e.find("byte offset"), std::string::npos) << e;
  EXPECT_NE(e.find("truncated GGUF"), std::string::npos) << e;

  write_bytes(bad.path, bytes.substr(0, bytes.size() - 1000));  // cut inside the tensor data
  e = error_of([&] { GgufFile f(bad.str()); });
  EXPECT_NE(e.find("runs past the end of the file"), std::string::npos) << e;

  std::string v = bytes;
  v[4] = 7;  // version 7
  write_bytes(bad.path, v);
  EXPECT_NE(error_of([&] { GgufFile f(bad.str()); }).find("byte offset 4: GGUF version 7"), std::string::npos);

  // Unknown and unsupported tensor types: patch the first tensor's type field.
  GgufFile parsed(good.str());
  const std::string name = parsed.tensors()[0].name;
  const size_t at = bytes.find(name) + name.size() + 4 + 8 * parsed.tensors()[0].dims.size();
  for (uint32_t type : {12u, 99u}) {
    std::string t = bytes;
    std::memcpy(&t[at], &type, 4);
    write_bytes(bad.path, t);
    e = error_of([&] { GgufFile f(bad.str()); });
    EXPECT_NE(e.find("byte offset " + std::to_string(at)), std::string::npos) << e;
    EXPECT_NE(e.find(type == 12 ? "type Q4_K (12)" : "type unknown (99)"), std::string::npos) << e;
  }
}

TEST(Gguf, MissingTokenizerFieldNamesTheKey) {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_string("tokenizer.ggml.model", "llama");
  TempPath p("notokens.gguf");
  w.write(p.str());
  GgufFile f(p.str());
  const std::string e = error_of([&] { load_gguf_tokenizer(f); });
  EXPECT_NE(e.find("metadata 'tokenizer.ggml.tokens' is missing"), std::string::npos) << e;
  const std::string m = error_of([&] { load_gguf_model(std::make_shared<GgufFile>(p.str())); });
  EXPECT_NE(m.find("is missing"), std::string::npos) << m;
}

TEST(Gguf, MalformedTokenizerJsonNamesTheOffsetOrPointer) {
  TempPath p("tokenizer.json");
  write_bytes(p.path, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, ");
  std::string e = error_of([&] { load_hf_tokenizer(p.str()); });
  EXPECT_NE(e.find("byte offset"), std::string::npos) << e;
  EXPECT_NE(e.find("malformed JSON"), std::string::npos) << e;

  write_bytes(p.path, R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": "x"}, "merges": []}})");
  e = error_of([&] { load_hf_tokenizer(p.str()); });
  EXPECT_NE(e.find(": /model/vocab/b"), std::string::npos) << e;

  write_bytes(p.path, R"({"model": {"type": "WordPiece", "vocab": {}}})");
  e = error_of([&] { load_hf_tokenizer(p.str()); });
  EXPECT_NE(e.find(": /model/type: model type 'WordPiece' is not supported"), std::string::npos) << e;

  write_bytes(p.path, R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [7]}})");
  e = error_of([&] { load_hf_tokenizer(p.str()); });
  EXPECT_NE(e.find(": /model/merges/0"), std::string::npos) << e;

  write_bytes(p.path, R"j({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
      "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "a(?=b)"}, "behavior": "Isolated"}})j");
  e = error_of([&] { load_hf_tokenizer(p.str()); });
  EXPECT_NE(e.find(": /pre_tokenizer/pattern/Regex"), std::string::npos) << e;
  EXPECT_NE(e.find("lookaround"), std::string::npos) << e;

  write_bytes(p.path, R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
      "normalizer": {"type": "Lowercase"}})");
  e = error_of([&] { load_hf_tokenizer(p.str()); });
  EXPECT_NE(e.find(": /normalizer: normalizer 'Lowercase' is not supported"), std::string::npos) << e;
}

}  // namespace
}  // namespace lockstep
