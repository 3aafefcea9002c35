// automata/rule_dfa_cache.h — the process-wide cache of rule automata (internal to the
// grammar compiler).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "automata/bounded_cache.h"
#include "automata/rule_automaton.h"
#include "grammar/hash.h"
#include "grammar/limits.h"

namespace lockstep {

// Rule automata shared by every compilation in the process, by the rule's identity: the
// embedded automaton of an automaton-only rule (automaton_key), or the shape of any other
// rule's body with its callees numbered by first appearance (shape_key). Bounded: when it
// holds more than EngineLimits::rule_automaton_cache_bytes of automata it starts over.
class RuleDfaCache {
 public:
  struct Entry {
    RuleDfa dfa;
    // A whole-rule JSON-string automaton: the code points of the escape rule behind each
    // callee index (json_escapes.h), so a hit names its callees without a scan. Callee i's
    // are escape_ranges[escape_begin[i] .. escape_begin[i + 1]) (end to end: a vector per
    // callee was an allocation per escape rule of every string automaton stored).
    std::vector<CodepointRange> escape_ranges;
    std::vector<uint32_t> escape_begin{0};
    size_t escape_callees() const { return escape_begin.size() - 1; }
  };
  static RuleDfaCache& instance() {
    static RuleDfaCache cache;
    return cache;
  }
  // Entries are shared, not copied in or out: a compiled grammar holds its rules' automata
  // with the names of their callees beside them until it lays them out.
  std::shared_ptr<const Entry> find(const std::vector<uint32_t>& key) {
    auto hit = cache_.find(key);
    return hit ? std::move(*hit) : nullptr;
  }
  void insert(std::vector<uint32_t> key, std::shared_ptr<const Entry> entry) {
    const RuleDfa& dfa = entry->dfa;
    const size_t size = key.size() * 4 + dfa.final.size() * 9 + dfa.bytes.size() * sizeof(dfa.bytes[0]) +
                        dfa.rules.size() * sizeof(dfa.rules[0]);
    cache_.insert(std::move(key), std::move(entry), size);
  }

 private:
  BoundedCache<std::vector<uint32_t>, std::shared_ptr<const Entry>, U32SeqHash<>> cache_{
      []() -> size_t { return engine_limits().rule_automaton_cache_bytes; }};
};

}  // namespace lockstep
