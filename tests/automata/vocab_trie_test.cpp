// The vocabulary as a trie: a token's subtree range holds exactly the tokens that start
// with it (by prefix, not by substring), on real vocabularies.
#include <gtest/gtest.h>

#include "runtime/tokenizer.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

size_t sorted_position(const Vocabulary& v, std::string_view bytes) {
  const auto sorted = v.sorted_text_tokens();
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (v.token_bytes(sorted[i]) == bytes) return i;
  }
  return SIZE_MAX;
}

// Counts the runs looked up in `runs`, and in `long_runs` those of more than
// Vocabulary::kScannedRun tokens (their end read from the vocabulary's table; the others'
// from the common prefixes that follow).
void expect_exact_subtrees(const Vocabulary& v, size_t& runs, size_t& long_runs) {
  const auto sorted = v.sorted_text_tokens();
  const auto end = [&v](size_t i) { return v.sorted_subtree_end(i); };
  for (size_t i = 0; i < sorted.size(); ++i) {
    const std::string_view t = v.token_bytes(sorted[i]);
    ASSERT_GT(end(i), i);
    // Every token inside starts with t; the first one after does not.
    ASSERT_EQ(v.token_bytes(sorted[end(i) - 1]).substr(0, t.size()), t);
    if (end(i) < sorted.size()) {
      ASSERT_NE(v.token_bytes(sorted[end(i)]).substr(0, t.size()), t) << i;
    }
    // The run of every prefix of t ends where the first token without that prefix is.
    for (size_t n = 1; n <= t.size(); ++n) {
      const size_t run_end = v.sorted_prefix_end(i, n);
      ++runs;
      long_runs += run_end - i > Vocabulary::kScannedRun ? 1 : 0;
      ASSERT_GT(run_end, i);
      ASSERT_EQ(v.token_bytes(sorted[run_end - 1]).substr(0, n), t.substr(0, n)) << i << " " << n;
      if (run_end < sorted.size()) {
        ASSERT_NE(v.token_bytes(sorted[run_end]).substr(0, n), t.substr(0, n)) << i << " " << n;
      }
    }
  }
}

// The runs by first byte partition the sorted vocabulary in byte order.
void expect_first_byte_runs(const Vocabulary& v) {
  const auto sorted = v.sorted_text_tokens();
  EXPECT_EQ(v.sorted_first_byte_begin(0), 0u);
  EXPECT_EQ(v.sorted_first_byte_begin(256), sorted.size());
  for (unsigned b = 0; b < 256; ++b) {
    ASSERT_LE(v.sorted_first_byte_begin(b), v.sorted_first_byte_begin(b + 1));
    for (size_t i = v.sorted_first_byte_begin(b); i < v.sorted_first_byte_begin(b + 1); ++i) {
      ASSERT_EQ(static_cast<uint8_t>(v.token_bytes(sorted[i])[0]), b) << i;
    }
  }
}

TEST(VocabTrie, Llama3SubtreesAreByPrefix) {
  const auto tok = load_tokenizer(test_data::shared("vocab/llama3-hf/tokenizer.json").string());
  const Vocabulary& v = tok->vocabulary();
  const auto sorted = v.sorted_text_tokens();
  const auto end = [&v](size_t i) { return v.sorted_subtree_end(i); };
  for (const auto& [parent, other] : {std::pair<std::string, std::string>{"luk", "luluk"},
                                      {"\r\n", "\r\r\n"}}) {
    const size_t p = sorted_position(v, parent);
    const size_t o = sorted_position(v, other);
    ASSERT_NE(p, SIZE_MAX) << parent;
    ASSERT_NE(o, SIZE_MAX) << other;
    EXPECT_FALSE(o >= p && o < end(p)) << "'" << parent << "' must not cover '" << other << "'";
    for (size_t k = p; k < end(p); ++k) {
      EXPECT_EQ(v.token_bytes(sorted[k]).substr(0, parent.size()), parent);
    }
  }
  size_t runs = 0, long_runs = 0;
  expect_exact_subtrees(v, runs, long_runs);
  // Both ways of finding a run's end were checked, many times each.
  EXPECT_GT(long_runs, 1000u);
  EXPECT_GT(runs - long_runs, 1000u);
  expect_first_byte_runs(v);
}

// The text tokens' bitmask holds exactly the sorted text tokens: not the control tokens, not
// the empty ones, nothing past the vocabulary.
TEST(VocabTrie, TextTokenBitsAreTheSortedTextTokens) {
  for (const char* f : {"llama3-hf/tokenizer.json", "llama2/tokenizer.bin"}) {
    SCOPED_TRACE(f);
    const auto tok = load_tokenizer(test_data::shared(std::string("vocab/") + f).string());
    const Vocabulary& v = tok->vocabulary();
    const auto bits = v.text_token_bits();
    ASSERT_EQ(bits.size(), v.bitmask_words());
    std::vector<char> text(v.size(), 0);
    for (const int32_t id : v.sorted_text_tokens()) text[static_cast<size_t>(id)] = 1;
    size_t controls = 0;
    for (size_t id = 0; id < v.size(); ++id) {
      ASSERT_EQ(test_bit(bits, id), text[id] != 0) << id;
      controls += v.is_control(static_cast<int32_t>(id)) ? 1 : 0;
    }
    EXPECT_GT(controls, 0u);
    EXPECT_EQ(count_bits(bits), v.sorted_text_tokens().size());
  }
}

// Byte kinds split the bytes into runs that classes rarely cut (a class of whole kinds is
// found per token by one load of its rest's kinds), and each sorted token's rest kinds are
// those of its bytes after the first.
TEST(VocabTrie, RestKindsAreTheKindsOfEachTokensBytesAfterItsFirst) {
  for (unsigned b = 0; b < 256; ++b) {
    const uint32_t k = Vocabulary::byte_kind(static_cast<uint8_t>(b));
    ASSERT_EQ(k & (k - 1), 0u) << b;  // one kind each
    ASSERT_NE(k, 0u) << b;
  }
  auto same = [](char a, char b) {
    return Vocabulary::byte_kind(static_cast<uint8_t>(a)) == Vocabulary::byte_kind(static_cast<uint8_t>(b));
  };
  EXPECT_TRUE(same('a', 'f'));
  EXPECT_FALSE(same('f', 'g'));
  EXPECT_TRUE(same('g', 'z'));
  EXPECT_TRUE(same('0', '9'));
  EXPECT_FALSE(same('9', 'A'));
  EXPECT_FALSE(same('_', '-'));
  EXPECT_FALSE(same('"', '\\'));
  EXPECT_FALSE(same('\x7f', '~'));
  EXPECT_FALSE(same('\x80', '\xc2'));
  for (const char* f : {"llama3-hf/tokenizer.json", "llama2/tokenizer.bin"}) {
    SCOPED_TRACE(f);
    const auto tok = load_tokenizer(test_data::shared(std::string("vocab/") + f).string());
    const Vocabulary& v = tok->vocabulary();
    const auto kinds = v.sorted_rest_kinds();
    ASSERT_EQ(kinds.size(), v.sorted_text_tokens().size());
    const uint32_t lower = Vocabulary::byte_kind('a') | Vocabulary::byte_kind('z');
    size_t lower_rests = 0;
    for (size_t i = 0; i < kinds.size(); ++i) {
      const std::string_view bytes = v.sorted_bytes(i);
      uint32_t expected = 0;
      for (size_t k = 1; k < bytes.size(); ++k) expected |= Vocabulary::byte_kind(static_cast<uint8_t>(bytes[k]));
      ASSERT_EQ(kinds[i], expected) << i;
      lower_rests += expected != 0 && (expected & ~lower) == 0;
    }
    EXPECT_GT(lower_rests, kinds.size() / 10);  // many tokens go on in lowercase letters only
  }
}

TEST(VocabTrie, EveryVocabularyHasExactSubtrees) {
  for (const char* f : {"llama2/tokenizer.bin", "qwen3-hf/tokenizer.json", "gpt2/encoder.json"}) {
    SCOPED_TRACE(f);
    const auto tok = load_tokenizer(test_data::shared(std::string("vocab/") + f).string());
    size_t runs = 0, long_runs = 0;
    expect_exact_subtrees(tok->vocabulary(), runs, long_runs);
    expect_first_byte_runs(tok->vocabulary());
  }
}

}  // namespace
}  // namespace lockstep
