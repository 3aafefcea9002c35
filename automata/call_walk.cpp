// automata/call_walk.cpp — see call_walk.h.
#include "automata/call_walk.h"

#include <algorithm>
#include <vector>

namespace lockstep {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

struct Config {
  uint32_t state;
  uint32_t ret;  // the caller's state once this call completes, or kNone: in the rule itself
  friend bool operator==(const Config&, const Config&) = default;
};

uint32_t byte_target(const GrammarAutomaton& g, uint32_t state, uint8_t byte) {
  for (const auto& e : g.byte_edges(state)) {
    if (byte < e.lo) return kNone;
    if (byte <= e.hi) return e.target;
  }
  return kNone;
}

void add(std::vector<Config>& out, Config c) {
  if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
}

// Every configuration `byte` leads to from `c`.
void step(const GrammarAutomaton& g, Config c, uint8_t byte, std::vector<Config>& out) {
  if (const uint32_t t = byte_target(g, c.state, byte); t != kNone) add(out, {t, c.ret});
  if (c.ret == kNone) {
    for (const auto& e : g.rule_edges(c.state)) {  // enter the callee (it reads at least a byte)
      if (const uint32_t t = byte_target(g, g.rule_start(e.rule), byte); t != kNone) add(out, {t, e.target});
    }
  } else if (g.is_final(c.state)) {
    step(g, {c.ret, kNone}, byte, out);  // the call may complete first
  }
}

bool can_complete(const GrammarAutomaton& g, Config c) {
  return g.is_final(c.state) && (c.ret == kNone || g.is_final(c.ret));
}

}  // namespace

size_t walk_with_calls(const GrammarAutomaton& g, uint32_t state, std::string_view bytes, size_t from,
                       uint32_t* boundaries) {
  std::vector<Config> cur{{state, kNone}}, next;
  for (size_t d = from; d < bytes.size(); ++d) {
    next.clear();
    for (const Config& c : cur) step(g, c, static_cast<uint8_t>(bytes[d]), next);
    if (next.empty()) return d;
    const bool complete = std::any_of(next.begin(), next.end(), [&](Config c) { return can_complete(g, c); });
    boundaries[d + 1] = boundaries[d] + (complete ? 1 : 0);
    cur.swap(next);
  }
  return bytes.size();
}

}  // namespace lockstep
