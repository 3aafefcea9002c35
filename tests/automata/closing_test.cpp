// Length-aware closing: shortest completions against a breadth-first search over bytes
// with a fresh parser, and token budgets that random walks must end complete within, on
// the bundled vocabulary and on Llama 3's.
#include <deque>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/closing.h"
#include "automata/matcher.h"
#include "runtime/tokenizer.h"
#include "schemas/json_schema.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

std::shared_ptr<const GrammarAutomaton> gbnf_file(const std::string& name) {
  return GrammarAutomaton::compile(parse_gbnf(test_data::read_file(test_data::shared("grammars/llama.cpp/" + name))));
}

std::shared_ptr<const GrammarAutomaton> schema(const char* text) {
  return GrammarAutomaton::compile(compile_json_schema(nlohmann::ordered_json::parse(text)).grammar);
}

// All items of sets past `from`: two byte strings with equal keys lead to the same futures.
std::vector<uint32_t> configuration_key(const EarleyParser& p, size_t from) {
  std::vector<uint32_t> key;
  for (size_t k = from + 1; k <= p.num_bytes(); ++k) {
    for (const auto& it : p.items_at(k)) key.insert(key.end(), {it.state, it.origin});
    key.push_back(UINT32_MAX);
  }
  return key;
}

// The oracle: the fewest bytes after `prefix` that a fresh parser accepts, by breadth-first
// search over bytes (configurations seen before are not expanded again); SIZE_MAX past
// `limit` bytes or nodes.
size_t shortest_by_search(const GrammarAutomaton& g, const std::string& prefix, size_t limit) {
  std::deque<std::string> queue{""};
  std::set<std::vector<uint32_t>> seen;
  size_t nodes = 0;
  while (!queue.empty() && ++nodes < 200000) {
    const std::string s = queue.front();
    queue.pop_front();
    EarleyParser p(g);
    if (!p.advance(prefix + s)) continue;
    if (p.accepting()) return s.size();
    if (s.size() == limit) continue;
    for (int b = 0; b < 256; ++b) {
      if (!p.advance(static_cast<uint8_t>(b))) continue;
      if (seen.insert(configuration_key(p, prefix.size())).second) queue.push_back(s + static_cast<char>(b));
      p.rollback(1);
    }
  }
  return SIZE_MAX;
}

const Tokenizer& bundled() {
  static const auto tok = load_tokenizer(test_data::shared("models/stories260K/tok512.bin").string());
  return *tok;
}

const Tokenizer& llama3() {
  static const auto tok = load_tokenizer(test_data::shared("vocab/llama3-hf/tokenizer.json").string());
  return *tok;
}

TEST(Closing, ShortestCompletionsEqualBreadthFirstSearch) {
  std::mt19937 rng(99);
  const std::vector<std::shared_ptr<const GrammarAutomaton>> grammars = {
      gbnf_file("arithmetic.gbnf"), gbnf_file("list.gbnf"), gbnf_file("chess.gbnf"), gbnf_file("json.gbnf"),
      GrammarAutomaton::compile(parse_gbnf("root ::= \"ab\" x | \"c\" x \"d\" | y\nx ::= \"xyz\" | \"q\" | y y\ny ::= \"\" | \"(\" y \")\"")),
      GrammarAutomaton::compile(parse_gbnf("root ::= root \"+\" t | t\nt ::= [0-9] | \"(\" root \")\"")),
      schema(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"enum":["xy","z"]}},"required":["b","a"]})")};
  size_t checked = 0;
  for (const auto& g : grammars) {
    ClosingData data(*g, bundled().vocabulary());
    for (int walk = 0; walk < 12; ++walk) {
      EarleyParser p(*g);
      CompletionTracker tracker(*g, data);
      std::string prefix;
      for (int step = 0; step < 40; ++step) {
        const auto best = tracker.best(p);
        std::string text;
        ASSERT_TRUE(tracker.text(p, best, text));
        EXPECT_EQ(text.size(), best.bytes);
        EarleyParser fresh(*g);
        EXPECT_TRUE(fresh.advance(prefix + text) && fresh.accepting()) << prefix << " + " << text;
        if (best.bytes <= 5) {
          EXPECT_EQ(best.bytes, shortest_by_search(*g, prefix, 6)) << prefix;
          ++checked;
        }
        std::vector<uint8_t> next;
        for (int b = 0; b < 256; ++b) {
          if (p.advance(static_cast<uint8_t>(b))) {
            next.push_back(static_cast<uint8_t>(b));
            p.rollback(1);
          }
        }
        if (next.empty()) break;
        const uint8_t b = next[rng() % next.size()];
        p.advance(b);
        prefix.push_back(static_cast<char>(b));
        if (step % 7 == 6) {  // rollbacks must drop the tracker's tables of the undone sets
          const size_t n = 1 + rng() % prefix.size();
          p.rollback(n);
          tracker.truncate(p.num_bytes() + 1);
          prefix.resize(prefix.size() - n);
        }
      }
    }
  }
  std::printf("[ closing ] %zu shortest completions equal to breadth-first search\n", checked);
  EXPECT_GT(checked, 300u);
}

TEST(Closing, RecursionMakesTheConfigurationBoundInfinite) {
  ClosingData json(*gbnf_file("json.gbnf"), bundled().vocabulary());
  EXPECT_EQ(json.completions.max_configuration_bytes(), kNoCompletion);
  const auto flat = GrammarAutomaton::compile(parse_gbnf("root ::= \"<\" x x \">\"\nx ::= \"abc\" | \"d\" y\ny ::= \"efgh\""));
  ClosingData d(*flat, bundled().vocabulary());
  // Without recursion the bound is finite, and no configuration's shortest completion exceeds it.
  EarleyParser p(*flat);
  uint64_t longest = 0;
  CompletionTracker t(*flat, d);
  for (const std::string prefix : {"", "<", "<d", "<de", "<abc", "<abcd", "<abcde"}) {
    p.reset();
    ASSERT_TRUE(p.advance(prefix));
    longest = std::max(longest, t.best(p).bytes);
    t.truncate(0);
  }
  EXPECT_GE(d.completions.max_configuration_bytes(), longest);
  EXPECT_NE(d.completions.max_configuration_bytes(), kNoCompletion);
}

// A random walk under a budget that never ends by choice — end of generation only when
// nothing else is allowed, the worst case for closing: every step's mask allows something,
// min_tokens_to_accept fits what is left, and the walk ends with end of generation within
// the budget, on a text a fresh parser accepts.
// Returns whether the walk took the whole budget (the grammar may also end it earlier, when
// nothing but end of generation can follow).
bool budgeted_walk(const std::shared_ptr<TokenMaskCache>& cache, size_t extra, std::mt19937& rng, bool rollbacks) {
  const Vocabulary& v = cache->vocabulary();
  EarleyMatcher m(cache);
  const size_t need = m.min_tokens_to_accept() + m.eog_tokens();
  EXPECT_NE(m.min_tokens_to_accept(), SIZE_MAX);
  const size_t budget = need + extra;
  m.set_max_tokens(budget);
  std::vector<uint32_t> mask(v.bitmask_words());
  std::string text;
  std::vector<std::string> pieces;
  int rollbacks_left = rollbacks ? 3 : 0;
  while (!m.is_terminated()) {
    if (m.num_steps() >= budget) {
      ADD_FAILURE() << "the budget ran out before end of generation: " << text;
      return false;
    }
    EXPECT_LE(m.min_tokens_to_accept() + m.eog_tokens(), budget - m.num_steps()) << text;
    m.fill_next_token_bitmask(mask);
    std::vector<int32_t> allowed, eog;
    for (size_t id = 0; id < v.size(); ++id) {
      if ((mask[id / 32] >> (id % 32)) & 1) (v.is_eog(static_cast<int32_t>(id)) ? eog : allowed).push_back(static_cast<int32_t>(id));
    }
    if (allowed.empty()) allowed = eog;
    if (allowed.empty()) {
      ADD_FAILURE() << "dead end after " << m.num_steps() << " of " << budget << " tokens: " << text;
      return false;
    }
    const int32_t id = allowed[rng() % allowed.size()];
    EXPECT_TRUE(m.accept_token(id));
    pieces.emplace_back(v.is_eog(id) ? "" : v.token_bytes(id));
    text += pieces.back();
    if (rollbacks_left > 0 && m.num_steps() % 5 == 4 && !m.is_terminated()) {
      --rollbacks_left;
      const size_t n = 1 + rng() % m.num_steps();
      m.rollback(n);
      for (size_t i = 0; i < n; ++i) {
        text.resize(text.size() - pieces.back().size());
        pieces.pop_back();
      }
    }
  }
  EXPECT_LE(m.num_steps(), budget);
  EarleyParser fresh(cache->grammar());
  EXPECT_TRUE(fresh.advance(text) && fresh.accepting()) << text;
  return m.num_steps() == budget;
}

void budgeted_walks(const Tokenizer& tok, int walks_per_budget, bool rollbacks) {
  std::mt19937 rng(2026);
  const std::vector<std::shared_ptr<const GrammarAutomaton>> grammars = {
      gbnf_file("json.gbnf"), gbnf_file("list.gbnf"), gbnf_file("arithmetic.gbnf"), gbnf_file("chess.gbnf"),
      GrammarAutomaton::compile(parse_regex(R"([a-z]+@[a-z]+\.[a-z]{2,})")),
      schema(R"({"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"},"minItems":2},"n":{"type":"number","minimum":1}},"required":["name","tags","n"]})")};
  int walks = 0, whole_budget = 0;
  for (const auto& g : grammars) {
    auto cache = std::make_shared<TokenMaskCache>(g, tok.shared_vocabulary());
    for (const size_t extra : {0, 1, 3, 8, 20}) {
      for (int w = 0; w < walks_per_budget; ++w) {
        SCOPED_TRACE(g->grammar().rules[g->grammar().root].name + " budget +" + std::to_string(extra));
        whole_budget += budgeted_walk(cache, extra, rng, rollbacks);
        ++walks;
        if (testing::Test::HasFailure()) return;
      }
    }
  }
  std::printf("[ closing ] %d walks ended complete, %d of them at the last token of the budget\n", walks, whole_budget);
  EXPECT_GT(whole_budget, walks / 2);
}

TEST(Closing, BudgetedRandomWalksEndCompleteOnTheBundledVocabulary) { budgeted_walks(bundled(), 6, false); }
TEST(Closing, BudgetedRandomWalksWithRollbacksEndComplete) { budgeted_walks(bundled(), 3, true); }
TEST(Closing, BudgetedRandomWalksEndCompleteOnLlama3) { budgeted_walks(llama3(), 1, false); }

// The speller's fewest tokens against dynamic programming over a plain set of the tokens.
// The budget filter's result is kept per configuration for any budget: masks read from a
// cache that earlier walks under other budgets filled equal the masks of a new cache
// (nothing kept) replaying the same tokens, at every step.
TEST(Closing, KeptRestrictionsGiveTheMasksOfAFreshCache) {
  const Tokenizer& tok = bundled();
  const Vocabulary& v = tok.vocabulary();
  std::mt19937 rng(16);
  for (const auto& g : {gbnf_file("json.gbnf"), schema(R"({"type":"object","properties":{"name":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["name","tags"]})")}) {
    auto shared = std::make_shared<TokenMaskCache>(g, tok.shared_vocabulary());
    for (const size_t extra : {12, 3, 7, 0, 20, 1}) {
      EarleyMatcher m(shared);
      const size_t budget = m.min_tokens_to_accept() + m.eog_tokens() + extra;
      m.set_max_tokens(budget);
      std::vector<int32_t> history;
      std::vector<uint32_t> mask(v.bitmask_words()), fresh_mask(v.bitmask_words());
      while (!m.is_terminated() && m.num_steps() < budget) {
        m.fill_next_token_bitmask(mask);
        EarleyMatcher fresh(std::make_shared<TokenMaskCache>(g, tok.shared_vocabulary()));
        fresh.set_max_tokens(budget);
        for (int32_t id : history) ASSERT_TRUE(fresh.accept_token(id));
        fresh.fill_next_token_bitmask(fresh_mask);
        ASSERT_EQ(mask, fresh_mask) << "budget +" << extra << " after " << history.size() << " tokens";
        std::vector<int32_t> allowed;
        for (size_t id = 0; id < v.size(); ++id) {
          if ((mask[id / 32] >> (id % 32)) & 1) allowed.push_back(static_cast<int32_t>(id));
        }
        ASSERT_FALSE(allowed.empty());
        const int32_t id = allowed[rng() % allowed.size()];
        ASSERT_TRUE(m.accept_token(id));
        history.push_back(id);
      }
    }
  }
}

TEST(Closing, SpellerFindsTheFewestTokens) {
  std::mt19937 rng(8);
  for (const Tokenizer* tok : {&bundled(), &llama3()}) {
    const Vocabulary& v = tok->vocabulary();
    std::set<std::string> tokens;
    for (const int32_t id : v.sorted_text_tokens()) tokens.insert(std::string(v.token_bytes(id)));
    const TokenSpeller speller(v);
    EXPECT_TRUE(speller.spells_every_byte());
    for (int round = 0; round < 200; ++round) {
      std::string w;
      const int parts = 1 + static_cast<int>(rng() % 6);
      for (int k = 0; k < parts; ++k) {
        if (rng() % 4 == 0) {
          w.push_back(static_cast<char>(rng() % 256));
        } else {
          w += v.token_bytes(v.sorted_text_tokens()[rng() % v.sorted_text_tokens().size()]);
        }
      }
      std::vector<uint32_t> best(w.size() + 1, TokenSpeller::kCannot);
      best[0] = 0;
      for (size_t i = 0; i < w.size(); ++i) {
        if (best[i] == TokenSpeller::kCannot) continue;
        for (size_t len = 1; len <= std::min<size_t>(64, w.size() - i); ++len) {
          if (tokens.count(w.substr(i, len))) best[i + len] = std::min(best[i + len], best[i] + 1);
        }
      }
      EXPECT_EQ(speller.min_tokens(w), best[w.size()]) << w;
    }
  }
}

TEST(Closing, MinTokensToAcceptCountsTokensNotBytes) {
  const auto g = GrammarAutomaton::compile(parse_gbnf("root ::= \"{\\\"name\\\": \\\"\" [a-z]* \"\\\"}\""));
  auto cache = std::make_shared<TokenMaskCache>(g, llama3().shared_vocabulary());
  EarleyMatcher m(cache);
  // `{"name": ""}` is 12 bytes; Llama 3 spells it in far fewer tokens.
  EXPECT_LT(m.min_tokens_to_accept(), 8u);
  EXPECT_GT(m.min_tokens_to_accept(), 0u);
  ASSERT_TRUE(m.accept_bytes("{\"name\": \"ab"));
  EXPECT_EQ(m.min_tokens_to_accept(), 1u);  // "}  is one token
  ASSERT_TRUE(m.accept_bytes("\"}"));
  EXPECT_EQ(m.min_tokens_to_accept(), 0u);
  // With one token left, only end of generation.
  m.set_max_tokens(m.num_steps() + 1);
  std::vector<uint32_t> mask(cache->vocabulary().bitmask_words());
  m.fill_next_token_bitmask(mask);
  size_t allowed = 0;
  for (size_t id = 0; id < cache->vocabulary().size(); ++id) allowed += (mask[id / 32] >> (id % 32)) & 1;
  EXPECT_EQ(allowed, cache->vocabulary().eog_ids().size());
}

}  // namespace
}  // namespace lockstep
