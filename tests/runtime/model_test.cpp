// The bundled model: llama2.c's published greedy output, tokenizer round trips, and clear
// errors for malformed checkpoints and tokenizer files.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/errors.h"
#include "runtime/generator.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

const std::string kModelDir = test_data::shared("models/stories260K").string();

LoadedModel bundled() { return load_model(kModelDir); }

TEST(Model, GreedyDecodingReproducesLlama2cByteForByte) {
  GenerateOptions opt;
  opt.max_tokens = 200;
  opt.sampling.temperature = 0;
  const GenerateResult r = generate(bundled(), opt);
  const auto expected = nlohmann::json::parse(
      test_data::read_file(test_data::shared("models/stories260K/expected_greedy_200steps.ids.json")));
  EXPECT_EQ(r.tokens, expected["ids"].get<std::vector<int32_t>>());
  EXPECT_EQ(r.text, test_data::read_file(
                        test_data::shared("models/stories260K/expected_greedy_200steps.txt")));
  EXPECT_EQ(r.stop, StopReason::kMaxTokens);
  EXPECT_EQ(r.prompt_tokens, 1);
}

TEST(Model, MultiPositionForwardEqualsOneTokenAtATimeBitForBit) {
  const auto m = bundled();
  const std::vector<int32_t> ids = m.tokenizer->encode("Once upon a time, there was a little cat.", true);
  InferenceState one(m.model), many(m.model);
  std::vector<float> expected;
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto logits = one.forward(ids[i], static_cast<int32_t>(i));
    expected.assign(logits.begin(), logits.end());
  }
  // In two batches: the second attends to the KV cache the first wrote.
  const size_t half = ids.size() / 2;
  many.forward(std::span(ids).first(half), 0);
  const auto logits = many.forward(std::span(ids).subspan(half), static_cast<int32_t>(half));
  EXPECT_EQ(std::vector<float>(logits.begin(), logits.end()), expected);
  // And the next single step continues from the same cache.
  const auto next_many = many.forward(42, static_cast<int32_t>(ids.size()));
  const std::vector<float> after(next_many.begin(), next_many.end());
  const auto next_one = one.forward(42, static_cast<int32_t>(ids.size()));
  EXPECT_EQ(after, std::vector<float>(next_one.begin(), next_one.end()));
  EXPECT_THROW(many.forward(std::span<const int32_t>(), 0), std::invalid_argument);
  const std::vector<int32_t> past_end(3, 5);
  EXPECT_THROW(many.forward(past_end, one.context_length() - 2), std::out_of_range);
}

TEST(Model, ConfigFromTheHeader) {
  const auto m = bundled();
  const LlamaConfig& c = m.model->config();
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 172);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.seq_len, 512);
  // floats of the weights + the 7-int32 header + the RoPE tables (seq_len × head_size floats)
  EXPECT_EQ(m.model->parameter_count() * 4 + 28 + 512 * 8 * 4, 1056540u);
}

TEST(Tokenizer, Llama2cSemantics) {
  const auto m = bundled();
  const Tokenizer& tok = *m.tokenizer;
  EXPECT_EQ(tok.size(), 512u);
  EXPECT_EQ(tok.bos_id(), 1);
  EXPECT_EQ(tok.eos_id(), 2);
  EXPECT_TRUE(tok.vocabulary().is_eog(1));
  EXPECT_TRUE(tok.vocabulary().is_eog(2));
  EXPECT_TRUE(tok.vocabulary().is_control(0));
  EXPECT_EQ(tok.token_bytes(3 + 0x7B), "{");  // byte-fallback token <0x7B>
  EXPECT_EQ(tok.token_bytes(313), " \"");     // '▁' is a space in tokenizer.bin
  const auto ids = tok.encode("Once upon a time", true);
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(tok.token_bytes(ids[1]).substr(0, 2), " O");  // the dummy-prefix space
  // Decoding follows SentencePiece: the dummy space after BOS is dropped.
  for (const std::string s : {"Once upon a time", "Lily's mom said, \"Hi!\"", "{\"a\": [1, 2]}",
                              "naïve café — 日本 🙂", "  two  spaces\n\ttab"}) {
    EXPECT_EQ(tok.decode(tok.encode(s, true)), s) << s;
  }
}

struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& name, const std::string& bytes)
      : path(std::filesystem::temp_directory_path() / name) {
    std::ofstream(path, std::ios::binary) << bytes;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

TEST(Model, MalformedCheckpointsNameTheByteOffset) {
  const std::string good = test_data::read_file(test_data::shared("models/stories260K/stories260K.bin"));
  {
    TempFile f("lockstep_truncated.bin", good.substr(0, 500000));
    try {
      load_llama2c_model(f.path.string());
      ADD_FAILURE();
    } catch (const ModelFormatError& e) {
      EXPECT_EQ(e.offset(), 500000u);
      EXPECT_NE(std::string(e.what()).find("implies 1056540 bytes (truncated?)"), std::string::npos)
          << e.what();
    }
  }
  {
    TempFile f("lockstep_short.bin", good.substr(0, 10));
    EXPECT_THROW(load_llama2c_model(f.path.string()), ModelFormatError);
  }
  {
    std::string bad = good;
    bad[12] = 3;  // n_heads = 3 does not divide dim = 64
    TempFile f("lockstep_badheader.bin", bad);
    try {
      load_llama2c_model(f.path.string());
      ADD_FAILURE();
    } catch (const ModelFormatError& e) {
      EXPECT_EQ(e.offset(), 0u);
      EXPECT_NE(std::string(e.what()).find("n_heads must divide dim"), std::string::npos);
    }
  }
  {
    TempFile f("lockstep_toolong.bin", good + "xxxx");
    EXPECT_THROW(load_llama2c_model(f.path.string()), ModelFormatError);
  }
}

TEST(Tokenizer, MalformedTokenizerFilesNameTheByteOffset) {
  const std::string good = test_data::read_file(test_data::shared("models/stories260K/tok512.bin"));
  {
    TempFile f("lockstep_tok_truncated.bin", good.substr(0, 3000));
    try {
      load_llama2c_tokenizer(f.path.string(), 512);
      ADD_FAILURE();
    } catch (const TokenizerError& e) {
      EXPECT_NE(std::string(e.what()).find("byte offset"), std::string::npos) << e.what();
    }
  }
  {
    TempFile f("lockstep_tok_garbage.bin", std::string("\xff\xff\xff\xff garbage", 12));
    EXPECT_THROW(load_llama2c_tokenizer(f.path.string(), 512), TokenizerError);
  }
  EXPECT_THROW(load_llama2c_tokenizer("/nonexistent/tok.bin"), std::runtime_error);
}

// Byte-fallback pieces are "<0xHH>" exactly: a piece that only looks like one is text.
TEST(Tokenizer, OnlyTwoHexDigitsMakeAByteToken) {
  const std::vector<std::string> pieces = {"<unk>", "<s>", "</s>", "<0x41>", "<0x4a>", "<0x-D>", "<0x 1>", "<0xG1>"};
  const int32_t max_token_length = 8;
  std::string file(reinterpret_cast<const char*>(&max_token_length), 4);
  for (const std::string& p : pieces) {
    const float score = 0;
    const auto len = static_cast<int32_t>(p.size());
    file.append(reinterpret_cast<const char*>(&score), 4).append(reinterpret_cast<const char*>(&len), 4).append(p);
  }
  TempFile f("lockstep_tok_bytes.bin", file);
  const auto tok = load_llama2c_tokenizer(f.path.string(), static_cast<int32_t>(pieces.size()));
  EXPECT_EQ(tok->token_bytes(3), "A");
  EXPECT_EQ(tok->token_bytes(4), "J");
  for (int32_t id = 5; id < 8; ++id) EXPECT_EQ(tok->token_bytes(id), pieces[static_cast<size_t>(id)]);
}

TEST(Model, MissingFilesAreClearErrors) {
  EXPECT_THROW(load_model("/nonexistent/model.bin"), std::runtime_error);
  // A model folder without a tokenizer.
  const auto dir = std::filesystem::temp_directory_path() / "lockstep_no_tokenizer";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(test_data::shared("models/stories260K/stories260K.bin"),
                             dir / "stories260K.bin",
                             std::filesystem::copy_options::overwrite_existing);
  try {
    load_model(dir.string());
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no tokenizer beside the model"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
