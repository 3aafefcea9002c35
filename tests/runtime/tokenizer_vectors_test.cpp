// llama.cpp's tokenizer test vectors (tests/test-tokenizer-0 data, generated with each
// model's Hugging Face tokenizer): encode(inp) must equal out for every string, and
// decode(encode(s)) must give s back.
#include <cstdio>
#include <ostream>

#include <gtest/gtest.h>

#include "runtime/tokenizer.h"
#include "runtime/vocab_tokenizer.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

struct VectorCase {
  std::string name;       // ggml-vocab-<name>.gguf.inp / .out
  std::string tokenizer;  // file under ../shared/vocab
};

// Printed by ctest next to each case's name.
void PrintTo(const VectorCase& c, std::ostream* os) { *os << c.name << " (" << c.tokenizer << ")"; }

std::vector<std::pair<std::string, std::vector<int32_t>>> read_vectors(const std::string& name) {
  const auto dir = test_data::shared("vocab/llama.cpp-ggml-vocab");
  std::string inp = test_data::read_file(dir / ("ggml-vocab-" + name + ".gguf.inp"));
  const std::string out = test_data::read_file(dir / ("ggml-vocab-" + name + ".gguf.out"));
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  size_t pos = 0;
  while (pos < inp.size()) {
    const size_t hit = inp.find(sep, pos);
    if (hit == std::string::npos) {
      texts.push_back(inp.substr(pos));
      break;
    }
    texts.push_back(inp.substr(pos, hit - pos));
    pos = hit + sep.size();
  }
  std::vector<std::vector<int32_t>> ids;
  pos = 0;
  while (pos < out.size()) {
    size_t end = out.find('\n', pos);
    if (end == std::string::npos) end = out.size();
    std::vector<int32_t> line;
    const char* p = out.data() + pos;
    const char* e = out.data() + end;
    while (p < e) {
      char* next;
      const long v = std::strtol(p, &next, 10);
      if (next == p) break;
      line.push_back(static_cast<int32_t>(v));
      p = next;
    }
    ids.push_back(std::move(line));
    pos = end + 1;
  }
  EXPECT_EQ(texts.size(), ids.size()) << name;
  std::vector<std::pair<std::string, std::vector<int32_t>>> cases;
  for (size_t i = 0; i < std::min(texts.size(), ids.size()); ++i) cases.emplace_back(texts[i], ids[i]);
  return cases;
}

std::string show(const std::vector<int32_t>& v) {
  std::string s;
  for (int32_t x : v) s += " " + std::to_string(x);
  return s;
}

class TokenizerVectors : public testing::TestWithParam<VectorCase> {};

TEST_P(TokenizerVectors, EncodeMatchesAndDecodeRoundTrips) {
  const VectorCase& c = GetParam();
  const auto tok = load_tokenizer(test_data::shared("vocab/" + c.tokenizer).string());
  const auto cases = read_vectors(c.name);
  size_t passed = 0, round_trips = 0;
  for (const auto& [text, expected] : cases) {
    const std::vector<int32_t> got = tok->encode(text, /*add_bos=*/false);
    if (got == expected) {
      ++passed;
    } else {
      ADD_FAILURE() << c.name << ": '" << text << "'\n  expected" << show(expected) << "\n  got     " << show(got);
    }
    if (tok->decode(got) == text) ++round_trips;
  }
  std::printf("[ vectors  ] %-16s %-50s %zu / %zu encoded exactly, %zu / %zu round trips\n",
              c.name.c_str(), c.tokenizer.c_str(), passed, cases.size(), round_trips, cases.size());
  RecordProperty("passed", static_cast<int>(passed));
  RecordProperty("total", static_cast<int>(cases.size()));
  EXPECT_EQ(passed, cases.size());
  EXPECT_EQ(round_trips, cases.size());
}

INSTANTIATE_TEST_SUITE_P(
    LlamaCpp, TokenizerVectors,
    testing::Values(VectorCase{"llama-spm", "llama.cpp-ggml-vocab/ggml-vocab-llama-spm.gguf"},
                    VectorCase{"gpt-2", "llama.cpp-ggml-vocab/ggml-vocab-gpt-2.gguf"},
                    VectorCase{"falcon", "llama.cpp-ggml-vocab/ggml-vocab-falcon.gguf"},
                    VectorCase{"deepseek-llm", "llama.cpp-ggml-vocab/ggml-vocab-deepseek-llm.gguf"},
                    VectorCase{"deepseek-coder", "llama.cpp-ggml-vocab/ggml-vocab-deepseek-coder.gguf"},
                    VectorCase{"mpt", "llama.cpp-ggml-vocab/ggml-vocab-mpt.gguf"},
                    VectorCase{"starcoder", "llama.cpp-ggml-vocab/ggml-vocab-starcoder.gguf"},
                    VectorCase{"refact", "llama.cpp-ggml-vocab/ggml-vocab-refact.gguf"},
                    VectorCase{"phi-3", "llama.cpp-ggml-vocab/ggml-vocab-phi-3.gguf"},
                    VectorCase{"llama-bpe", "llama3-hf/tokenizer.json"},
                    VectorCase{"qwen2", "qwen3-hf/tokenizer.json"},
                    VectorCase{"gpt-2", "gpt2/encoder.json"},
                    VectorCase{"llama-spm", "llama2/tokenizer.bin"}),
    [](const testing::TestParamInfo<VectorCase>& info) {
      std::string n = info.param.name + "_" + std::to_string(info.index);
      for (char& ch : n) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

// gpt-neox and baichuan ship as GGUF without test vectors, and vocab/llama2/hf/tokenizer.json
// is not Llama 2's vocabulary ('▁' is id 28705 there, 29871 in Llama 2): they must load,
// and round-trip every test string.
TEST(TokenizerFiles, VocabulariesWithoutVectorsRoundTrip) {
  const auto strings = read_vectors("llama-bpe");
  for (const char* file : {"llama.cpp-ggml-vocab/ggml-vocab-gpt-neox.gguf",
                           "llama.cpp-ggml-vocab/ggml-vocab-baichuan.gguf", "llama2/hf/tokenizer.json"}) {
    const std::string name = file;
    const auto tok = load_tokenizer(test_data::shared("vocab/" + name).string());
    EXPECT_GE(tok->size(), 32000u);
    for (const auto& [text, ids] : strings) {
      EXPECT_EQ(tok->decode(tok->encode(text, false)), text) << name << ": " << text;
    }
  }
}

TEST(TokenizerFiles, BertWordPieceIsDeclaredUnsupported) {
  try {
    load_tokenizer(test_data::shared("vocab/llama.cpp-ggml-vocab/ggml-vocab-bert-bge.gguf").string());
    ADD_FAILURE();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer model 'bert' is not supported"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lockstep
