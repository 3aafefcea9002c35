// schemas/string_lengths.cpp — see string_lengths.h.
#include "schemas/string_lengths.h"

#include "grammar/grammar.h"

namespace lockstep::schema {

std::optional<std::pair<uint32_t, uint32_t>> length_bounds(const CharDfa& d, std::vector<CodepointRange>& ranges) {
  if (d.lengths()) {  // length() or length_range(): the bounds are known, chain or not
    ranges = Expr::any_codepoint().ranges;
    return d.lengths();
  }
  const auto& st = d.states();
  uint32_t lo = kUnbounded;
  uint32_t q = d.start();
  ranges.clear();
  for (uint32_t i = 0; i <= st.size(); ++i) {
    const CharDfa::State& s = st[q];
    if (s.final && lo == kUnbounded) lo = i;
    if (!s.final && lo != kUnbounded) return std::nullopt;  // finals not an interval
    if (s.edges.empty()) {
      if (!s.final) return std::nullopt;
      return std::make_pair(lo, i);
    }
    const uint32_t t = s.edges[0].target;
    if (ranges.empty()) {
      for (const auto& e : s.edges) ranges.push_back({e.lo, e.hi});
      const bool all = ranges.size() == 1 && ranges[0].lo == 0 && ranges[0].hi == kMaxCodepoint;
      if (!all && ranges != Expr::any_codepoint().ranges) return std::nullopt;
    }
    if (s.edges.size() != ranges.size()) return std::nullopt;
    for (size_t k = 0; k < ranges.size(); ++k) {
      if (s.edges[k].lo != ranges[k].lo || s.edges[k].hi != ranges[k].hi || s.edges[k].target != t) return std::nullopt;
    }
    if (t == q) {
      if (!s.final) return std::nullopt;
      return std::make_pair(lo, kUnbounded);
    }
    q = t;
  }
  return std::nullopt;  // a cycle longer than one state: not a chain
}

}  // namespace lockstep::schema
