// automata/direct_automaton.cpp — the byte DFA of a whole-rule code-point automaton, built
// directly (see rule_automaton.h).
#include <algorithm>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "automata/json_escapes.h"
#include "automata/rule_automaton.h"
#include "automata/utf8_ranges.h"
#include "grammar/char_dfa.h"

namespace lockstep {

namespace {

// The byte DFA of a code-point DFA embedded as a whole rule (Expr::Kind::kAutomaton), built
// directly instead of through a Thompson NFA and subset construction: each code-point state
// keeps its identity, and the partial byte sequences between two code points (UTF-8
// continuation bytes, escapes, \uXXXX digits) are states shared by hash-consing, so equal
// ones exist once. States with the same shape (the same code-point ranges to the same
// pattern of targets: every position of a length counter) share one template of those
// partial states, instantiated with their own targets. Same language as
// Nfa::codepoint_edges.
class DirectAutomatonDfa {
 public:
  DirectAutomatonDfa(const CharDfa& d, bool json, const Rule& rule, uint32_t max_states)
      : d_(d), json_(json), rule_(rule), max_states_(max_states), n_(static_cast<uint32_t>(d.size())) {}

  RuleDfa build() {
    if (n_ > max_states_) too_big();
    std::vector<std::vector<Edge>> char_edges(n_);
    std::unordered_map<std::string, Template> templates;
    std::vector<uint32_t> slots;
    for (uint32_t q = 0; q < n_; ++q) {
      // Shape: ranges with targets numbered by first appearance.
      slots.clear();
      std::string shape;
      for (const auto& e : d_.states()[q].edges) {
        const auto at = std::find(slots.begin(), slots.end(), e.target);
        const auto slot = static_cast<uint32_t>(at - slots.begin());
        if (at == slots.end()) slots.push_back(e.target);
        for (const uint32_t v : {e.lo, e.hi, slot}) shape.append(reinterpret_cast<const char*>(&v), sizeof v);
      }
      auto [it, fresh] = templates.try_emplace(shape);
      if (fresh) it->second = make_template(q);
      char_edges[q] = instantiate(it->second, slots);
    }
    RuleDfa out;
    for (uint32_t q = 0; q < n_ + interior_.size(); ++q) {
      const bool is_char = q < n_;
      out.add_state(is_char && d_.states()[q].final);
      for (const auto& e : is_char ? char_edges[q] : interior_[q - n_]) out.bytes.push_back(e);
      out.close_state();
    }
    return out;
  }

 private:
  using Edge = CompiledGrammar::ByteEdge;
  using Elem = std::vector<ByteRange>;  // the bytes allowed at one position, sorted, disjoint
  struct Item {
    std::vector<Elem> seq;
    uint32_t slot;  // which target (by first appearance in the state's edges) it reaches
  };
  static constexpr uint32_t kLeaf = 0x80000000u;  // template edge target: kLeaf | slot, or a node
  struct Template {
    std::vector<std::vector<Edge>> nodes;  // children before parents
    std::vector<Edge> root;
  };

  [[noreturn]] void too_big() const {
    throw GrammarError(rule_.where, fmt::format("rule '{}' expands into more than {} automaton states; reduce its "
                                                "repetition bounds",
                                                rule_.name, max_states_));
  }

  static std::string key_of(const std::vector<Edge>& edges) {
    std::string key;
    key.reserve(edges.size() * 6);
    for (const auto& e : edges) {
      key += static_cast<char>(e.lo);
      key += static_cast<char>(e.hi);
      key.append(reinterpret_cast<const char*>(&e.target), sizeof e.target);
    }
    return key;
  }

  Template make_template(uint32_t q) const {
    std::vector<Item> items;
    std::vector<uint32_t> slots;
    for (const auto& e : d_.states()[q].edges) {
      const auto at = std::find(slots.begin(), slots.end(), e.target);
      const auto slot = static_cast<uint32_t>(at - slots.begin());
      if (at == slots.end()) slots.push_back(e.target);
      add_items(items, e.lo, e.hi, slot);
    }
    Template t;
    std::unordered_map<std::string, uint32_t> local;
    std::vector<const Item*> all;
    for (const auto& it : items) all.push_back(&it);
    t.root = transitions(all, 0, t, local);
    return t;
  }

  std::vector<Edge> instantiate(const Template& t, const std::vector<uint32_t>& targets) {
    std::vector<uint32_t> ids(t.nodes.size());
    auto map_edges = [&](const std::vector<Edge>& edges) {
      std::vector<Edge> out = edges;
      for (auto& e : out) e.target = e.target & kLeaf ? targets[e.target & ~kLeaf] : ids[e.target];
      return out;
    };
    for (size_t i = 0; i < t.nodes.size(); ++i) {
      std::vector<Edge> edges = map_edges(t.nodes[i]);
      auto [it, fresh] = ids_.try_emplace(key_of(edges), 0);
      if (fresh) {
        if (n_ + interior_.size() >= max_states_) too_big();
        it->second = n_ + static_cast<uint32_t>(interior_.size());
        interior_.push_back(std::move(edges));
      }
      ids[i] = it->second;
    }
    return map_edges(t.root);
  }

  void add_items(std::vector<Item>& items, uint32_t lo, uint32_t hi, uint32_t slot) const {
    std::vector<CodepointRange> raw{{lo, hi}};
    if (json_) raw = Expr::char_class({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}, true).ranges;
    for (const auto& r : Expr::char_class(raw).ranges) {
      const uint32_t a = std::max(r.lo, lo), b = std::min(r.hi, hi);
      if (a > b) continue;
      for (const auto& seq : utf8_sequences(Expr::char_class({{a, b}}).ranges)) {
        Item it{{}, slot};
        for (const auto& br : seq) it.seq.push_back({br});
        items.push_back(std::move(it));
      }
    }
    if (!json_) return;
    static constexpr std::pair<uint32_t, char> kShort[] = {{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {8, 'b'},
                                                           {12, 'f'}, {10, 'n'}, {13, 'r'}, {9, 't'}};
    const auto one = [](char c) { return Elem{{static_cast<uint8_t>(c), static_cast<uint8_t>(c)}}; };
    for (const auto& [cp, letter] : kShort) {
      if (cp >= lo && cp <= hi) items.push_back({{one('\\'), one(letter)}, slot});
    }
    for (const auto& r : Expr::char_class({{lo, std::min<uint32_t>(hi, 0xFFFF)}}).ranges) {
      if (r.lo > r.hi || r.lo > 0xFFFF) continue;
      for (const auto& digits : hex_sequences(r.lo, r.hi)) {
        Item it{{one('\\'), one('u')}, slot};
        for (const auto& [d0, d1] : digits) it.seq.push_back(hex_digit_bytes(d0, d1));
        items.push_back(std::move(it));
      }
    }
  }

  // The template edges after `pos` bytes of each item's sequence (the items share the path
  // to this point).
  static std::vector<Edge> transitions(const std::vector<const Item*>& items, size_t pos, Template& t,
                                       std::unordered_map<std::string, uint32_t>& local) {
    std::vector<uint16_t> points;
    for (const Item* it : items) {
      for (const auto& r : it->seq[pos]) {
        points.push_back(r.lo);
        points.push_back(static_cast<uint16_t>(r.hi + 1));
      }
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    std::vector<Edge> out;
    std::vector<const Item*> sub;
    for (size_t i = 0; i + 1 < points.size(); ++i) {
      const uint16_t a = points[i], b = static_cast<uint16_t>(points[i + 1] - 1);
      sub.clear();
      uint32_t target = UINT32_MAX;
      for (const Item* it : items) {
        const bool covers = std::any_of(it->seq[pos].begin(), it->seq[pos].end(),
                                        [&](const ByteRange& r) { return r.lo <= a && b <= r.hi; });
        if (!covers) continue;
        if (it->seq.size() == pos + 1) {
          target = kLeaf | it->slot;  // a DFA: every sequence ending here reads the same code point
        } else {
          sub.push_back(it);
        }
      }
      if (target == UINT32_MAX) {
        if (sub.empty()) continue;
        std::vector<Edge> edges = transitions(sub, pos + 1, t, local);
        auto [it, fresh] = local.try_emplace(key_of(edges), 0);
        if (fresh) {
          it->second = static_cast<uint32_t>(t.nodes.size());
          t.nodes.push_back(std::move(edges));
        }
        target = it->second;
      }
      if (!out.empty() && out.back().target == target && out.back().hi + 1 == a) {
        out.back().hi = static_cast<uint8_t>(b);
      } else {
        out.push_back({static_cast<uint8_t>(a), static_cast<uint8_t>(b), target});
      }
    }
    return out;
  }

  const CharDfa& d_;
  const bool json_;
  const Rule& rule_;
  const uint32_t max_states_;
  const uint32_t n_;
  std::vector<std::vector<Edge>> interior_;
  std::unordered_map<std::string, uint32_t> ids_;
};

}  // namespace

RuleDfa direct_automaton_dfa(const CharDfa& automaton, bool json_string, const Rule& rule, uint32_t max_states) {
  return DirectAutomatonDfa(automaton, json_string, rule, max_states).build();
}

}  // namespace lockstep
