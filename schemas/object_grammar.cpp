// schemas/object_grammar.cpp — GrammarBuilder (grammar_builder.h) for objects: member
// kinds (literal names, key regions, obligations), their grouping, and the member machine.
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "grammar/hash.h"
#include "schemas/grammar_builder.h"
#include "schemas/number_sets.h"
#include "schemas/schema_nesting.h"

namespace lockstep::schema {

DfaPtr GrammarBuilder::names_dfa(const std::vector<std::string>& names, bool complement) {
  std::vector<const std::string*> sorted;
  sorted.reserve(names.size());
  for (const auto& n : names) sorted.push_back(&n);
  std::sort(sorted.begin(), sorted.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
  sorted.erase(std::unique(sorted.begin(), sorted.end(), [](const std::string* a, const std::string* b) { return *a == *b; }),
               sorted.end());
  std::string key;
  for (const std::string* n : sorted) {
    key += std::to_string(n->size());
    key += ':';
    key += *n;
  }
  auto& [trie, others] = name_sets_[key];
  if (!trie) {
    std::vector<std::string> words;
    words.reserve(sorted.size());
    for (const std::string* n : sorted) words.push_back(*n);
    trie = std::make_shared<const CharDfa>(CharDfa::sorted_literals(std::move(words)));
  }
  if (!complement) return trie;
  if (!others) others = std::make_shared<const CharDfa>(trie->complement());
  return others;
}

void GrammarBuilder::merge_kinds(std::vector<Kind>& kinds, uint32_t depth) {
  if (opt_.property_order == JsonSchemaOptions::PropertyOrder::kSchema || kinds.size() < 2) return;
  std::unordered_map<std::string, size_t> group_of;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < kinds.size(); ++i) {
    const uint32_t value = canon(term_rule(kinds[i].value, depth + 1));
    auto [it, fresh] = group_of.try_emplace(fmt::format("{}|{}|{}", kinds[i].satisfies, kinds[i].counts, value), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  if (groups.size() == kinds.size()) return;
  std::vector<Kind> merged;
  merged.reserve(groups.size());
  for (const auto& g : groups) {
    Kind k = kinds[g[0]];
    if (g.size() > 1) {
      std::vector<std::string> names;
      std::vector<DfaPtr> regions;
      for (size_t i : g) {
        if (kinds[i].name) names.push_back(*kinds[i].name);
        else regions.push_back(kinds[i].key_dfa);
      }
      DfaPtr keys = names.empty() ? no_strings() : names_dfa(names, false);
      for (const auto& region : regions) keys = std::make_shared<const CharDfa>(CharDfa::unite(*keys, *region));
      k.key_dfa = std::move(keys);
      k.order = -1;
      k.name = nullptr;
    }
    merged.push_back(std::move(k));
  }
  kinds = std::move(merged);
}

Expr GrammarBuilder::object_expr(const ObjectRec& r, uint32_t depth, const std::string& pointer) {
  const Pieces p = pieces('{', '}', depth);
  // Literal names: declared ones in order, then the others named by rules or obligations.
  // Hashed lookups throughout: objects may declare 100,000 properties.
  std::vector<std::string> names = r.order;
  std::unordered_map<std::string, int> order_of;
  for (size_t i = 0; i < r.order.size(); ++i) order_of.try_emplace(r.order[i], static_cast<int>(i));
  std::unordered_set<std::string> seen(names.begin(), names.end());
  auto add_name = [&](const std::optional<std::string>& n) {
    if (n && seen.insert(*n).second) names.push_back(*n);
  };
  for (const auto& k : r.rules) add_name(k.literal);
  for (const auto& o : r.must) add_name(o.literal);
  // Key languages that split the other keys into regions.
  std::vector<DfaPtr> splitters;
  // covers[j]: splitter j holds every key no literal name claims (it is "all keys but"
  // names this object lists), so a region is inside it: no product needed.
  std::vector<char> covers;
  for (const auto& k : r.rules) {
    if (k.literal) continue;
    splitters.push_back(k.keys);
    covers.push_back(k.all_but && std::all_of(k.all_but->begin(), k.all_but->end(),
                                              [&](const std::string& n) { return seen.contains(n); }));
  }
  for (const auto& o : r.must) {
    if (o.literal) continue;
    splitters.push_back(o.keys);
    covers.push_back(0);
  }
  if (splitters.size() > kMaxKeyPatterns) {
    throw SchemaError(pointer, fmt::format("{} key patterns on one object: at most {} are supported", splitters.size(),
                                           kMaxKeyPatterns));
  }
  const size_t q = r.must.size();
  const std::vector<int> bit_of = obligation_bits(r, pointer);
  // The obligations on a literal name, by name; the others (key patterns) in order.
  std::unordered_map<std::string, std::vector<uint32_t>> must_by_name;
  std::vector<uint32_t> patterned_must;
  for (uint32_t o = 0; o < q; ++o) {
    if (r.must[o].literal) must_by_name[*r.must[o].literal].push_back(o);
    else patterned_must.push_back(o);
  }
  std::vector<Kind> kinds;
  // Splits a member kind by the obligations whose value constraint it may or may not meet.
  auto add_kind = [&](DfaPtr keys, TermPtr value, const std::vector<uint32_t>& met, int order, const std::string* name) {
    std::vector<std::pair<TermPtr, uint64_t>> variants{{value, 0}};
    uint32_t counts = 0;
    for (uint32_t o : met) {
      if (bit_of[o] < 0) {
        ++counts;  // a counted plain required name: met by any value
        continue;
      }
      const uint64_t bit = uint64_t{1} << bit_of[o];
      const TermPtr& need = r.must[o].value;
      std::vector<std::pair<TermPtr, uint64_t>> next;
      for (auto& [v, bits] : variants) {
        if (need->kind == Term::Kind::kTrue) {
          next.push_back({v, bits | bit});
        } else {
          next.push_back({t_and({v, need}), bits | bit});
          next.push_back({t_and({v, t_not(need)}), bits});
        }
      }
      variants = std::move(next);
    }
    for (auto& [v, bits] : variants) {
      if (v->kind == Term::Kind::kFalse) continue;
      kinds.push_back({Expr::empty(), keys, v, bits, counts, order, name});
    }
  };
  std::unordered_map<std::string, std::vector<size_t>> literal_rules;  // name → rules, in order
  std::vector<size_t> pattern_rules;
  for (size_t i = 0; i < r.rules.size(); ++i) {
    if (r.rules[i].literal) literal_rules[*r.rules[i].literal].push_back(i);
    else pattern_rules.push_back(i);
  }
  for (const auto& name : names) {
    std::vector<size_t> applies;
    if (auto it = literal_rules.find(name); it != literal_rules.end()) applies = it->second;
    for (size_t i : pattern_rules) {
      if (r.rules[i].keys->accepts(name)) applies.push_back(i);
    }
    std::sort(applies.begin(), applies.end());
    std::vector<TermPtr> parts;
    for (size_t i : applies) parts.push_back(r.rules[i].value);
    std::vector<uint32_t> met;
    if (auto it = must_by_name.find(name); it != must_by_name.end()) met = it->second;
    for (uint32_t o : patterned_must) {
      if (r.must[o].keys->accepts(name)) met.push_back(o);
    }
    std::sort(met.begin(), met.end());
    const auto pos = order_of.find(name);
    add_kind(key_dfa(name), t_and(std::move(parts)), met, pos == order_of.end() ? -1 : pos->second, &name);
  }
  // The other keys split into regions by the key patterns: each non-empty region is the set
  // of keys that exactly the patterns of its mask match. Refined one pattern at a time,
  // keeping only non-empty regions, so n disjoint patterns cost about n² products, not 2^n.
  struct Region {
    DfaPtr keys;
    uint64_t mask;
  };
  std::vector<Region> regions;
  {
    // The keys no name claims: a covering rule's own keys when it excludes exactly these
    // names (additionalProperties beside properties alone), else the names' complement.
    DfaPtr others = names.empty() ? all_strings() : nullptr;
    size_t splitter = 0;
    for (const auto& k : r.rules) {
      if (k.literal) continue;
      if (covers[splitter++] && !others &&
          std::unordered_set<std::string>(k.all_but->begin(), k.all_but->end()).size() == seen.size()) {
        others = k.keys;
      }
    }
    if (!others) others = names_dfa(names, true);
    uint64_t covering = 0;
    for (size_t j = 0; j < splitters.size(); ++j) covering |= uint64_t{covers[j] != 0} << j;
    // The complement of a covering splitter holds no other key: each region is inside it.
    if (!others->empty()) regions.push_back({others, covering});
    for (size_t j = 0; j < splitters.size(); ++j) {
      if (covers[j]) continue;
      c_.deadline_.check_now(ErrorLocation::at_pointer(pointer));
      const CharDfa outside = splitters[j]->complement();
      std::vector<Region> next;
      for (const Region& region : regions) {
        CharDfa in = CharDfa::intersect(*region.keys, *splitters[j]);
        if (in.empty()) {
          next.push_back(region);
          continue;
        }
        CharDfa out = CharDfa::intersect(*region.keys, outside);
        next.push_back({std::make_shared<CharDfa>(std::move(in)), region.mask | uint64_t{1} << j});
        if (!out.empty()) next.push_back({std::make_shared<CharDfa>(std::move(out)), region.mask});
      }
      if (next.size() > kMaxKeyRegions) {
        throw SchemaError(pointer, fmt::format("the key patterns of this object split its keys into more than {} "
                                               "regions (keys that the same patterns match)",
                                               kMaxKeyRegions));
      }
      regions = std::move(next);
    }
    // In the order of their masks, as the kinds have always been listed.
    std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) { return a.mask < b.mask; });
  }
  for (const Region& region : regions) {
    const uint64_t mask = region.mask;
    std::vector<TermPtr> parts;
    size_t j = 0;
    for (const auto& k : r.rules) {
      if (!k.literal) {
        if (mask >> j & 1) parts.push_back(k.value);
        ++j;
      }
    }
    std::vector<uint32_t> met;  // the patterned obligations follow the rules' patterns
    for (uint32_t o : patterned_must) {
      if (mask >> j++ & 1) met.push_back(o);
    }
    add_kind(region.keys, t_and(std::move(parts)), met, -1, nullptr);
  }
  merge_kinds(kinds, depth);
  for (auto& k : kinds) k.key = key_expr(k.key_dfa);
  return list_expr(object_machine(r, kinds, bit_of, depth, pointer), p, pointer + "-members");
}

std::vector<int> GrammarBuilder::obligation_bits(const ObjectRec& r, const std::string& pointer) {
  // Up to kMaxExactObligations obligations are tracked as a set, a bit each. Past that, plain
  // required names (no value condition) are counted instead, which is exact as long as no
  // key repeats; the others stay a set.
  const size_t q = r.must.size();
  std::vector<int> bit(q, -1);
  int tracked = 0;
  for (size_t o = 0; o < q; ++o) {
    const bool plain = r.must[o].literal && r.must[o].value->kind == Term::Kind::kTrue;
    if (q <= kMaxExactObligations || !plain) bit[o] = tracked++;
  }
  if (static_cast<size_t>(tracked) > kMaxExactObligations) {
    throw SchemaError(pointer, fmt::format("{} required-member conditions on one object are too many to track: at most {} "
                                           "that are more than a plain required name (each doubles the object's "
                                           "states)",
                                           tracked, kMaxExactObligations));
  }
  return bit;
}

Machine GrammarBuilder::object_machine(const ObjectRec& r, const std::vector<Kind>& kinds,
                                      const std::vector<int>& bit_of, uint32_t depth, const std::string& pointer) {
  const bool schema_order = opt_.property_order == JsonSchemaOptions::PropertyOrder::kSchema;
  const size_t q = r.must.size();
  const uint32_t n_counted = static_cast<uint32_t>(std::count(bit_of.begin(), bit_of.end(), -1));
  const uint32_t n_order = static_cast<uint32_t>(r.order.size());
  const bool counting = r.min > 0 || r.max != kUnbounded;
  const uint32_t ccap = r.max != kUnbounded ? r.max : r.min;
  // Which obligation a declared required name stands for (for order checks).
  std::vector<std::pair<uint32_t, int>> required_at;  // (position, obligation's bit, -1 if counted)
  {
    std::unordered_map<std::string, uint32_t> order_of;
    for (uint32_t i = 0; i < n_order; ++i) order_of.try_emplace(r.order[i], i);
    std::vector<int> at(n_order, -1);
    for (size_t o = 0; o < q; ++o) {
      if (!r.must[o].literal || r.must[o].value->kind != Term::Kind::kTrue) continue;
      if (auto pos = order_of.find(*r.must[o].literal); pos != order_of.end()) at[pos->second] = static_cast<int>(o);
    }
    for (uint32_t j = 0; j < n_order; ++j) {
      if (at[j] >= 0) required_at.push_back({j, bit_of[at[j]]});
    }
  }
  struct State {
    uint32_t pos;
    uint64_t sat;      // obligations met, as a set (counted ones excluded)
    uint32_t present;  // counted obligations met
    uint32_t count;
    bool operator==(const State& o) const {
      return pos == o.pos && sat == o.sat && present == o.present && count == o.count;
    }
  };
  struct StateHash {
    size_t operator()(const State& s) const {
      uint64_t h = fnv1a_step(kFnvOffsetBasis, s.sat);
      h = fnv1a_step(h, uint64_t{s.pos} << 32 | s.present);
      return static_cast<size_t>(fold29(fnv1a_step(h, s.count)));
    }
  };
  std::unordered_map<State, uint32_t, StateHash> ids;
  std::vector<State> states;
  Machine m;
  auto id_of = [&](const State& s) {
    auto [it, fresh] = ids.try_emplace(s, static_cast<uint32_t>(states.size()));
    if (fresh) {
      if (states.size() >= engine_limits().object_states) {
        throw LimitError(ErrorLocation::at_pointer(pointer), "object_states", engine_limits().object_states,
                         "the member machine of this object's constraints");
      }
      states.push_back(s);
      m.moves.emplace_back();
      m.accepting.push_back(0);
    }
    return it->second;
  };
  const uint64_t all = (uint64_t{1} << (q - n_counted)) - 1;
  // Each kind's member rule, looked up on its first move rather than on every one.
  std::vector<uint32_t> element_of(kinds.size(), UINT32_MAX);
  // The tracked obligations only one kind meets. When that kind is one literal name, a state
  // holding one of them has read the name already: the name again would be a repeated key,
  // which no parser's object has, so the kind makes no move there. Without this every
  // required name loops on the states after it, about half the rule references of a member
  // machine (q·2^(q−1) of q·2^q).
  std::vector<uint64_t> repeat_bits(kinds.size(), 0);
  {
    uint64_t once = 0, twice = 0;
    for (const Kind& k : kinds) twice |= once & k.satisfies, once |= k.satisfies;
    for (size_t ki = 0; ki < kinds.size(); ++ki) {
      if (kinds[ki].name) repeat_bits[ki] = kinds[ki].satisfies & ~twice;
    }
  }
  id_of({0, 0, 0, 0});
  for (uint32_t i = 0; i < states.size(); ++i) {
    c_.deadline_.check_now(ErrorLocation::at_pointer(pointer));
    const State s = states[i];
    const bool done = s.sat == all && s.present == n_counted;
    m.accepting[i] = done && s.count >= std::min(r.min, ccap);
    if (counting && r.max != kUnbounded && s.count >= r.max) continue;
    auto met = [&](int bit) { return bit >= 0 && (s.sat >> bit & 1) != 0; };
    // The first required declared name at or after s.pos not seen yet (a counted one
    // cannot have been seen: declared names come once, in order).
    uint32_t first_unmet = n_order;
    for (const auto& [j, bit] : required_at) {
      if (j >= s.pos && !met(bit)) {
        first_unmet = j;
        break;
      }
    }
    for (size_t ki = 0; ki < kinds.size(); ++ki) {
      const Kind& k = kinds[ki];
      if ((s.sat & repeat_bits[ki]) != 0) continue;  // its name was read already
      State t = s;
      if (schema_order) {
        const uint32_t to = k.order >= 0 ? static_cast<uint32_t>(k.order) : n_order;
        if (k.order >= 0 && to < s.pos) continue;
        // Skipping a required declared name that was not seen makes the object invalid.
        if (first_unmet < to) continue;
        t.pos = k.order >= 0 ? to + 1 : n_order;
      }
      t.sat |= k.satisfies;
      t.present += k.counts;
      if (t.present > n_counted) continue;  // a repeated key: not a valid object's text
      if (counting) t.count = std::min(s.count + 1, std::max(ccap, 1u));
      const uint32_t target = id_of(t);  // may grow m.moves: index it afterwards
      if (element_of[ki] == UINT32_MAX) {
        element_of[ki] = static_cast<uint32_t>(m.elements.size());
        m.elements.push_back(member(k, depth));
      }
      m.moves[i].push_back({element_of[ki], target});
    }
  }
  return prune(std::move(m));
}

Expr GrammarBuilder::member(const Kind& k, uint32_t depth) {
  const TermAt key{k.value, depth, k.key_dfa.get()};
  auto it = member_rules_.find(key);
  if (it == member_rules_.end()) {
    const Expr value = item(k.value, depth);
    Expr body = pretty_at(depth) ? seq({k.key, lit(": "), value}) : seq({k.key, ws(), lit(":"), ws(), value});
    it = member_rules_.emplace(key, add_rule("member", std::move(body), true)).first;
  }
  return Expr::rule_ref(it->second);
}

}  // namespace lockstep::schema
