// Hostile input files (tokenizers, models, grammars): each is a clear error naming the
// file and where, never a crash, a raw library exception or an unbounded allocation.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "runtime/errors.h"
#include "runtime/mapped_file.h"
#include "runtime/tokenizer.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// A fresh folder under the temp directory, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() : path(fs::temp_directory_path() / ("lockstep_hostile_" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(path / name, std::ios::binary) << bytes;
    return (path / name).string();
  }
};

// The message of the TokenizerError `fn` throws ("" when it throws none; the test fails when
// it throws anything else).
template <typename Fn>
std::string tokenizer_error(Fn fn) {
  try {
    fn();
  } catch (const TokenizerError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a TokenizerError: " << e.what();
    return e.what();
  }
  return "";
}

std::string hf_error(const std::string& json_text) {
  TempDir dir;
  const std::string path = dir.write("tokenizer.json", json_text);
  return tokenizer_error([&] { load_hf_tokenizer(path); });
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(HostileTokenizer, HugeTokenIdIsRejectedWithItsPointerAndTheLimit) {
  const std::string e = hf_error(R"({"model": {"type": "BPE", "vocab": {"a": 16777216}, "merges": []}})");
  EXPECT_TRUE(contains(e, "tokenizer.json: /model/vocab/a: token id 16777216")) << e;
  EXPECT_TRUE(contains(e, "maximum vocabulary size is 2097152")) << e;
  const std::string u = hf_error(R"({"model": {"type": "BPE", "vocab": {"a": 18446744073709551615}, "merges": []}})");
  EXPECT_TRUE(contains(u, "/model/vocab/a: token id 18446744073709551615")) << u;
  const std::string added = hf_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
      "added_tokens": [{"id": 3000000, "content": "<x>"}]})");
  EXPECT_TRUE(contains(added, "/added_tokens/0/id: token id 3000000")) << added;
}

TEST(HostileTokenizer, SparseIdsAreRejected) {
  // Under the maximum, but two entries cannot claim a million ids.
  const std::string e = hf_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b~/": 1000000}, "merges": []}})");
  EXPECT_TRUE(contains(e, "/model/vocab/b~0~1: token id 1000000 leaves the vocabulary mostly holes")) << e;
  // A few holes are fine.
  EXPECT_EQ(hf_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1000}, "merges": []}})"), "");
}

TEST(HostileTokenizer, WrongTypesNameTheFileAndPointer) {
  struct Case {
    const char* json;
    const char* expected;
  };
  const Case cases[] = {
      {R"({"model": {"type": "BPE", "vocab": [1, 2], "merges": []}})", "/model/vocab: the vocabulary has the wrong type"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [1, 2]}})", "/model/merges/0: a merge is"},
      {R"({"model": {"type": "BPE", "vocab": {"a": "0"}, "merges": []}})", "/model/vocab/a: a token id must be"},
      {R"({"model": {"type": 7, "vocab": {"a": 0}, "merges": []}})", "/model/type: expected a string, found number"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "byte_fallback": "yes"}})",
       "/model/byte_fallback: expected a boolean"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "normalizer": [1]})",
       "/normalizer: expected an object, found array"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
          "normalizer": {"type": "Sequence", "normalizers": [{"type": "Replace", "pattern": "x"}]}})",
       "/normalizer/normalizers/0/pattern: expected an object"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
          "pre_tokenizer": {"type": "Split", "pattern": {"Regex": 5}, "behavior": "Isolated"}})",
       "/pre_tokenizer/pattern/Regex: expected a string"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "added_tokens": {"x": 1}})",
       "/added_tokens: expected an array"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "added_tokens": [{"id": 1, "content": "<x>", "special": 1}]})",
       "/added_tokens/0/special: expected a boolean"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
          "post_processor": {"type": "TemplateProcessing", "single": "x"}})",
       "/post_processor/single: expected an array"},
      {R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
          "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": 1}}]}})",
       "/post_processor/single/0/SpecialToken/id: expected a string"},
  };
  for (const Case& c : cases) {
    const std::string e = hf_error(c.json);
    EXPECT_TRUE(contains(e, "tokenizer.json: ")) << e;
    EXPECT_TRUE(contains(e, c.expected)) << c.json << "\n" << e;
  }
}

TEST(HostileTokenizer, DeeplyNestedSequencesAreRejected) {
  std::string nz;
  for (int i = 0; i < 100000; ++i) nz += R"({"type": "Sequence", "normalizers": [)";
  nz += R"({"type": "NFC"})";
  for (int i = 0; i < 100000; ++i) nz += "]}";
  const std::string e = hf_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "normalizer": )" + nz + "}");
  EXPECT_TRUE(contains(e, "nested more than 16 deep")) << e.substr(0, 300);
}

TEST(HostileTokenizer, TokenizerConfigOfTheWrongShapeNamesItsFile) {
  TempDir dir;
  const std::string path = dir.write("tokenizer.json", R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})");
  dir.write("tokenizer_config.json", R"(["not", "an", "object"])");
  const std::string e = tokenizer_error([&] { load_hf_tokenizer(path); });
  EXPECT_TRUE(contains(e, "tokenizer_config.json: (root): expected an object, found array")) << e;
}

TEST(HostileTokenizer, Gpt2VocabularyIdsAreBoundedToo) {
  TempDir dir;
  const std::string enc = dir.write("encoder.json", R"({"a": 0, "~b": 16777216})");
  const std::string bpe = dir.write("vocab.bpe", "#version: 0.2\n");
  const std::string e = tokenizer_error([&] { load_gpt2_tokenizer(enc, bpe); });
  EXPECT_TRUE(contains(e, "encoder.json: /~0b: token id 16777216")) << e;
  dir.write("encoder.json", R"({"a": [0]})");
  const std::string t = tokenizer_error([&] { load_gpt2_tokenizer(enc, bpe); });
  EXPECT_TRUE(contains(t, "encoder.json: /a: a token id must be a non-negative integer, found array")) << t;
}

TEST(HostileFiles, ReadingStopsAtTheLimit) {
  try {
    read_file("/dev/zero");
    FAIL() << "/dev/zero was read";
  } catch (const FileFormatError& e) {
    EXPECT_STREQ(e.what(), "/dev/zero: file larger than the 64 MiB limit (raise it with --limit source_bytes=N)");
  }
  TempDir dir;
  const std::string path = dir.write("big.gbnf", std::string(2000, 'x'));
  EXPECT_EQ(read_file(path, 2000).size(), 2000u);
  try {
    read_file(path, 1999);
    FAIL() << "read past the limit";
  } catch (const FileFormatError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": file larger than the 1999-byte limit");
  }
}

}  // namespace
}  // namespace lockstep
