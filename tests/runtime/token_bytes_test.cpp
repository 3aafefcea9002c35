// What the grammar engine sees of real vocabularies: exact token bytes, control tokens,
// end-of-generation ids; and round trips over real JSON documents.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/tokenizer.h"
#include "grammar/unicode.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

std::shared_ptr<const Tokenizer> load(const std::string& rel) {
  return load_tokenizer(test_data::shared("vocab/" + rel).string());
}

int32_t id_of_bytes(const Tokenizer& t, std::string_view bytes) {
  for (size_t id = 0; id < t.size(); ++id) {
    if (!t.vocabulary().is_control(static_cast<int32_t>(id)) && t.token_bytes(static_cast<int32_t>(id)) == bytes) {
      return static_cast<int32_t>(id);
    }
  }
  return -1;
}

TEST(TokenBytes, Llama3ByteLevelTokensUnmapToBytes) {
  const auto t = load("llama3-hf/tokenizer.json");
  EXPECT_EQ(t->size(), 128256u);
  EXPECT_EQ(t->token_bytes(9906), "Hello");
  EXPECT_EQ(t->token_bytes(1917), " world");   // "Ġworld"
  EXPECT_EQ(t->token_bytes(198), "\n");        // "Ċ"
  EXPECT_EQ(t->token_bytes(11410), " \xF0\x9F");  // a space and part of a code point
  EXPECT_TRUE(t->vocabulary().is_control(128000));  // <|begin_of_text|>
  EXPECT_TRUE(t->vocabulary().is_eog(128001));      // <|end_of_text|>
  EXPECT_TRUE(t->vocabulary().is_eog(128009));      // <|eot_id|>
  EXPECT_FALSE(t->vocabulary().is_eog(128000));
  EXPECT_EQ(t->bos_id(), 128000);
  // Every byte is some token: any text can be produced.
  for (int b = 0; b < 256; ++b) EXPECT_GE(id_of_bytes(*t, std::string(1, static_cast<char>(b))), 0) << b;
}

TEST(TokenBytes, QwenAddedTokens) {
  const auto t = load("qwen3-hf/tokenizer.json");
  EXPECT_EQ(t->size(), 151669u);
  EXPECT_TRUE(t->vocabulary().is_eog(151645));   // <|im_end|>
  EXPECT_TRUE(t->vocabulary().is_eog(151643));   // <|endoftext|>
  EXPECT_FALSE(t->vocabulary().is_control(151667));  // <think> is not special: it is text
  EXPECT_EQ(t->token_bytes(151667), "<think>");
  EXPECT_FALSE(t->adds_bos());
}

TEST(TokenBytes, SentencePieceSpacesAndByteTokens) {
  const auto t = load("llama.cpp-ggml-vocab/ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(t->token_bytes(3 + 0x0A), "\n");  // <0x0A>
  EXPECT_EQ(t->token_bytes(15043), " Hello");  // ▁Hello
  EXPECT_TRUE(t->vocabulary().is_control(0));  // <unk>
  EXPECT_TRUE(t->vocabulary().is_eog(2));
  EXPECT_TRUE(t->adds_bos());
  EXPECT_EQ(t->encode("Hello", true), (std::vector<int32_t>{1, 15043}));
}

TEST(TokenBytes, ContinuationsHaveNoDummyPrefix) {
  for (const char* f : {"llama.cpp-ggml-vocab/ggml-vocab-llama-spm.gguf", "llama2/tokenizer.bin",
                        "llama3-hf/tokenizer.json"}) {
    const auto t = load(f);
    for (const std::string s : {"{\"a\": 1}", " leading space", "x"}) {
      std::string bytes;
      for (int32_t id : t->encode_continuation(s)) bytes += t->token_bytes(id);
      EXPECT_EQ(bytes, s) << f;
    }
  }
}

TEST(TokenBytes, Gpt2Files) {
  const auto t = load("gpt2/encoder.json");
  EXPECT_EQ(t->size(), 50257u);
  EXPECT_TRUE(t->vocabulary().is_eog(50256));
  EXPECT_EQ(t->token_bytes(t->encode(" hello", false).at(0)), " hello");
}

// decode(encode(s)) == s for the text of every valid instance in JSONSchemaBench, serialized
// compactly with UTF-8 kept. Qwen's tokenizer NFC-normalizes its input (as the HF
// tokenizer does), so for Qwen the round trip gives NFC(s): s itself for NFC text.
TEST(TokenBytes, RoundTripEveryJsonSchemaBenchDocument) {
  const auto llama3 = load("llama3-hf/tokenizer.json");
  const auto qwen = load("qwen3-hf/tokenizer.json");
  size_t docs = 0, bytes = 0, not_nfc = 0;
  for (const auto& dir : std::filesystem::directory_iterator(test_data::shared("schemas/jsonschemabench"))) {
    if (!dir.is_directory()) continue;
    for (const auto& file : test_data::files_with_suffix(dir.path(), ".json")) {
      const auto j = nlohmann::json::parse(test_data::read_file(file), nullptr, false);
      if (j.is_discarded() || !j.contains("tests")) continue;
      for (const auto& t : j["tests"]) {
        if (!t.value("valid", false)) continue;
        const std::string text = t["data"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        ASSERT_EQ(llama3->decode(llama3->encode(text, false)), text) << file;
        const std::string nfc = unicode::nfc(text);
        not_nfc += nfc != text;
        ASSERT_EQ(qwen->decode(qwen->encode(text, false)), nfc) << file;
        ++docs;
        bytes += text.size();
      }
    }
  }
  RecordProperty("documents", static_cast<int>(docs));
  std::printf("[ roundtrip] %zu documents, %zu bytes, Llama 3 and Qwen3 (%zu not in NFC)\n", docs,
              bytes, not_nfc);
  EXPECT_GT(docs, 10000u);
  EXPECT_LE(not_nfc, 1u);  // one document of the development split (Github_easy o36272)
}

}  // namespace
}  // namespace lockstep
