// Walk segments found under the shorter cut signature (mask::kMidTokenBytes): the
// positions of a counted repeat closer than mask::kShortTokenBytes to its bound share the
// segments of their tokens of at most 8 bytes, and walk the longer ones. Every mask is
// checked against brute force on Llama 3 (whose tokens of 9 to 16 bytes are the ones the
// shorter cut leaves to walk).
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "automata/mask/shared_caches.h"
#include "tests/automata/brute_force_walks.h"

namespace lockstep {
namespace {

using namespace test_walks;

// Schemas and the texts their random walks start from (a walk meets positions at every
// distance from a repeat's bound when it starts at a group's first position, deep inside
// one, and after a few groups).
struct Case {
  const char* schema;
  std::vector<std::string> starts;
};

// Two random walks from each start of each case, every mask checked against brute force
// on Llama 3; `after` sees each case's cache. The number of masks checked.
size_t check_cases(const std::vector<Case>& cases, uint32_t seed,
                   const std::function<void(const Case&, const TokenMaskCache&)>& after) {
  const auto tok = llama3_tokenizer();
  const auto vocab = tok->shared_vocabulary();
  std::mt19937 rng(seed);
  JsonSchemaOptions o;
  size_t masks = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.schema);
    const auto g = schema_automaton(c.schema, o);
    auto cache = std::make_shared<TokenMaskCache>(g, vocab);
    for (const std::string& start : c.starts) {
      SCOPED_TRACE(start);
      for (int walk = 0; walk < 2; ++walk) {
        masks += check_random_walk(g, vocab, rng, 8, cache, false, tok->encode_continuation(start));
      }
    }
    after(c, *cache);
  }
  return masks;
}

// Path segments of up to 16 characters (the stress corpus's long patterns), whose positions
// share the shorter cut's segments; and dotted groups of up to 10 after a group of up to
// 12, where most positions find their short tokens under the longer cut already (a group's
// positions read alike across groups), for the masks of both.
TEST(MaskCut, CountedRepeatPositionsShareShortTokensAndEqualBruteForceOnLlama3) {
  static_assert(mask::kMidTokenBytes == 8 && mask::kShortTokenBytes == 16);
  const std::vector<Case> cases = {
      {R"({"type":"string","pattern":"^(/[A-Za-z_][A-Za-z0-9_]{0,15}){0,6}$"})",
       {"\"/", "\"/abcdefghij", "\"/ab/cd_e/", "\"/X"}},
      {R"({"type":"string","pattern":"^[a-z]{1,12}(\\.[a-z0-9]{1,10}){0,4}$"})", {"\"a", "\"abc.de", "\"ab.c1.d2."}},
  };
  size_t mid_segments = 0;
  const size_t masks = check_cases(cases, 1616, [&](const Case& c, const TokenMaskCache& cache) {
    if (&c == &cases[0]) {
      EXPECT_GT(cache.stats().mid_segments, 0u);
    }
    mid_segments += cache.stats().mid_segments;
  });
  std::printf("[ property ] counted repeats on llama3: %zu masks equal to brute force, %zu segments under the shorter cut\n",
              masks, mid_segments);
  EXPECT_GT(masks, 80u);
}

// Uniform runs: from a position of a counted repeat of a class, or a loop over one, a
// token whose bytes after the first are all of byte kinds the class holds whole, and no
// more of them than the positions left, is read whole without a step per byte. Classes
// that hold a kind in part (`[a-m]` of a-f and g-z, `[0-4]`, a range of UTF-8 lead bytes),
// bounds shorter and longer than tokens, a loop, and classes beside a call (a string's
// escapes) are all checked against brute force on Llama 3.
TEST(MaskCut, TokensReadWholeAlongClassRunsEqualBruteForceOnLlama3) {
  const std::vector<Case> cases = {
      {R"({"type":"string","pattern":"^[A-Za-z0-9_]{0,15}(-[A-Za-z0-9_]{1,3}){0,3}$"})", {"\"", "\"abcdefghijkl", "\"a-b"}},
      {R"({"type":"string","pattern":"^[a-m0-4]{1,9}[n-z]{0,2}$"})", {"\"", "\"abc", "\"ab12lm"}},
      {R"({"type":"string","pattern":"^[a-z]+\\.[a-z]{2,6}$"})", {"\"", "\"example"}},
      {R"({"type":"string","pattern":"^[\\w.%+-]{1,40}@[A-Za-z0-9.-]{1,20}$"})", {"\"", "\"first.last", "\"a@b"}},
      {R"({"type":"string","pattern":"^[à-ÿ]{0,4}[a-z]{0,3}$"})", {"\"", "\"é"}},
      {R"({"type":"string","maxLength":12})", {"\"", "\"abcdefgh"}},
  };
  size_t run_tokens = 0;
  const size_t masks =
      check_cases(cases, 1617, [&](const Case&, const TokenMaskCache& cache) { run_tokens += cache.stats().run_tokens; });
  std::printf("[ property ] class runs on llama3: %zu masks equal to brute force, %zu tokens read whole along runs\n",
              masks, run_tokens);
  EXPECT_GT(masks, 60u);
  EXPECT_GT(run_tokens, 10000u);
}

// The same runs in the trie walk of grammar states: a counted repeat that is a property's
// value (an object's rule reads it, then calls the rest of the object) starts its runs in
// a state of a rule with rule edges, which the table walk does not take. Checked against
// brute force on Llama 3, with a class that holds a kind in part and a fixed-length
// pattern of groups (a UUID), from the value's first position and from inside it.
TEST(MaskCut, TokensReadWholeAlongClassRunsInTheTrieWalkEqualBruteForceOnLlama3) {
  const std::vector<Case> cases = {
      {R"({"type":"object","properties":{"id":{"type":"string","pattern":"^[A-Za-z0-9]{15}$"},)"
       R"("name":{"type":"string","pattern":"^[a-m0-4 ]{1,20}$"}},"required":["id","name"],)"
       R"("additionalProperties":false})",
       {"{\"id\": \"", "{\"id\": \"SAVKB2", "{\"id\": \"SAVKB2UVwUTBQG", "{\"id\": \"SAVKB2UVwUTBQGJ\", \"name\": \"",
        "{\"id\": \"SAVKB2UVwUTBQGJ\", \"name\": \"ab c"}},
      {R"({"type":"object","properties":{"uuid":{"type":"string","pattern":)"
       R"("^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$"}},"required":["uuid"]})",
       {"{\"uuid\": \"", "{\"uuid\": \"01234567-89AB-", "{\"uuid\": \"01234567-89AB-CDEF-0123-4567"}},
  };
  size_t trie_run_tokens = 0;
  const size_t masks = check_cases(cases, 1618, [&](const Case&, const TokenMaskCache& cache) {
    trie_run_tokens += cache.stats().trie_run_tokens;
  });
  std::printf("[ property ] class runs in the trie walk on llama3: %zu masks equal to brute force, "
              "%zu tokens read whole\n", masks, trie_run_tokens);
  EXPECT_GT(masks, 60u);
  EXPECT_GT(trie_run_tokens, 10000u);
}

}  // namespace
}  // namespace lockstep
