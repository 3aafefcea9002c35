// Code-point automata: Boolean operations checked against their definitions on sample
// strings, and the JSON-string embedding (raw characters and escapes).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "automata/earley.h"
#include "grammar/char_dfa.h"
#include "lockstep/limits.h"

namespace lockstep {
namespace {

CharDfa re(const std::string& pattern) { return CharDfa::from_expr(regex_to_expr(pattern)); }

TEST(CharDfa, BooleanOperationsMatchTheirDefinitions) {
  const CharDfa a = re("[a-c]+x?");
  const CharDfa b = CharDfa::length(2, 3);
  const CharDfa both = CharDfa::intersect(a, b);
  const CharDfa either = CharDfa::unite(a, b);
  const CharDfa not_a = a.complement();
  for (const std::string s : {"", "a", "ab", "abc", "abx", "abcx", "zz", "é", "aé", "abcab", "x"}) {
    EXPECT_EQ(both.accepts(s), a.accepts(s) && b.accepts(s)) << s;
    EXPECT_EQ(either.accepts(s), a.accepts(s) || b.accepts(s)) << s;
    EXPECT_EQ(not_a.accepts(s), !a.accepts(s)) << s;
  }
  EXPECT_TRUE(CharDfa::intersect(a, not_a).empty());
  EXPECT_TRUE(CharDfa::none().empty());
  EXPECT_TRUE(CharDfa::literal("").only_empty_string());
  std::string one;
  EXPECT_TRUE(CharDfa::literal("héllo").single_string(one));
  EXPECT_EQ(one, "héllo");
  EXPECT_FALSE(a.single_string(one));
  // Minimization: (ab|ab)* and (ab)* are the same automaton.
  EXPECT_EQ(re("(ab|ab)*").size(), re("(ab)*").size());
}

// The states reachable from the start, in breadth-first order.
std::vector<uint32_t> bfs_order(const CharDfa& d) {
  std::vector<char> seen(d.size(), 0);
  std::vector<uint32_t> order{0};
  seen[0] = 1;
  for (size_t i = 0; i < order.size(); ++i) {
    for (const auto& e : d.states()[order[i]].edges) {
      if (!seen[e.target]) seen[e.target] = 1, order.push_back(e.target);
    }
  }
  return order;
}

// The reachable states in breadth-first order, edges in order: two automata have equal
// forms exactly when their reachable parts are the same up to state numbering.
std::vector<uint32_t> canonical_form(const CharDfa& d) {
  const std::vector<uint32_t> order = bfs_order(d);
  std::vector<uint32_t> id(d.size(), UINT32_MAX), out;
  for (uint32_t i = 0; i < order.size(); ++i) id[order[i]] = i;
  for (uint32_t s : order) {
    out.push_back(d.states()[s].final ? 1 : 0);
    out.push_back(static_cast<uint32_t>(d.states()[s].edges.size()));
    for (const auto& e : d.states()[s].edges) out.insert(out.end(), {e.lo, e.hi, id[e.target]});
  }
  return out;
}

// literals() minimizes its trie bottom-up and complement() of a minimal automaton skips
// refinement; both must give what partition refinement gives (from_states() forgets that
// an automaton is minimal, so its minimized() and complement() take the general path).
TEST(CharDfa, ShortcutsGiveThePartitionRefinementResult) {
  std::mt19937 rng(7);
  const std::vector<std::string> letters{"a", "b", "c", "\xc3\xa9", "\""};
  std::vector<CharDfa> samples{CharDfa::none(), CharDfa::all(), CharDfa::literal(""), re("[a-c]+x?"),
                               re("(ab)*|c"), CharDfa::length(2, 5), CharDfa::length(1, kUnbounded),
                               CharDfa::literal("ab").complement()};  // complete: no sink needed
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<std::string> texts(1 + rng() % 12);
    for (auto& t : texts) {
      for (size_t n = rng() % 6; n > 0; --n) t += letters[rng() % letters.size()];
    }
    const CharDfa lits = CharDfa::literals(texts);
    CharDfa united = CharDfa::literal(texts[0]);
    for (const auto& t : texts) united = CharDfa::unite(united, CharDfa::literal(t));
    EXPECT_EQ(canonical_form(lits), canonical_form(united)) << "trial " << trial;
    EXPECT_EQ(CharDfa::from_states(lits.states()).minimized().size(), lits.size()) << "trial " << trial;
    for (const auto& t : texts) EXPECT_TRUE(lits.accepts(t)) << t;
    samples.push_back(lits);
  }
  for (size_t i = 0; i < samples.size(); ++i) {
    const CharDfa& x = samples[i];
    const CharDfa fast = x.complement();
    const CharDfa general = CharDfa::from_states(x.states()).complement();
    EXPECT_EQ(canonical_form(fast), canonical_form(general)) << "sample " << i;
    EXPECT_EQ(CharDfa::from_states(fast.states()).minimized().size(), fast.size()) << "sample " << i;
    EXPECT_EQ(bfs_order(fast).size(), fast.size()) << "sample " << i << ": an unreachable state";
    EXPECT_EQ(canonical_form(fast.complement()), canonical_form(x.minimized())) << "sample " << i;
    for (const std::string s : {"", "a", "ab", "abab", "c", "\xc3\xa9\"", "zz", "abx", "\"\""}) {
      EXPECT_EQ(fast.accepts(s), !x.accepts(s)) << "sample " << i << ": " << s;
    }
  }
}

// sorted_literals() builds the minimal automaton word by word without the trie: its states
// are numbered as the trie's classes (the order a depth-first walk first meets them), it
// sorts input that is not sorted, and its limit is on the minimal automaton, not the trie.
// sort_words against std::sort and std::unique: words short enough to be held inline and
// long ones, repeated (next to each other once sorted, the first of a run moved out before
// the next is compared), with bytes above 0x7F and zero bytes, a prefix of another.
// minimal_from() reads states from one pool of edges, in any order in the pool; it must give
// from_states(...).minimized() and refuse what from_states() refuses.
TEST(CharDfa, PooledStatesMinimizeAsStateLists) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    // A random automaton over a few ranges, with duplicate states to merge.
    const size_t n = 2 + rng() % 30;
    std::vector<CharDfa::State> states(n);
    for (auto& st : states) {
      st.final = rng() % 3 == 0;
      uint32_t lo = 'a';
      for (size_t k = rng() % 5; k > 0; --k) {
        const uint32_t hi = lo + rng() % 3;
        st.edges.push_back({lo, hi, static_cast<uint32_t>(rng() % n)});
        lo = hi + 1 + rng() % 2;
      }
    }
    CharDfa::PooledStates pool;
    pool.first.resize(n), pool.past.resize(n), pool.final.resize(n);
    for (size_t i = n; i-- > 0;) {  // the pool in reverse state order
      pool.first[i] = static_cast<uint32_t>(pool.edges.size());
      pool.edges.insert(pool.edges.end(), states[i].edges.begin(), states[i].edges.end());
      pool.past[i] = static_cast<uint32_t>(pool.edges.size());
      pool.final[i] = states[i].final ? 1 : 0;
    }
    const CharDfa pooled = CharDfa::minimal_from(pool);
    EXPECT_TRUE(pooled.known_minimal());
    EXPECT_EQ(canonical_form(pooled), canonical_form(CharDfa::from_states(states).minimized())) << "trial " << trial;
  }
  CharDfa::PooledStates bad;
  EXPECT_THROW(CharDfa::minimal_from(bad), std::invalid_argument);  // no start state
  bad.edges = {{'b', 'c', 0}, {'a', 'b', 0}};
  bad.first = {0};
  bad.past = {2};
  bad.final = {1};
  EXPECT_THROW(CharDfa::minimal_from(bad), std::invalid_argument);  // overlapping, unsorted
  bad.edges = {{'a', 'b', 1}};
  bad.past = {1};
  EXPECT_THROW(CharDfa::minimal_from(bad), std::invalid_argument);  // a target out of range
  bad.edges = {{'a', 'b', 0}};
  bad.past = {2};
  EXPECT_THROW(CharDfa::minimal_from(bad), std::invalid_argument);  // past the pool
}

TEST(CharDfa, SortWordsSortsBytewiseOnceEach) {
  std::mt19937 rng(111);
  const std::vector<std::string> pieces{"a", "b", std::string("\0", 1), "\xc3\xa9", "\xff", "same-long-prefix-",
                                        "xyz"};
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::string> words(rng() % 400);
    for (auto& w : words) {
      for (size_t n = rng() % 6; n > 0; --n) w += pieces[rng() % pieces.size()];
    }
    for (size_t i = 0, n = words.size(); i < n / 3; ++i) words.push_back(words[rng() % n]);  // repeats
    std::vector<std::string> want = words;
    std::sort(want.begin(), want.end());
    want.erase(std::unique(want.begin(), want.end()), want.end());
    CharDfa::sort_words(words);
    ASSERT_EQ(words, want) << "trial " << trial;
  }
}

TEST(CharDfa, SortedLiteralsIsTheMinimalTrieInTrieOrder) {
  std::mt19937 rng(23);
  const std::vector<std::string> letters{"a", "b", "\xc3\xa9", "\xe2\x82\xac", "z"};
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::string> texts(rng() % 30);
    for (auto& t : texts) {
      for (size_t n = rng() % 7; n > 0; --n) t += letters[rng() % letters.size()];
    }
    const CharDfa shuffled = CharDfa::sorted_literals(texts);  // unsorted, with duplicates
    const CharDfa lits = CharDfa::literals(texts);
    std::vector<std::string> sorted = texts;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    ASSERT_NE(lits.words(), nullptr);
    EXPECT_EQ(*lits.words(), sorted) << "trial " << trial;
    EXPECT_EQ(*shuffled.words(), sorted) << "trial " << trial;
    // Numbered in depth-first order from the start, edges in code point order.
    std::vector<uint32_t> order{0}, seen(lits.size(), 0);
    std::vector<std::pair<uint32_t, size_t>> stack{{0, 0}};
    seen[0] = 1;
    while (!stack.empty()) {
      auto& [s, k] = stack.back();
      if (k == lits.states()[s].edges.size()) {
        stack.pop_back();
        continue;
      }
      const uint32_t t = lits.states()[s].edges[k++].target;
      if (!seen[t]) seen[t] = 1, order.push_back(t), stack.emplace_back(t, 0);
    }
    for (uint32_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i) << "trial " << trial;
    EXPECT_EQ(order.size(), lits.size()) << "trial " << trial;
    EXPECT_EQ(CharDfa::from_states(lits.states()).minimized().size(), lits.size()) << "trial " << trial;
    EXPECT_EQ(canonical_form(shuffled), canonical_form(lits)) << "trial " << trial;
    // literal_states(): the size without the automaton, or the cap + 1 once past it.
    EXPECT_EQ(CharDfa::literal_states(texts, SIZE_MAX), texts.empty() ? 0 : lits.size()) << "trial " << trial;
    for (const size_t cap : {size_t{0}, size_t{3}, lits.size() - 1, lits.size()}) {
      EXPECT_EQ(CharDfa::literal_states(texts, cap), texts.empty() ? 0 : std::min(lits.size(), cap + 1))
          << "trial " << trial << " cap " << cap;
    }
    for (const auto& t : texts) EXPECT_TRUE(lits.accepts(t)) << t;
    for (const std::string t : {"", "a", "ab", "zz", "\xc3\xa9z"}) {
      EXPECT_EQ(lits.accepts(t), std::binary_search(sorted.begin(), sorted.end(), t)) << t;
    }
  }
  // 300 words of 12 code points: a trie of 3,000 states or so, a minimal automaton of 13.
  std::vector<std::string> words;
  for (int i = 0; i < 300; ++i) words.push_back(fmt::format("{:03}-suffix-x", i));
  EngineLimits limits = engine_limits();
  limits.string_automaton_states = 40;
  {
    ScopedEngineLimits scoped(limits);
    const CharDfa d = CharDfa::literals(words);
    EXPECT_EQ(d.size(), 13u);
    EXPECT_TRUE(d.accepts("299-suffix-x"));
    EXPECT_FALSE(d.accepts("300-suffix-x"));
    limits.string_automaton_states = 12;
    ScopedEngineLimits tighter(limits);
    EXPECT_THROW(CharDfa::literals(words), AutomatonLimitError);
  }
}

// One word is its chain of code points, numbered from the start, read without a list of its
// code points: bad UTF-8 and the state limit are refused before any state is made.
TEST(CharDfa, OneWordIsItsChainOfCodePoints) {
  const std::string word = "k\xc3\xa9y\xe2\x82\xac";  // k, é, y, €
  const CharDfa d = CharDfa::literal(word);
  ASSERT_EQ(d.size(), 5u);
  const uint32_t cps[] = {'k', 0xE9, 'y', 0x20AC};
  for (uint32_t s = 0; s < 4; ++s) {
    ASSERT_EQ(d.states()[s].edges.size(), 1u);
    EXPECT_EQ(d.states()[s].edges[0].lo, cps[s]);
    EXPECT_EQ(d.states()[s].edges[0].hi, cps[s]);
    EXPECT_EQ(d.states()[s].edges[0].target, s + 1);
    EXPECT_FALSE(d.states()[s].final);
  }
  EXPECT_TRUE(d.states()[4].final);
  EXPECT_TRUE(d.states()[4].edges.empty());
  EXPECT_TRUE(d.accepts(word));
  EXPECT_FALSE(d.accepts("k\xc3\xa9y"));
  EXPECT_FALSE(d.accepts(word + "y"));
  EXPECT_THROW(CharDfa::literal("a\xc3"), std::invalid_argument);
  EXPECT_THROW(CharDfa::literal("\xff"), std::invalid_argument);
  EngineLimits limits = engine_limits();
  limits.string_automaton_states = 5;
  ScopedEngineLimits scoped(limits);
  EXPECT_EQ(CharDfa::literal(word).size(), 5u);
  EXPECT_THROW(CharDfa::literal(word + "!"), AutomatonLimitError);
}

// Automata without a cycle (words, length-bounded strings) are minimized bottom-up by
// hashing (Revuz); the result must be partition refinement's. An unreachable final state
// with a loop is a class of its own, found by refinement, and leaves the reachable part
// alone.
TEST(CharDfa, AcyclicMinimizationGivesThePartitionRefinementResult) {
  std::mt19937 rng(11);
  const std::vector<std::pair<uint32_t, uint32_t>> ranges{{'a', 'a'}, {'b', 'b'}, {'c', 'd'}, {0xE9, 0xE9}, {0x100, 0x2FF}};
  for (int trial = 0; trial < 200; ++trial) {
    // Layered: edges only to later states, with few distinct layers so that many states
    // share their futures.
    const uint32_t n = 2 + rng() % 30;
    std::vector<CharDfa::State> states(n);
    for (uint32_t s = 0; s < n; ++s) {
      states[s].final = rng() % 3 == 0 || s + 1 == n;
      if (s + 1 == n) break;
      for (const auto& [lo, hi] : ranges) {
        if (rng() % 3 == 0) continue;
        const uint32_t t = s + 1 + rng() % std::min<uint32_t>(3, n - s - 1);
        auto& edges = states[s].edges;
        // Adjacent ranges to one target: one edge or two, as it happens.
        if (!edges.empty() && edges.back().target == t && edges.back().hi + 1 == lo && rng() % 2) {
          edges.back().hi = hi;
        } else {
          edges.push_back({lo, hi, t});
        }
      }
    }
    const CharDfa acyclic = CharDfa::from_states(states).minimized();
    std::vector<CharDfa::State> looped = states;
    looped.push_back({{{'a', 'a', n}}, true});
    const CharDfa refined = CharDfa::from_states(looped).minimized();
    EXPECT_EQ(canonical_form(acyclic), canonical_form(refined)) << "trial " << trial;
    EXPECT_LE(acyclic.size(), n) << "trial " << trial;
    const CharDfa given = CharDfa::from_states(states);
    static const char* const kPieces[] = {"a", "b", "c", "d", "\xc3\xa9"};
    std::string text;
    for (int k = 0; k < 40; ++k) {
      text.clear();
      for (size_t len = rng() % 6; len > 0; --len) text += kPieces[rng() % 5];
      EXPECT_EQ(acyclic.accepts(text), given.accepts(text)) << "trial " << trial << ": " << text;
    }
  }
  // A format under a length bound: the product is acyclic and minimal as refinement makes it.
  const CharDfa bounded = CharDfa::intersect(re("[a-c]+(x[a-c]+)*@[a-c]+"), CharDfa::length(0, 12));
  std::vector<CharDfa::State> looped = bounded.states();
  looped.push_back({{{'a', 'a', static_cast<uint32_t>(bounded.size())}}, true});
  EXPECT_EQ(canonical_form(bounded), canonical_form(CharDfa::from_states(looped).minimized()));
  EXPECT_TRUE(bounded.accepts("axb@c"));
  EXPECT_FALSE(bounded.accepts("axb@ccccccccc"));
}

// Moore's minimization, written out naively: the reference for automata of a few dozen
// states. Live states (those reaching a final one) are split by finality, then by the class
// each elementary code-point interval leads to, until nothing splits; the result has one
// state per class reachable from the start, adjacent intervals to one class merged.
CharDfa moore_minimized(const std::vector<CharDfa::State>& states) {
  const size_t n = states.size();
  std::vector<uint32_t> cuts;
  for (const auto& st : states) {
    for (const auto& e : st.edges) cuts.insert(cuts.end(), {e.lo, e.hi + 1});
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  auto target = [&](size_t s, uint32_t cp) -> int {
    for (const auto& e : states[s].edges) {
      if (cp >= e.lo && cp <= e.hi) return static_cast<int>(e.target);
    }
    return -1;
  };
  std::vector<char> live(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t s = 0; s < n; ++s) {
      if (live[s]) continue;
      bool reaches = states[s].final;
      for (const auto& e : states[s].edges) reaches = reaches || live[e.target];
      if (reaches) live[s] = 1, changed = true;
    }
  }
  std::vector<int> cls(n, -1);
  for (size_t s = 0; s < n; ++s) cls[s] = live[s] ? (states[s].final ? 1 : 0) : -1;
  auto class_after = [&](size_t s, uint32_t cp) {
    const int t = target(s, cp);
    return t < 0 || !live[t] ? -1 : cls[t];
  };
  for (size_t count = 0;;) {
    std::map<std::vector<int>, int> ids;
    std::vector<int> next(n, -1);
    for (size_t s = 0; s < n; ++s) {
      if (!live[s]) continue;
      std::vector<int> sig{cls[s]};
      for (size_t k = 0; k + 1 < cuts.size(); ++k) sig.push_back(class_after(s, cuts[k]));
      next[s] = ids.emplace(sig, static_cast<int>(ids.size())).first->second;
    }
    cls = next;
    if (ids.size() == count) break;
    count = ids.size();
  }
  // The classes reachable from the start, the start's first.
  std::map<int, uint32_t> id;
  std::vector<size_t> rep;
  auto add = [&](size_t s) {
    if (id.emplace(cls[s], static_cast<uint32_t>(rep.size())).second) rep.push_back(s);
  };
  add(0);
  for (size_t i = 0; i < rep.size(); ++i) {
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      const int t = target(rep[i], cuts[k]);
      if (t >= 0 && live[t]) add(static_cast<size_t>(t));
    }
  }
  std::vector<CharDfa::State> out(rep.size());
  for (size_t i = 0; i < rep.size(); ++i) {
    out[i].final = states[rep[i]].final;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      const int t = target(rep[i], cuts[k]);
      if (t < 0 || !live[t]) continue;
      auto& edges = out[i].edges;
      const uint32_t to = id.at(cls[t]);
      if (!edges.empty() && edges.back().target == to && edges.back().hi + 1 == cuts[k]) {
        edges.back().hi = cuts[k + 1] - 1;
      } else {
        edges.push_back({cuts[k], cuts[k + 1] - 1, to});
      }
    }
  }
  return CharDfa::from_states(std::move(out));
}

// empty() of a known-minimal automaton reads only its start (no other state is dead); of
// any other automaton it searches. Both must agree with the language: random automata
// (dead starts with loops back to themselves among them), minimized or not, and complements.
TEST(CharDfa, EmptinessAgreesWithAndWithoutMinimization) {
  std::mt19937 rng(31);
  const std::vector<std::pair<uint32_t, uint32_t>> ranges{{'a', 'a'}, {'b', 'c'}, {0x3B1, 0x3B1}};
  int empties = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const uint32_t n = 1 + rng() % 8;
    std::vector<CharDfa::State> states(n);
    for (uint32_t s = 0; s < n; ++s) {
      states[s].final = rng() % 5 == 0;
      for (const auto& [lo, hi] : ranges) {
        if (rng() % 2 == 0) states[s].edges.push_back({lo, hi, static_cast<uint32_t>(rng() % n)});
      }
    }
    // The language is empty exactly when no final state is reachable from the start.
    std::vector<char> seen(n, 0);
    std::vector<uint32_t> todo{0};
    seen[0] = 1;
    bool reachable_final = false;
    while (!todo.empty()) {
      const uint32_t s = todo.back();
      todo.pop_back();
      reachable_final = reachable_final || states[s].final;
      for (const auto& e : states[s].edges) {
        if (!seen[e.target]) seen[e.target] = 1, todo.push_back(e.target);
      }
    }
    const CharDfa given = CharDfa::from_states(states);
    const CharDfa minimal = given.minimized();
    EXPECT_EQ(given.empty(), !reachable_final) << "trial " << trial;
    EXPECT_EQ(minimal.empty(), !reachable_final) << "trial " << trial;
    EXPECT_EQ(minimal.complement().complement().empty(), !reachable_final) << "trial " << trial;
    empties += !reachable_final;
  }
  EXPECT_GT(empties, 50);
  // A dead start looping to itself, as given (not known minimal) and minimized.
  const CharDfa loop = CharDfa::from_states({{{{'a', 'a', 0}}, false}});
  EXPECT_TRUE(loop.empty());
  EXPECT_TRUE(loop.minimized().empty());
  EXPECT_FALSE(CharDfa::all().empty());
  EXPECT_TRUE(CharDfa::all().complement().empty());
  EXPECT_FALSE(CharDfa::literals({"ab", "b"}).empty());
}

// Automata with cycles behind an acyclic part (the numbers of an enum: tens of thousands of
// states before a small core of exponent digits and trailing zeros): the states reaching
// no cycle are settled by hashing, the core by refinement, and a state of either part may be
// equivalent to one of the other. The result must be Moore's. A core of at most 48 states is
// refined by Moore's rounds, a larger one by the general refinement: both sizes are drawn.
TEST(CharDfa, MinimizationWithACyclicCoreEqualsMoores) {
  std::mt19937 rng(23);
  const std::vector<std::pair<uint32_t, uint32_t>> ranges{{'a', 'a'}, {'b', 'b'}, {'c', 'd'}, {0xE9, 0xE9}};
  int with_core = 0, large_core = 0;
  for (int trial = 0; trial < 600; ++trial) {
    // States below `layered` only lead to later states; the others anywhere at or after
    // `layered` (loops and cycles). Few ranges and few targets, so many states share futures.
    const uint32_t n = trial < 400 ? 2 + rng() % 24 : 60 + rng() % 100;
    const uint32_t layered = rng() % (n + 1);
    std::vector<CharDfa::State> states(n);
    for (uint32_t s = 0; s < n; ++s) {
      states[s].final = rng() % 3 == 0;
      for (const auto& [lo, hi] : ranges) {
        if (rng() % 2 == 0) continue;
        const uint32_t from = s < layered ? s + 1 : layered;
        if (from >= n) continue;
        const uint32_t t = from + rng() % std::min<uint32_t>(s < layered ? 3 : n - from, n - from);
        states[s].edges.push_back({lo, hi, t});
      }
    }
    const CharDfa given = CharDfa::from_states(states);
    const CharDfa fast = given.minimized();
    const CharDfa reference = moore_minimized(states);
    if (reference.states()[0].edges.empty() && !reference.states()[0].final) continue;  // empty language
    EXPECT_EQ(canonical_form(fast), canonical_form(reference)) << "trial " << trial;
    with_core += layered < n;
    large_core += n - layered > 60;
    static const char* const kPieces[] = {"a", "b", "c", "d", "\xc3\xa9"};
    for (int k = 0; k < 20; ++k) {
      std::string text;
      for (size_t len = rng() % 7; len > 0; --len) text += kPieces[rng() % 5];
      EXPECT_EQ(fast.accepts(text), given.accepts(text)) << "trial " << trial << ": " << text;
    }
  }
  EXPECT_GT(with_core, 100);
  EXPECT_GT(large_core, 50);
  // A state outside the core with the language of a core state: 0 -b-> A, 0 -c-> C, A final
  // with a -> C, C final with a loop on a. A and C both accept a*, so they are one state and
  // b, c one edge.
  const CharDfa across = CharDfa::from_states({{{{'b', 'b', 1}, {'c', 'c', 2}}, false},
                                               {{{'a', 'a', 2}}, true},
                                               {{{'a', 'a', 2}}, true}}).minimized();
  ASSERT_EQ(across.size(), 2u);
  EXPECT_EQ(across.states()[0].edges.size(), 1u);
  EXPECT_TRUE(across.accepts("baaa") && across.accepts("c") && !across.accepts("a"));
}

// The same automaton without its word list (from_states() records none), so that the
// operations on it take the product.
CharDfa without_words(const CharDfa& d) { return CharDfa::from_states(d.states()).minimized(); }

// Intersections and unions with word lists (literals()) filter and merge the lists instead of
// taking a product; both must give the product's automaton, and the words it accepts.
TEST(CharDfa, WordListOperationsGiveTheProductResult) {
  std::mt19937 rng(16);
  const std::vector<std::string> letters{"a", "b", "\xc3\xa9", "\"", "\\", "\x01", "\xf0\x9f\x98\x80"};
  auto words = [&] {
    std::vector<std::string> out(rng() % 10);
    for (auto& t : out) {
      for (size_t n = rng() % 5; n > 0; --n) t += letters[rng() % letters.size()];
    }
    return out;
  };
  const std::vector<CharDfa> others{CharDfa::none(), CharDfa::all(), re("[ab]+"), re("a*\"?"), CharDfa::length(0, 2),
                                    CharDfa::length(2, kUnbounded), CharDfa::literals({"a", "ab", "b\"\\"}).complement()};
  for (int trial = 0; trial < 80; ++trial) {
    const CharDfa x = CharDfa::literals(words());
    ASSERT_NE(x.words(), nullptr);
    std::vector<CharDfa> operands = others;
    operands.push_back(CharDfa::literals(words()));
    for (size_t i = 0; i < operands.size(); ++i) {
      const CharDfa& y = operands[i];
      const std::string where = "trial " + std::to_string(trial) + " operand " + std::to_string(i);
      const CharDfa both = CharDfa::intersect(x, y);
      EXPECT_EQ(canonical_form(both), canonical_form(CharDfa::intersect(without_words(x), without_words(y)))) << where;
      ASSERT_NE(both.words(), nullptr) << where;
      std::vector<std::string> kept;
      for (const auto& w : *x.words()) {
        if (y.accepts(w)) kept.push_back(w);
      }
      EXPECT_EQ(*both.words(), kept) << where;
      EXPECT_EQ(canonical_form(CharDfa::intersect(y, x)), canonical_form(both)) << where;
      const CharDfa either = CharDfa::unite(x, y);
      EXPECT_EQ(canonical_form(either), canonical_form(CharDfa::unite(without_words(x), without_words(y)))) << where;
      EXPECT_EQ(either.words() != nullptr, y.words() != nullptr) << where;
      if (either.words()) {
        for (const auto& w : *either.words()) EXPECT_TRUE(x.accepts(w) || y.accepts(w)) << where << ": " << w;
        EXPECT_TRUE(std::is_sorted(either.words()->begin(), either.words()->end())) << where;
      }
    }
    // Copies keep the list; a complement has none (its language is infinite).
    const CharDfa copy = x;
    EXPECT_EQ(copy.words(), x.words());
    EXPECT_EQ(x.complement().words(), nullptr);
  }
}

// Intersecting with length(min, max) builds the layered product and minimizes it bottom-up
// (with_length); the automaton must be the generic product's, state for state. The generic
// product is reached through a length automaton that does not say it is one (length() with
// its code points given), and through from_states (which forgets minimality).
TEST(CharDfa, LengthCutsGiveTheProductResult) {
  const std::vector<CodepointRange> every{{0, kMaxCodepoint}};
  const std::vector<CharDfa> languages{
      CharDfa::none(), CharDfa::all(), CharDfa::literal(""), re("[a-c]+x?"), re("(ab)*|c"), re("a{3,7}b*"),
      re("(\\S+\\s+){0,4}\\S+"), re("[^@]+@[a-z]+(\\.[a-z]+)*"), re("x?y?z?"), CharDfa::literals({"a", "ab", "abc", "\xc3\xa9"}),
      CharDfa::literal("ab").complement(), CharDfa::from_states(re("[ab]*c").states())};
  const std::vector<std::pair<uint32_t, uint32_t>> bounds{{0, 0}, {0, 1}, {1, 3}, {2, 5}, {0, 9}, {3, 3}, {5, 40}, {7, 2}};
  for (size_t i = 0; i < languages.size(); ++i) {
    for (const auto& [lo, hi] : bounds) {
      const std::string where = "language " + std::to_string(i) + " length " + std::to_string(lo) + ".." + std::to_string(hi);
      const CharDfa general = CharDfa::intersect(languages[i], CharDfa::length(lo, hi, every));
      const CharDfa cut = CharDfa::intersect(languages[i], CharDfa::length(lo, hi));
      EXPECT_EQ(canonical_form(cut), canonical_form(general)) << where;
      EXPECT_EQ(canonical_form(CharDfa::intersect(CharDfa::length(lo, hi), languages[i])), canonical_form(general)) << where;
      EXPECT_EQ(canonical_form(cut), canonical_form(CharDfa::from_states(cut.states()).minimized())) << where;
      EXPECT_EQ(canonical_form(cut.complement()), canonical_form(general.complement())) << where;
    }
  }
  // Only a finite maximum takes the layered path; minLength alone is the generic product.
  EXPECT_THROW(CharDfa::with_length(re("a+"), 1, kUnbounded), std::logic_error);
  EXPECT_TRUE(CharDfa::intersect(re("a+"), CharDfa::length(3, kUnbounded)).accepts("aaaa"));
  EXPECT_FALSE(CharDfa::intersect(re("a+"), CharDfa::length(3, kUnbounded)).accepts("aa"));
  // The state limit counts the product's states before minimization, as the product does.
  EXPECT_THROW(CharDfa::with_length(re("[a-z]*"), 0, 500, 100), AutomatonLimitError);
  // A complement of a length automaton is not a length automaton.
  const CharDfa not_short = CharDfa::length(0, 2).complement();
  EXPECT_TRUE(CharDfa::intersect(re("a*"), not_short).accepts("aaa"));
  EXPECT_FALSE(CharDfa::intersect(re("a*"), not_short).accepts("aa"));
}

bool json_body_matches(const CharDfa& dfa, const std::string& body) {
  Grammar g;
  g.root = g.add_rule("root", automaton_expr(std::make_shared<CharDfa>(dfa), true));
  auto cg = GrammarAutomaton::compile(g);
  EarleyParser p(*cg);
  return p.advance(body) && p.accepting();
}

TEST(CharDfa, JsonStringBodiesAcceptRawAndEscapedForms) {
  const CharDfa letters = re("[a-c]+");
  EXPECT_TRUE(json_body_matches(letters, "abc"));
  EXPECT_TRUE(json_body_matches(letters, "a\\u0062c"));   // \u0062 = b
  EXPECT_TRUE(json_body_matches(letters, "\\u0061\\u0063"));
  EXPECT_FALSE(json_body_matches(letters, "\\u0041"));    // A
  EXPECT_FALSE(json_body_matches(letters, "a\\u00"));
  const CharDfa quote = re("x\"\\\\\\n/\\u00e9");  // x " \ newline / é
  EXPECT_TRUE(json_body_matches(quote, "x\\\"\\\\\\n/\\u00E9"));
  EXPECT_TRUE(json_body_matches(quote, "x\\u0022\\u005c\\u000a\\/é"));
  EXPECT_FALSE(json_body_matches(quote, "x\"\\\\\\n/é"));   // a raw quote ends the string
  EXPECT_FALSE(json_body_matches(re("\n"), "\n"));        // raw control characters are not JSON
  EXPECT_TRUE(json_body_matches(re("\n"), "\\n"));
  // Hex escapes cover exactly the range, whatever the case of the digits.
  const CharDfa range = re("[\\x{0100}-\\x{01FF}]");
  EXPECT_TRUE(json_body_matches(range, "\\u01aF"));
  EXPECT_TRUE(json_body_matches(range, "\\u0100"));
  EXPECT_FALSE(json_body_matches(range, "\\u0200"));
  EXPECT_FALSE(json_body_matches(range, "\\u00ff"));
}

}  // namespace
}  // namespace lockstep
