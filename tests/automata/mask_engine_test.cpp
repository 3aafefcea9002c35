// The mask engine's parts: token sets, the per-state cache, jump-forward, batch filling,
// XGrammar's EBNF cases, and pathological grammars that must end within limits.
#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/mask/suffix_groups.h"
#include "automata/matcher.h"
#include "schemas/json_schema.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

std::shared_ptr<const GrammarAutomaton> compile(const std::string& gbnf) {
  return GrammarAutomaton::compile(parse_gbnf(gbnf));
}

std::shared_ptr<const Vocabulary> small_vocab(std::vector<std::string> tokens) {
  tokens.insert(tokens.begin(), "</s>");
  std::vector<TokenKind> kinds(tokens.size(), TokenKind::kText);
  return std::make_shared<Vocabulary>(tokens, kinds, std::vector<int32_t>{0});
}

// `first`, then every two-letter token and the three-letter ones ending in a to h: more than
// 4,096 tokens, where network signatures are used.
std::vector<std::string> letter_tokens(std::vector<std::string> first) {
  for (char a = 'a'; a <= 'z'; ++a) {
    for (char b = 'a'; b <= 'z'; ++b) {
      first.push_back({a, b});
      for (char c = 'a'; c <= 'h'; ++c) first.push_back({a, b, c});
    }
  }
  return first;
}

// group_by_suffix against a plain reference (a map from suffix to its set of tokens): suffixes
// sorted bytewise (sharing their first 8 bytes or not, one a prefix of another, with a zero
// byte), each once, tokens ascending, a pair listed twice counted once, the distinct tokens
// counted, and each suffix's common prefix with the one before; few pairs (a comparison
// sort) and many (the radix sort).
TEST(SuffixGroups, SortedBytewiseEachOnceWithTheirTokens) {
  for (const size_t extra : {size_t{0}, size_t{400}}) {
    std::vector<std::string> tokens = {"xabcdefghij", "yabcdefghik", "zabcdefgh", "wab", "vab", "ua",
                                       std::string("ta\0", 3), "sabcdefghij", "rabcdefghijk"};
    for (size_t i = 0; i < extra; ++i) tokens.push_back("q" + std::to_string(i * 7919 % 1000) + (i % 3 ? "abcdefgh" : ""));
    const auto vocab = small_vocab(tokens);
    std::vector<std::pair<int32_t, uint32_t>> pairs;
    std::map<std::string, std::set<int32_t>> want;
    for (size_t id = 1; id < vocab->size(); ++id) {
      pairs.emplace_back(static_cast<int32_t>(id), 1);
      want[std::string(vocab->token_bytes(static_cast<int32_t>(id)).substr(1))].insert(static_cast<int32_t>(id));
    }
    pairs.emplace_back(1, 1);                                  // listed twice
    pairs.emplace_back(3, 2);                                  // "abcdefgh" from "zabcdefgh" at 2: "bcdefgh"
    want["bcdefgh"].insert(3);
    std::reverse(pairs.begin(), pairs.end());
    StateMask out;
    const size_t distinct = mask::group_by_suffix(*vocab, pairs, out);
    EXPECT_EQ(distinct, vocab->size() - 1);
    ASSERT_EQ(out.suffixes.size(), want.size());
    ASSERT_EQ(out.suffix_token_begin.size(), want.size() + 1);
    size_t k = 0;
    std::string previous;
    for (const auto& [sfx, ids] : want) {
      EXPECT_EQ(out.suffixes[k], sfx);
      const auto got = out.suffix_tokens(k);
      EXPECT_EQ(std::vector<int32_t>(got.begin(), got.end()), std::vector<int32_t>(ids.begin(), ids.end())) << sfx;
      size_t common = 0;
      while (k > 0 && common < previous.size() && common < sfx.size() && previous[common] == sfx[common]) ++common;
      EXPECT_EQ(out.suffix_common[k], common) << sfx;
      previous = sfx;
      ++k;
    }
  }
}

// Long lists of pairs are grouped once per process and found again by a digest of the pairs,
// whatever their order: the same list in another order groups alike, a list with one pair
// less or one offset changed groups as its own pairs say, and so does the same list over
// another vocabulary with the same tokens spelled otherwise.
TEST(SuffixGroups, ALongListGroupsAlikeInAnyOrderAndNoOtherListTakesItsGroups) {
  std::vector<std::string> tokens;
  for (int i = 0; i < 300; ++i) tokens.push_back("t" + std::to_string(i * 7919 % 1000) + (i % 4 ? "\",\"x" : "\"}"));
  const auto vocab = small_vocab(tokens);
  std::vector<std::pair<int32_t, uint32_t>> pairs;
  for (size_t id = 1; id < vocab->size(); ++id) {
    const std::string_view bytes = vocab->token_bytes(static_cast<int32_t>(id));
    pairs.emplace_back(static_cast<int32_t>(id), static_cast<uint32_t>(bytes.find('"')));
  }
  auto grouped = [&](std::vector<std::pair<int32_t, uint32_t>> list, const Vocabulary& v) {
    StateMask out;
    const size_t distinct = mask::group_by_suffix(v, list, out);
    return std::tuple(distinct, out.suffixes, out.suffix_common, out.suffix_token_ids, out.suffix_token_begin);
  };
  const auto first = grouped(pairs, *vocab);
  EXPECT_EQ(std::get<0>(first), pairs.size());
  EXPECT_EQ(std::get<1>(first), (std::vector<std::string>{"\",\"x", "\"}"}));
  std::mt19937 rng(64);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::pair<int32_t, uint32_t>> shuffled = pairs;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    EXPECT_EQ(grouped(shuffled, *vocab), first);
  }
  // One pair less: its token is gone from its suffix's list.
  std::vector<std::pair<int32_t, uint32_t>> fewer(pairs.begin() + 1, pairs.end());
  const auto less = grouped(fewer, *vocab);
  EXPECT_EQ(std::get<0>(less), pairs.size() - 1);
  EXPECT_EQ(std::get<3>(less).size(), std::get<3>(first).size() - 1);
  EXPECT_EQ(std::count(std::get<3>(less).begin(), std::get<3>(less).end(), pairs[0].first), 0);
  // One offset moved a byte on: a suffix of its own.
  std::vector<std::pair<int32_t, uint32_t>> moved = pairs;
  moved[0].second += 1;
  EXPECT_EQ(std::get<1>(grouped(moved, *vocab)).size(), 3u);
  // Another vocabulary, each token's quote one byte later: other suffixes.
  std::vector<std::string> other = tokens;
  for (std::string& t : other) t.insert(t.find('"'), "y");
  const auto other_vocab = small_vocab(other);
  EXPECT_EQ(std::get<1>(grouped(pairs, *other_vocab)), (std::vector<std::string>{"y\",\"x", "y\"}"}));
}

TEST(TokenSet, PicksTheSmallestFormAndOrsCorrectly) {
  const size_t universe = 1000;
  for (size_t count : {0u, 5u, 31u, 500u, 975u, 1000u}) {
    std::vector<int32_t> ids;
    for (size_t i = 0; i < count; ++i) ids.push_back(static_cast<int32_t>(i * universe / std::max<size_t>(count, 1)));
    const TokenSet s = TokenSet::from_sorted(ids, universe);
    EXPECT_EQ(s.size(), count);
    if (count <= universe / 32) EXPECT_EQ(s.form(), TokenSet::Form::kIds);
    else if (universe - count <= universe / 32) EXPECT_EQ(s.form(), TokenSet::Form::kComplement);
    else EXPECT_EQ(s.form(), TokenSet::Form::kBitset);
    std::vector<uint32_t> words((universe + 31) / 32, 0);
    s.or_into(words);
    size_t bits = 0;
    for (uint32_t w : words) bits += static_cast<size_t>(__builtin_popcount(w));
    EXPECT_EQ(bits, count);
    for (int32_t id : ids) EXPECT_TRUE(s.contains(id));
  }
}

TEST(MaskCache, ClassifiesAcceptedUncertainRejected) {
  // In `item`, after "a": "b" stays inside item (accepted); "b," completes item after one
  // byte and needs the list around it to take "," (uncertain, suffix ","); "x" is rejected.
  // Tokens that start right after a completion ("," "]") belong to the parent's items.
  CompileLimits no_inlining;
  no_inlining.inline_rules = false;  // keep `item` a rule of its own
  auto g = GrammarAutomaton::compile(
      parse_gbnf("root ::= \"[\" item (\",\" item)* \"]\"\nitem ::= \"a\" \"b\"?"), no_inlining);
  auto vocab = small_vocab({"b", ",", "x", "b,", ",a", "]"});
  TokenMaskCache cache(g, vocab);
  const uint32_t item = static_cast<uint32_t>(g->grammar().find_rule("item"));
  // The state of `item` after "a": reached from its start by the byte 'a'.
  uint32_t after_a = UINT32_MAX;
  for (const auto& e : g->byte_edges(g->rule_start(item))) {
    if (e.lo <= 'a' && 'a' <= e.hi) after_a = e.target;
  }
  ASSERT_NE(after_a, UINT32_MAX);
  const StateMask& m = cache.get(after_a);
  EXPECT_TRUE(m.accepted.contains(1));    // "b"
  EXPECT_FALSE(m.accepted.contains(4));   // "b,": "b" then completion then ","
  EXPECT_EQ(m.suffixes, std::vector<std::string>{","});
  ASSERT_EQ(m.suffix_token_begin, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(m.suffix_token_ids, std::vector<int32_t>{4});
  EXPECT_EQ(m.rejected, 4u);  // ",", "x", ",a", "]"
  EXPECT_EQ(&cache.get(after_a), &m);  // computed once
  const auto st = cache.stats();
  EXPECT_EQ(st.computed, 1u);
  EXPECT_GT(st.memory_bytes, 0u);
}

// Grammar::follow_classes: a rule's FOLLOW of two bytes or more becomes the smallest class
// that holds it (more tokens uncertain, checked against the parse: the same masks), one of a
// single byte stays as it is.
TEST(MaskCache, FollowClassesWidenFollowSetsWithoutChangingMasks) {
  const std::string text = "root ::= \"[\" ws item (ws \",\" ws item)* ws \"]\"\n"
                           "item ::= num | \"\\\"\" body \"\\\"\"\nnum ::= [0-9]+\nbody ::= [a-z]*\nws ::= [ ]*";
  CompileLimits no_inlining;
  no_inlining.inline_rules = false;  // keep ws, num and body rules of their own
  Grammar plain = parse_gbnf(text);
  Grammar widened = parse_gbnf(text);
  widened.follow_classes = {"0123456789\",[]x", " ,]}"};
  const auto g0 = GrammarAutomaton::compile(plain, no_inlining);
  const auto g1 = GrammarAutomaton::compile(widened, no_inlining);
  auto rule = [](const GrammarAutomaton& g, const char* name) { return static_cast<uint32_t>(g.grammar().find_rule(name)); };
  EXPECT_FALSE(g0->can_follow(rule(*g0, "ws"), 'x'));
  EXPECT_TRUE(g1->can_follow(rule(*g1, "ws"), 'x'));    // FOLLOW(ws) = 0-9 " , ] ⊂ the first class
  EXPECT_TRUE(g1->can_follow(rule(*g1, "num"), '}'));   // FOLLOW(num) = space , ] ⊂ the second
  EXPECT_FALSE(g1->can_follow(rule(*g1, "body"), 'x'));  // FOLLOW(body) = " alone
  auto vocab = small_vocab({"[", "]", " ", "  ", " x", " 1", "1", "12", "1,", "1 ", "1]", "\"", "\"a", "a\"", "a\",", ",", ", ", " ,", "x"});
  for (const char* path : {"", "[", "[ ", "[1", "[12 ", "[1,", "[\"a", "[\"a\"", "[1 ,", "[1, 2"}) {
    SCOPED_TRACE(path);
    std::vector<std::vector<uint32_t>> masks;
    for (const auto& g : {g0, g1}) {
      EarleyMatcher m(std::make_shared<TokenMaskCache>(g, vocab));
      ASSERT_TRUE(m.accept_bytes(path));
      masks.emplace_back(vocab->bitmask_words());
      m.fill_next_token_bitmask(masks.back());
    }
    EXPECT_EQ(masks[0], masks[1]);
  }
}

TEST(MaskCache, ConcurrentMatchersShareOneCache) {
  auto g = compile(test_data::read_file(test_data::shared("grammars/llama.cpp/json.gbnf")));
  auto vocab = small_vocab({"{", "}", "\"", "a", "\":", " ", "1", "[", "]", ",", "\"a\"", "true"});
  auto cache = std::make_shared<TokenMaskCache>(g, vocab);
  cache->start_background_precompute();
  std::vector<std::thread> threads;
  std::vector<std::vector<uint32_t>> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      EarleyMatcher m(cache);
      std::vector<uint32_t> mask(vocab->bitmask_words());
      for (const char* piece : {"{", "\"a\"", "\":", " ", "[", "1"}) {
        m.fill_next_token_bitmask(mask);
        results[t].insert(results[t].end(), mask.begin(), mask.end());
        m.accept_bytes(piece);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < 4; ++t) EXPECT_EQ(results[t], results[0]);
  cache->precompute(2);
  EXPECT_EQ(cache->stats().computed, g->num_mask_classes());
  EXPECT_EQ(cache->stats().computations + cache->stats().shared, g->num_mask_classes());  // none twice
}

// root ::= a | b | "x" a | "y" b, with a ::= "1" and b ::= "2" numbered in either order.
Grammar calls_in_order(bool a_first) {
  Grammar g;
  g.root = g.add_rule("root", Expr::empty());
  const uint32_t first = g.add_rule(a_first ? "a" : "b", Expr::literal(a_first ? "1" : "2"));
  const uint32_t second = g.add_rule(a_first ? "b" : "a", Expr::literal(a_first ? "2" : "1"));
  const uint32_t a = a_first ? first : second, b = a_first ? second : first;
  g.rules[g.root].body = Expr::choice({Expr::rule_ref(a), Expr::rule_ref(b),
                                       Expr::sequence({Expr::literal("x"), Expr::rule_ref(a)}),
                                       Expr::sequence({Expr::literal("y"), Expr::rule_ref(b)})});
  return g;
}

// A grammar state's mask is shared process-wide by the signature of the network its walk can
// reach; a network with more than 8,192 states never hashed before gets no signature (hashing
// it cost more than the walk, for a key no other grammar has) and is walked, with the same
// mask. Two compilations of one grammar over one vocabulary (over 4,096 tokens, where the
// signature is used): the second one's start state is shared when the network is small,
// computed again when it is large.
TEST(MaskCache, LargeNetworksAreWalkedWithoutASharedKey) {
  const auto vocab = small_vocab(letter_tokens({}));
  ASSERT_GT(vocab->size(), 4096u);
  // root ::= w0 | w1 | ...; each wi one three-letter word, kept a rule of its own.
  auto grammar_of = [](int words) {
    std::string root = "root ::= ", rules;
    for (int i = 0; i < words; ++i) {
      const std::string word{static_cast<char>('a' + i % 26), static_cast<char>('a' + i / 26 % 26),
                             static_cast<char>('a' + i / 676 % 8)};
      root += (i ? " | w" : "w") + std::to_string(i);
      rules += "w" + std::to_string(i) + " ::= \"" + word + "\"\n";
    }
    return root + "\n" + rules;
  };
  CompileLimits no_inlining;
  no_inlining.inline_rules = false;
  for (const int words : {30, 4000}) {
    const std::string text = grammar_of(words);
    auto g1 = GrammarAutomaton::compile(parse_gbnf(text), no_inlining);
    auto g2 = GrammarAutomaton::compile(parse_gbnf(text), no_inlining);
    ASSERT_EQ(g1->num_states() > 8192, words == 4000) << g1->num_states();
    TokenMaskCache first(g1, vocab), second(g2, vocab);
    const StateMask& m1 = first.get(g1->rule_start(g1->root_rule()));
    const StateMask& m2 = second.get(g2->rule_start(g2->root_rule()));
    EXPECT_EQ(second.stats().shared, words == 4000 ? 0u : 1u) << words;
    EXPECT_EQ(second.stats().computations, words == 4000 ? 1u : 0u) << words;
    EXPECT_EQ(m1.accepted.size(), m2.accepted.size());
    EXPECT_GT(m2.accepted.size(), 0u);
    for (int32_t id = 0; id < static_cast<int32_t>(vocab->size()); ++id) {
      ASSERT_EQ(m1.accepted.contains(id), m2.accepted.contains(id)) << words << " " << id;
    }
  }
}

// A rule that calls itself is named, where it is called, by the network numbered from its
// start, so its callers get a structural hash and sign a state by their own rule alone: the
// start of a rule of 600 random words, each followed by a call of a small recursive `v`,
// reaches more than 1,024 states, which numbered as one graph had no signature. A second
// compilation of the grammar shares its start's mask; a grammar whose `v` reads another
// digit shares neither that mask nor the one after a word, which reads `v`'s first bytes.
TEST(MaskCache, CallersOfRecursiveRulesAreSharedByTheirOwnRule) {
  const std::vector<std::string> tokens = letter_tokens({"1", "2", "[", "]"});
  const auto vocab = small_vocab(tokens);
  ASSERT_GT(vocab->size(), 4096u);
  std::mt19937 rng(61);
  std::vector<std::string> words;
  std::string alternatives;
  for (int i = 0; i < 600; ++i) {
    std::string w;
    for (int k = 0; k < 6; ++k) w.push_back(static_cast<char>('a' + rng() % 26));
    alternatives += (i ? " | \"" : "\"") + w + "\" v";
    words.push_back(w);
  }
  auto grammar = [&](char digit) {
    return "root ::= " + alternatives + "\nv ::= \"" + digit + "\" | \"[\" v \"]\"\n";
  };
  CompileLimits no_inlining;
  no_inlining.inline_rules = false;
  const auto g1 = GrammarAutomaton::compile(parse_gbnf(grammar('1')), no_inlining);
  const auto g2 = GrammarAutomaton::compile(parse_gbnf(grammar('1')), no_inlining);
  const auto g3 = GrammarAutomaton::compile(parse_gbnf(grammar('2')), no_inlining);
  ASSERT_GT(g1->rule_end(g1->root_rule()) - g1->rule_start(g1->root_rule()), 1024u);
  // The state after the first word, where root calls v.
  auto after_word = [&](const GrammarAutomaton& g) {
    uint32_t s = g.rule_start(g.root_rule());
    for (const char ch : words[0]) {
      const auto b = static_cast<uint8_t>(ch);
      for (const auto& e : g.byte_edges(s)) {
        if (e.lo <= b && b <= e.hi) s = e.target;
      }
    }
    EXPECT_FALSE(g.rule_edges(s).empty());
    return s;
  };
  TokenMaskCache first(g1, vocab), second(g2, vocab), other(g3, vocab);
  const StateMask& m1 = first.get(g1->rule_start(g1->root_rule()));
  const StateMask& m2 = second.get(g2->rule_start(g2->root_rule()));
  EXPECT_EQ(second.stats().shared, 1u);
  EXPECT_EQ(second.stats().computations, 0u);
  EXPECT_GT(m1.accepted.size(), 0u);
  for (int32_t id = 0; id < static_cast<int32_t>(vocab->size()); ++id) {
    ASSERT_EQ(m1.accepted.contains(id), m2.accepted.contains(id)) << id;
  }
  other.get(g3->rule_start(g3->root_rule()));
  EXPECT_EQ(other.stats().shared, 0u);
  EXPECT_EQ(other.stats().computations, 1u);
  const StateMask& w1 = first.get(after_word(*g1));
  const StateMask& w3 = other.get(after_word(*g3));
  EXPECT_EQ(other.stats().shared, 0u);
  const auto id_of = [&](const std::string& t) { return static_cast<int32_t>(std::find(tokens.begin(), tokens.end(), t) - tokens.begin()) + 1; };  // after </s>
  EXPECT_TRUE(w1.accepted.contains(id_of("1")) && !w1.accepted.contains(id_of("2")));
  EXPECT_TRUE(w3.accepted.contains(id_of("2")) && !w3.accepted.contains(id_of("1")));
  EXPECT_TRUE(w1.accepted.contains(id_of("[")) && w3.accepted.contains(id_of("[")));
}

TEST(AutomatonBuilder, CachedRuleAutomataAreRenamedToTheGrammarsRules) {
  // Both grammars give `root` the same shape (callees numbered by first appearance: a, then
  // b), so the second compilation takes the first one's automaton from the process-wide
  // cache, where a and b have swapped indices: its rule edges must be renamed and sorted.
  CompileLimits no_inlining;
  no_inlining.inline_rules = false;
  for (const bool a_first : {true, false}) {
    const auto g = GrammarAutomaton::compile(calls_in_order(a_first), no_inlining);
    for (uint32_t s = 0; s < g->num_states(); ++s) {
      const auto edges = g->rule_edges(s);
      for (size_t k = 1; k < edges.size(); ++k) EXPECT_LT(edges[k - 1].rule, edges[k].rule) << "state " << s;
    }
    for (const auto& [text, ok] : std::vector<std::pair<std::string, bool>>{
             {"1", true}, {"2", true}, {"x1", true}, {"y2", true}, {"x2", false}, {"y1", false}, {"3", false}}) {
      EarleyParser p(*g);
      EXPECT_EQ(p.advance(text) && p.accepting(), ok) << (a_first ? "a first: " : "b first: ") << text;
    }
  }
}

// A rule's edges as one block (rule_byte_edges, rule_call_edges: the byte classes of a large
// automaton rule are read from it) are its states' edges in state order, for every rule of a
// schema grammar with string automata, escape rules and calls.
TEST(AutomatonBuilder, ARulesEdgesAreItsStatesEdgesInOrder) {
  const auto g = GrammarAutomaton::compile(compile_json_schema(nlohmann::ordered_json::parse(R"({
      "type": "object", "properties": {"name": {"enum": ["ab", "ac", "\u00e9t\u00e9"]},
      "tags": {"type": "array", "items": {"type": "string", "maxLength": 3}}}})"))
                                               .grammar);
  size_t calls = 0;
  for (uint32_t r = 0; r < g->num_rules(); ++r) {
    std::vector<std::tuple<unsigned, unsigned, uint32_t>> bytes;
    std::vector<std::pair<uint32_t, uint32_t>> rules;
    for (uint32_t s = g->rule_start(r); s < g->rule_end(r); ++s) {
      for (const auto& e : g->byte_edges(s)) bytes.emplace_back(e.lo, e.hi, e.target);
      for (const auto& e : g->rule_edges(s)) rules.emplace_back(e.rule, e.target);
    }
    std::vector<std::tuple<unsigned, unsigned, uint32_t>> block_bytes;
    std::vector<std::pair<uint32_t, uint32_t>> block_rules;
    for (const auto& e : g->rule_byte_edges(r)) block_bytes.emplace_back(e.lo, e.hi, e.target);
    for (const auto& e : g->rule_call_edges(r)) block_rules.emplace_back(e.rule, e.target);
    EXPECT_EQ(block_bytes, bytes) << "rule " << g->rule_name(r);
    EXPECT_EQ(block_rules, rules) << "rule " << g->rule_name(r);
    calls += rules.size();
  }
  EXPECT_GT(calls, 0u);
}

TEST(Matcher, JumpForwardReturnsTheForcedBytes) {
  auto vocab = small_vocab({"a"});
  EarleyMatcher m(compile("root ::= \"{\\\"name\\\": \" [a-z]+ \"}\""), vocab);
  EXPECT_EQ(m.jump_forward_bytes(), "{\"name\": ");
  EXPECT_EQ(m.num_steps(), 0u);  // the state is unchanged
  ASSERT_TRUE(m.accept_bytes("{\"name\": abc"));
  EXPECT_EQ(m.jump_forward_bytes(), "");
  EarleyMatcher h(compile("root ::= \"hello world\" | \"hello there\" | \"help\""), vocab);
  EXPECT_EQ(h.jump_forward_bytes(), "hel");
  ASSERT_TRUE(h.accept_bytes("hell"));
  EXPECT_EQ(h.jump_forward_bytes(), "o ");
  // Where the output may end, nothing is forced.
  EarleyMatcher opt(compile("root ::= \"ab\" \"cd\"?"), vocab);
  ASSERT_TRUE(opt.accept_bytes("ab"));
  EXPECT_EQ(opt.jump_forward_bytes(), "");
  EXPECT_EQ(opt.jump_forward_bytes(3), "");
  // Multi-byte characters are forced byte by byte.
  EarleyMatcher utf(compile("root ::= \"é\" [0-9]"), vocab);
  EXPECT_EQ(utf.jump_forward_bytes(), "\xC3\xA9");
}

TEST(Matcher, BatchFillEqualsOneByOne) {
  auto g = compile(test_data::read_file(test_data::shared("grammars/llama.cpp/arithmetic.gbnf")));
  auto vocab = small_vocab({"a", "b1", "=", " ", "\n", "(", ")", "+", "7", "x_"});
  auto cache = std::make_shared<TokenMaskCache>(g, vocab);
  std::vector<EarleyMatcher> ms;
  const char* prefixes[] = {"", "a", "a=", "a= (", "b1+7= ", "x=1\n", "(q", "zz"};
  for (const char* p : prefixes) {
    ms.emplace_back(cache);
    ASSERT_TRUE(ms.back().accept_bytes(p) || std::string(p).empty()) << p;
  }
  std::vector<EarleyMatcher*> ptrs;
  for (auto& m : ms) ptrs.push_back(&m);
  const size_t stride = vocab->bitmask_words() + 3;
  std::vector<uint32_t> batch(ptrs.size() * stride, 0xDEADBEEF);
  fill_next_token_bitmasks(ptrs, batch, stride, 2);
  for (size_t i = 0; i < ms.size(); ++i) {
    std::vector<uint32_t> one(stride);
    EarleyMatcher copy = ms[i].fork();
    copy.fill_next_token_bitmask(one);
    EXPECT_EQ(std::vector<uint32_t>(batch.begin() + i * stride, batch.begin() + (i + 1) * stride), one) << prefixes[i];
  }
}

// XGrammar's EBNF accept/reject cases whose grammar is GBNF (the others use XGrammar's own
// extensions: lookahead assertions, Regex(), TagDispatch, … and fail to parse).
TEST(Matcher, XGrammarEbnfCasesInGbnfSyntax) {
  const auto cases = nlohmann::json::parse(
      test_data::read_file(test_data::shared("grammars/xgrammar/ebnf_accept_reject_cases.json")));
  int gbnf = 0, agree = 0, other_syntax = 0, custom_root = 0;
  for (const auto& c : cases) {
    if (c.value("test", "") == "test_custom_root_rule") {
      ++custom_root;  // these use a start rule other than `root`, not recorded in the data
      continue;
    }
    std::shared_ptr<const GrammarAutomaton> g;
    try {
      g = compile(c["grammar"].get<std::string>());
    } catch (const GrammarError&) {
      ++other_syntax;
      continue;
    }
    ++gbnf;
    EarleyParser p(*g);
    const std::string input = c["input"];
    const bool accepted = p.advance(input) && p.accepting();
    if (accepted == c["accepted"].get<bool>()) {
      ++agree;
    } else {
      ADD_FAILURE() << c["grammar"] << "\ninput " << c["input"] << " expected " << c["accepted"];
    }
  }
  std::printf("[ xgrammar ] %zu cases: %d GBNF-compatible, %d agree; %d other syntax, %d custom root\n",
              cases.size(), gbnf, agree, other_syntax, custom_root);
  EXPECT_EQ(agree, gbnf);
  EXPECT_GE(gbnf, 100);
}

template <typename Fn>
double seconds(Fn fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(Pathological, ManyOptionalsAreLinear) {
  std::string g = "root ::=";
  for (int i = 0; i < 50; ++i) g += " \"a\"?";
  auto vocab = small_vocab({"a", "aa", "aaaa", "b"});
  EarleyMatcher m(compile(g), vocab);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  for (int i = 0; i < 12; ++i) {
    m.fill_next_token_bitmask(mask);
    EXPECT_EQ(mask[0] & 0b10001u, 0b00001u);  // EOS allowed, "b" never
    ASSERT_TRUE(m.accept_token(3));           // "aaaa"
  }
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b00111u);  // 48 of 50 used: "a", "aa" (and EOS) remain
}

TEST(Pathological, DeepNestingIsAClearError) {
  const std::string deep = "root ::= " + std::string(10000, '(') + "\"x\"" + std::string(10000, ')');
  try {
    parse_gbnf(deep);
    ADD_FAILURE();
  } catch (const LimitError& e) {
    EXPECT_EQ(e.limit(), "nesting_depth");
    EXPECT_EQ(e.value(), 500u);
    EXPECT_EQ(e.location().source->column, 510u) << e.what();
  }
  // 400 levels are fine.
  const std::string ok = "root ::= " + std::string(400, '(') + "\"x\"" + std::string(400, ')');
  EXPECT_NO_THROW(compile(ok));
}

TEST(Pathological, TenThousandAlternatives) {
  std::string g = "root ::= ";
  for (int i = 0; i < 10000; ++i) g += (i ? " | \"w" : "\"w") + std::to_string(i) + "\"";
  std::shared_ptr<const GrammarAutomaton> cg;
  EXPECT_LT(seconds([&] { cg = compile(g); }), 30.0);
  auto vocab = small_vocab({"w", "w1", "w99", "w10000", "9", "0"});
  EarleyMatcher m(cg, vocab);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b0001110u);  // "w", "w1", "w99"; not "w10000"
  ASSERT_TRUE(m.accept_token(2));  // "w1"
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask[0], 0b1100001u);  // EOS ("w1"), "9", "0" ("w19", "w10")
}

TEST(Pathological, AutomatonLimitsAreClearErrors) {
  try {
    compile("root ::= ([a-z]{1000}){2000}");
    ADD_FAILURE();
  } catch (const LimitError& e) {
    EXPECT_EQ(e.limit(), "rule_automaton_states") << e.what();
    EXPECT_NE(std::string(e.what()).find("1:1: the automaton of rule 'root'"), std::string::npos) << e.what();
  }
  CompileLimits tight;
  tight.max_total_states = 100;
  try {
    GrammarAutomaton::compile(parse_gbnf("root ::= [a-z]{200}"), tight);
    ADD_FAILURE();
  } catch (const LimitError& e) {
    EXPECT_EQ(e.limit(), "grammar_automaton_states") << e.what();
    EXPECT_EQ(e.value(), 100u);
    EXPECT_NE(std::string(e.what()).find("1:1: the grammar's automata (reached at rule 'root') exceeds the limit"),
              std::string::npos) << e.what();
  }
}

TEST(Pathological, TotalItemLimitBoundsMemory) {
  auto g = compile("root ::= \"(\" root \")\" | \"\"");
  ParserLimits limits;
  limits.max_total_items = 5000;
  EarleyParser p(*g, limits);
  EXPECT_THROW(
      {
        for (int i = 0; i < 100000; ++i) ASSERT_TRUE(p.advance('('));
      },
      ParserLimitError);
}

}  // namespace
}  // namespace lockstep
