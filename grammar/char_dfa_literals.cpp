// grammar/char_dfa_literals.cpp — finite languages given as word lists (see char_dfa.h):
// literals() and the set operations intersect() and unite() take on lists.
#include <algorithm>
#include <cstdint>
#include <iterator>

#include <boost/sort/spreadsort/string_sort.hpp>

#include "grammar/char_dfa.h"
#include "grammar/char_dfa_detail.h"
#include "grammar/hash.h"
#include "grammar/intern_table.h"
#include "grammar/utf8.h"

namespace lockstep {

using char_dfa_detail::append_edge;
using char_dfa_detail::check_limit;

namespace {
// The code point of `text` at byte `i` (advancing `i`); std::invalid_argument when it is not
// UTF-8.
uint32_t decode_literal(const std::string& text, size_t& i) {
  const uint32_t cp = utf8::decode(text, i);
  if (cp == utf8::kInvalid) throw std::invalid_argument("literal is not valid UTF-8");
  return cp;
}
// The code points of `text` into `cps`; std::invalid_argument when it is not UTF-8.
void decode_word(const std::string& text, std::vector<uint32_t>& cps) {
  cps.clear();
  for (size_t i = 0; i < text.size();) cps.push_back(decode_literal(text, i));
}
}  // namespace

namespace {
// The registration of sorted_literals (Daciuk, Mihov, Watson & Watson, "Incremental
// construction of minimal acyclic finite-state automata", Computational Linguistics 26(1),
// 2000, section 3): `texts` sorted and distinct, read word by word. Only the path of the last
// word is open; when the next word leaves it, the states below the common prefix can get no
// more edges, and each is replaced by an equal registered state or registered itself: equal
// means the same finality and the same edges to registered states, a state's children being
// settled before it. Every registered state is one of the minimal automaton's.
struct LiteralRegistry {
  std::vector<CharDfa::State> reg;  // registered states
  uint32_t start = 0;
  bool sorted = true;   // false: `texts` was not sorted and distinct (nothing else is set)
  bool stopped = false;  // more than `stop_after` states were registered (the rest unread)
};

LiteralRegistry register_literals(const std::vector<std::string>& texts, size_t stop_after) {
  using Edge = CharDfa::Edge;
  LiteralRegistry out;
  struct Open {
    bool final = false;
    std::vector<Edge> edges;  // sorted; the last edge leads to the next open state (target unset)
  };
  std::vector<Open> path(1);  // path[0]: the start; path[i + 1] after the i-th code point
  size_t open = 1;            // path[0..open) is the last word's path (entries past it are reused)
  std::vector<CharDfa::State>& reg = out.reg;
  SeqInternTable<> registered(2 * texts.size());  // numbered as reg
  std::vector<uint32_t> key;
  auto settle = [&](const Open& o) {
    key.assign(1, o.final ? 1u : 0u);
    for (const Edge& e : o.edges) char_dfa_detail::append_class_edge(key, e.lo, e.hi, e.target);
    const auto [id, fresh] = registered.intern(key);
    if (fresh) {
      CharDfa::State& st = reg.emplace_back();
      st.final = o.final;
      for (const Edge& e : o.edges) append_edge(st.edges, e.lo, e.hi, e.target);
      check_limit(reg.size());  // every registered state is one of the result's
    }
    return id;
  };
  auto close_below = [&](size_t depth) {  // settles path[depth + 1 ..]
    for (; open > depth + 1; --open) path[open - 2].edges.back().target = settle(path[open - 1]);
  };
  std::vector<uint32_t> cps, last;
  for (size_t w = 0; w < texts.size(); ++w) {
    decode_word(texts[w], cps);
    size_t common = 0;
    if (w > 0) {
      while (common < cps.size() && common < last.size() && cps[common] == last[common]) ++common;
      // Sorted and distinct: the word goes on past the common prefix, with a greater code
      // point than the last word's there (UTF-8 byte order is code point order).
      if (common == cps.size() || (common < last.size() && cps[common] < last[common])) {
        out.sorted = false;
        return out;
      }
    }
    close_below(common);
    if (reg.size() > stop_after) {
      out.stopped = true;
      return out;
    }
    for (size_t i = common; i < cps.size(); ++i) {
      path[open - 1].edges.push_back(Edge{cps[i], cps[i], 0});
      if (path.size() == open) path.emplace_back();
      Open& next = path[open++];
      next.final = false;
      next.edges.clear();
    }
    path[open - 1].final = true;
    last.swap(cps);
  }
  close_below(0);
  out.start = settle(path[0]);
  out.stopped = reg.size() > stop_after;
  return out;
}
}  // namespace

CharDfa CharDfa::literal(std::string_view text) { return sorted_literals({std::string(text)}); }

void CharDfa::sort_words(std::vector<std::string>& words) {
  // References sorted (16 bytes: the bytes, the length, the index), then each string moved
  // once into its place: the radix sort moves its elements a few times each, and a string's
  // move copies its inline bytes (a fifth of compiling a 50,000-string enum was such moves).
  struct Ref {
    const char* data;
    uint32_t size, index;
  };
  std::vector<Ref> refs;
  refs.reserve(words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    refs.push_back({words[i].data(), static_cast<uint32_t>(words[i].size()), static_cast<uint32_t>(i)});
  }
  auto view = [](const Ref& r) { return std::string_view(r.data, r.size); };
  boost::sort::spreadsort::string_sort(
      refs.begin(), refs.end(), [](const Ref& r, size_t k) { return static_cast<unsigned char>(r.data[k]); },
      [](const Ref& r) { return static_cast<size_t>(r.size); },
      [&](const Ref& x, const Ref& y) { return view(x) < view(y); });
  std::vector<std::string> sorted;
  sorted.reserve(words.size());
  for (const Ref& r : refs) {
    // (A string moved out leaves its reference stale: the last one kept is compared.)
    if (!sorted.empty() && view(r) == sorted.back()) continue;
    sorted.push_back(std::move(words[r.index]));
  }
  words = std::move(sorted);
}

size_t CharDfa::literal_states(std::vector<std::string> words, size_t cap) {
  if (words.empty()) return 0;
  if (!std::is_sorted(words.begin(), words.end()) ||
      std::adjacent_find(words.begin(), words.end()) != words.end()) {
    sort_words(words);
  }
  const LiteralRegistry r = register_literals(words, cap);
  return r.stopped ? cap + 1 : r.reg.size();
}

CharDfa CharDfa::literals(const std::vector<std::string>& utf8) {
  std::vector<std::string> words = utf8;
  sort_words(words);
  return sorted_literals(std::move(words));
}

CharDfa CharDfa::sorted_literals(std::vector<std::string> texts) {
  // The minimal automaton built word by word from sorted input, without the trie
  // (register_literals). Time linear in the bytes; memory the minimal automaton's, plus one
  // word.
  if (texts.size() == 1) {  // one word: its chain is minimal as it stands
    CharDfa d;
    // Decoded twice, to count and to build, where a vector of its code points cost an
    // allocation per property name of a large schema.
    const std::string& text = texts[0];
    size_t count = 0;
    for (size_t i = 0; i < text.size(); ++count) decode_literal(text, i);
    check_limit(count + 1);
    d.states_.reserve(count + 1);
    d.states_.emplace_back();
    for (size_t i = 0; i < text.size();) {
      const uint32_t cp = utf8::decode(text, i);
      const auto next = static_cast<uint32_t>(d.states_.size());
      d.states_.back().edges.push_back(Edge{cp, cp, next});
      d.states_.emplace_back();
    }
    d.states_.back().final = true;
    d.minimal_ = true;
    d.words_ = std::make_shared<const std::vector<std::string>>(std::move(texts));
    return d;
  }
  LiteralRegistry r = register_literals(texts, SIZE_MAX);
  if (!r.sorted) {  // not as documented: sorted here, once
    sort_words(texts);
    return sorted_literals(std::move(texts));
  }
  std::vector<State>& reg = r.reg;
  const uint32_t start = r.start;
  // Number the states in the order a depth-first walk from the start first meets them,
  // edges in code point order: the trie's creation order, class by class (each class
  // numbered by its first trie state), so the start is state 0.
  std::vector<uint32_t> id(reg.size(), UINT32_MAX), order;
  order.reserve(reg.size());
  std::vector<std::pair<uint32_t, uint32_t>> stack{{start, 0}};
  id[start] = 0;
  order.push_back(start);
  while (!stack.empty()) {
    auto& [s, k] = stack.back();
    if (k == reg[s].edges.size()) {
      stack.pop_back();
      continue;
    }
    const uint32_t t = reg[s].edges[k++].target;
    if (id[t] != UINT32_MAX) continue;
    id[t] = static_cast<uint32_t>(order.size());
    order.push_back(t);
    stack.emplace_back(t, 0);
  }
  CharDfa d;
  d.states_.resize(order.size());
  for (uint32_t i = 0; i < order.size(); ++i) {
    State& o = d.states_[i];
    o = std::move(reg[order[i]]);
    for (Edge& e : o.edges) e.target = id[e.target];
  }
  d.minimal_ = true;
  d.words_ = std::make_shared<const std::vector<std::string>>(std::move(texts));
  return d;
}

std::optional<std::vector<std::string>> CharDfa::intersect_words(const CharDfa& a, const CharDfa& b) {
  const auto* wa = a.words();
  const auto* wb = b.words();
  if (!wa && !wb) return std::nullopt;
  std::vector<std::string> out;
  if (wa && wb) {
    std::set_intersection(wa->begin(), wa->end(), wb->begin(), wb->end(), std::back_inserter(out));
  } else {
    // The listed words the other automaton accepts: one run per word, no product.
    const CharDfa& other = wa ? b : a;
    for (const std::string& w : wa ? *wa : *wb) {
      if (other.accepts(w)) out.push_back(w);
    }
  }
  return out;
}

std::optional<std::vector<std::string>> CharDfa::unite_words(const CharDfa& a, const CharDfa& b) {
  const auto* wa = a.words();
  const auto* wb = b.words();
  if (!wa || !wb) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(wa->size() + wb->size());
  std::set_union(wa->begin(), wa->end(), wb->begin(), wb->end(), std::back_inserter(out));
  return out;
}

}  // namespace lockstep
