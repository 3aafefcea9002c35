// tests/automata/brute_force_walks.h — masks checked against brute force (each token's bytes
// fed to a parser in the same state) along random legal walks: the helpers of the mask
// property tests.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "automata/matcher.h"
#include "runtime/tokenizer.h"
#include "schemas/json_schema.h"
#include "tests/test_data.h"

namespace lockstep::test_walks {

// A parser fed the accepted history, then each token's bytes (and rolled back).
inline std::vector<uint32_t> brute_force_mask(const GrammarAutomaton& g, const Vocabulary& v,
                                              const std::string& history, bool terminated) {
  std::vector<uint32_t> mask(v.bitmask_words(), 0);
  if (terminated) return mask;
  EarleyParser p(g);
  if (!p.advance(history)) ADD_FAILURE() << "history rejected";
  for (size_t id = 0; id < v.size(); ++id) {
    const auto i = static_cast<int32_t>(id);
    bool ok;
    if (v.is_eog(i)) {
      ok = p.accepting();
    } else if (v.is_control(i) || v.token_bytes(i).empty()) {
      ok = false;
    } else {
      ok = p.advance(v.token_bytes(i));
      if (ok) p.rollback(v.token_bytes(i).size());
    }
    if (ok) mask[id / 32] |= 1u << (id % 32);
  }
  return mask;
}

// Llama 3's tokenizer (the shared vocabulary in place).
inline std::unique_ptr<Tokenizer> llama3_tokenizer() {
  return load_tokenizer(test_data::shared("vocab/llama3-hf/tokenizer.json").string());
}

// The grammar automaton of a JSON Schema given as text.
inline std::shared_ptr<const GrammarAutomaton> schema_automaton(const std::string& text, const JsonSchemaOptions& o) {
  return GrammarAutomaton::compile(compile_json_schema(nlohmann::ordered_json::parse(text), o).grammar);
}

// Random legal walk of `steps` masks (with random rollbacks), each checked against brute
// force; the number of masks checked.
// With `cache`, the walk shares it (and its configuration masks) with earlier walks; with
// !rollbacks it only moves forward (to reach deep into long strings); `start` is accepted
// first, unchecked.
inline size_t check_random_walk(const std::shared_ptr<const GrammarAutomaton>& g,
                                const std::shared_ptr<const Vocabulary>& vocab, std::mt19937& rng, int max_steps,
                                std::shared_ptr<TokenMaskCache> cache = nullptr, bool rollbacks = true,
                                const std::vector<int32_t>& start = {}) {
  if (!cache) cache = std::make_shared<TokenMaskCache>(g, vocab);
  EarleyMatcher m(cache);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  std::vector<std::string> steps;  // bytes of each accepted step
  for (const int32_t id : start) {  // accepted unchecked
    EXPECT_TRUE(m.accept_token(id));
    steps.emplace_back(vocab->token_bytes(id));
  }
  size_t masks = 0;
  for (int step = 0; step < max_steps; ++step) {
    m.fill_next_token_bitmask(mask);
    std::string history;
    for (const auto& s : steps) history += s;
    EXPECT_EQ(mask, brute_force_mask(*g, *vocab, history, m.is_terminated())) << "step " << step << " after " << history;
    if (testing::Test::HasFailure()) return masks;
    ++masks;
    std::vector<int32_t> allowed;
    for (size_t id = 0; id < vocab->size(); ++id) {
      if ((mask[id / 32] >> (id % 32)) & 1) allowed.push_back(static_cast<int32_t>(id));
    }
    if (allowed.empty()) break;
    const int32_t pick = allowed[rng() % allowed.size()];
    EXPECT_TRUE(m.accept_token(pick));
    steps.emplace_back(vocab->is_eog(pick) ? "" : std::string(vocab->token_bytes(pick)));
    if (rollbacks && step % 3 == 2) {
      const size_t n = 1 + rng() % m.num_steps();
      m.rollback(n);
      steps.resize(steps.size() - n);
    }
  }
  return masks;
}

}  // namespace lockstep::test_walks
