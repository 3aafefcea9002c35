// grammar/char_dfa_literals.cpp — finite languages given as word lists (see char_dfa.h):
// literals() and the set operations intersect() and unite() take on lists.
#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "grammar/char_dfa.h"
#include "grammar/char_dfa_detail.h"
#include "grammar/hash.h"
#include "grammar/utf8.h"

namespace lockstep {

using char_dfa_detail::append_edge;
using char_dfa_detail::check_limit;

namespace {
using VecHash = U32SeqHash</*SeedWithLength=*/true>;
}  // namespace

CharDfa CharDfa::literal(std::string_view text) { return sorted_literals({std::string(text)}); }

CharDfa CharDfa::literals(const std::vector<std::string>& utf8) {
  std::vector<std::string> words = utf8;
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return sorted_literals(std::move(words));
}

CharDfa CharDfa::sorted_literals(std::vector<std::string> texts) {
  // A trie of the code points (a DFA as it stands), then minimized: shared suffixes merge.
  // The trie is acyclic, so it is minimized bottom-up (Revuz, "Minimisation of acyclic
  // deterministic automata in linear time", TCS 1992): two states are equivalent exactly
  // when they agree on finality and on the classes their edges lead to. A state's children
  // were created after it, so a pass from the last state to the first sees every child's
  // class before its parent's.
  std::vector<State> states(1);
  for (const std::string& text : texts) {
    uint32_t q = 0;
    for (size_t i = 0; i < text.size();) {
      const uint32_t cp = utf8::decode(text, i);
      if (cp == utf8::kInvalid) throw std::invalid_argument("literal is not valid UTF-8");
      auto& edges = states[q].edges;
      auto it = std::lower_bound(edges.begin(), edges.end(), cp, [](const Edge& e, uint32_t c) { return e.lo < c; });
      if (it != edges.end() && it->lo == cp) {
        q = it->target;
        continue;
      }
      const uint32_t t = static_cast<uint32_t>(states.size());
      edges.insert(it, Edge{cp, cp, t});
      states.emplace_back();
      check_limit(states.size());
      q = t;
    }
    states[q].final = true;
  }
  if (texts.size() == 1) {  // one chain: minimal as it stands
    CharDfa d;
    d.states_ = std::move(states);
    d.minimal_ = true;
    d.words_ = std::make_shared<const std::vector<std::string>>(std::move(texts));
    return d;
  }
  const size_t n = states.size();
  std::vector<uint32_t> cls(n);
  std::unordered_map<std::vector<uint32_t>, uint32_t, VecHash> class_of;
  uint32_t classes = 0;
  std::vector<uint32_t> key;
  for (size_t s = n; s-- > 0;) {
    // Finality, then the edges with targets as classes, adjacent ranges to one class merged.
    key.assign(1, states[s].final ? 1u : 0u);
    for (const Edge& e : states[s].edges) {
      char_dfa_detail::append_class_edge(key, e.lo, e.hi, cls[e.target]);
    }
    cls[s] = class_of.try_emplace(key, classes).first->second;
    if (cls[s] == classes) ++classes;
  }
  // Number the classes by their lowest state, as minimized() does (the start's class first),
  // each read from that state.
  std::vector<uint32_t> id(classes, UINT32_MAX), rep;
  for (uint32_t s = 0; s < n; ++s) {
    if (id[cls[s]] == UINT32_MAX) id[cls[s]] = static_cast<uint32_t>(rep.size()), rep.push_back(s);
  }
  CharDfa d;
  d.states_.resize(rep.size());
  for (uint32_t i = 0; i < rep.size(); ++i) {
    const State& st = states[rep[i]];
    State& o = d.states_[i];
    o.final = st.final;
    for (const Edge& e : st.edges) {
      const uint32_t t = id[cls[e.target]];
      append_edge(o.edges, e.lo, e.hi, t);
    }
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
