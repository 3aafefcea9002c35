// grammar/diagnostics.cpp — productive and reachable rules in linear time (see diagnostics.h).
//
// Productivity is a Horn-clause fixed point (Dowling–Gallier): every expression node waits
// for a number of its children (a sequence for all, a choice for one, a repetition with a
// minimum for its child, a rule reference for its rule); a node whose count reaches zero
// is productive and tells its parent, a productive body tells the references to its rule.
// Each node is settled once, so a 100,000-rule chain costs as much as its text. A machine
// walk (Expr::Kind::kMachine) is no count: it is productive once its productive children
// allow a walk to an accepting state, looked for again as each child settles.
#include "grammar/diagnostics.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "grammar/char_dfa.h"

namespace lockstep {

namespace {

constexpr uint32_t kBodyOf = 1u << 31;  // parent tag: the node is the body of rule (parent & ~kBodyOf)
constexpr uint32_t kOfMachine = 1u << 30;  // parent tag: the node is a child of a machine walk

// Calls f(ref) for every rule reference in `e`, without recursion.
template <typename F>
void visit_refs(const Expr& e, F&& f) {
  thread_local std::vector<const Expr*> stack;  // reused across calls (one per rule); f must not visit again
  stack.assign(1, &e);
  while (!stack.empty()) {
    const Expr* x = stack.back();
    stack.pop_back();
    if (x->kind == Expr::Kind::kRuleRef) f(*x);
    for (const Expr& c : x->children) stack.push_back(&c);
  }
}

}  // namespace

std::vector<char> productive_rules(const Grammar& g, bool* empty_leaves, bool* bad_refs) {
  bool empty_leaf = false, bad_ref = false;
  const auto num_rules = static_cast<uint32_t>(g.rules.size());
  std::vector<uint32_t> parent, need, ready;
  std::vector<std::pair<uint32_t, uint32_t>> waits;  // (rule, reference node)
  std::vector<std::pair<const Expr*, uint32_t>> stack;
  // Machine walks: the walk and which of its children are productive; each walk's node, and
  // each child node's walk and place among the children.
  struct Walk {
    const Expr* e;
    std::vector<char> ok;
  };
  std::vector<Walk> walks;
  std::unordered_map<uint32_t, uint32_t> walk_at;                          // node → walk
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> walk_child;  // node → (walk, child)
  for (uint32_t r = 0; r < num_rules; ++r) {
    stack.assign(1, {&g.rules[r].body, kBodyOf | r});
    while (!stack.empty()) {
      const auto [e, up] = stack.back();
      stack.pop_back();
      const auto node = static_cast<uint32_t>(parent.size());
      if ((up & (kBodyOf | kOfMachine)) == kOfMachine) {
        const uint32_t w = walk_at.at(up & ~kOfMachine);
        walk_child.emplace(node, std::pair{w, static_cast<uint32_t>(e - walks[w].e->children.data())});
      }
      parent.push_back(up);
      uint32_t count = 1;  // 1 with nothing to wait for: never productive
      switch (e->kind) {
        case Expr::Kind::kEmpty:
        case Expr::Kind::kLiteral:
          count = 0;
          break;
        case Expr::Kind::kCharClass:
          count = e->ranges.empty() ? 1 : 0;
          empty_leaf = empty_leaf || count == 1;
          break;
        case Expr::Kind::kAutomaton:
          count = e->automaton && !e->automaton->empty() ? 0 : 1;
          empty_leaf = empty_leaf || count == 1;
          break;
        case Expr::Kind::kRuleRef:
          if (e->rule < num_rules) {
            waits.emplace_back(e->rule, node);
          } else {
            bad_ref = true;
          }
          break;
        case Expr::Kind::kSequence:
          count = static_cast<uint32_t>(e->children.size());
          for (const Expr& c : e->children) stack.emplace_back(&c, node);
          break;
        case Expr::Kind::kChoice:
          for (const Expr& c : e->children) stack.emplace_back(&c, node);
          break;
        case Expr::Kind::kMachine:
          if (node >= kOfMachine) throw std::length_error("productive_rules: 2^30 expression nodes");
          walk_at.emplace(node, static_cast<uint32_t>(walks.size()));
          walks.push_back({e, std::vector<char>(e->children.size(), 0)});
          for (const Expr& c : e->children) stack.emplace_back(&c, node | kOfMachine);
          break;
        case Expr::Kind::kRepeat:
          if (e->min == 0) {
            count = 0;
          } else {
            stack.emplace_back(&e->children[0], node);
          }
          break;
      }
      need.push_back(count);
      if (count == 0) ready.push_back(node);
    }
  }
  // The waiting nodes grouped by the rule they wait on (a counting sort: linear).
  std::vector<uint32_t> wait_begin(num_rules + 1, 0);
  for (const auto& w : waits) ++wait_begin[w.first + 1];
  for (uint32_t r = 0; r < num_rules; ++r) wait_begin[r + 1] += wait_begin[r];
  std::vector<uint32_t> waiting(waits.size());
  {
    std::vector<uint32_t> fill(wait_begin.begin(), wait_begin.end() - 1);
    for (const auto& [rule, node] : waits) waiting[fill[rule]++] = node;
  }

  std::vector<char> productive(num_rules, 0);
  auto settle_one = [&](uint32_t node) {
    if (need[node] > 0 && --need[node] == 0) ready.push_back(node);
  };
  while (!ready.empty()) {
    const uint32_t node = ready.back();
    ready.pop_back();
    const uint32_t up = parent[node];
    if ((up & (kBodyOf | kOfMachine)) == kOfMachine) {
      const uint32_t walk_node = up & ~kOfMachine;
      Walk& w = walks[walk_child.at(node).first];
      w.ok[walk_child.at(node).second] = 1;
      const auto usable = [&](uint32_t el) { return w.ok[1 + el] != 0; };
      if (need[walk_node] > 0 && w.e->machine->has_walk(usable, w.ok[0] != 0)) settle_one(walk_node);
      continue;
    }
    if ((up & kBodyOf) == 0) {
      settle_one(up);
      continue;
    }
    const uint32_t r = up & ~kBodyOf;
    if (productive[r]) continue;
    productive[r] = 1;
    for (uint32_t k = wait_begin[r]; k < wait_begin[r + 1]; ++k) settle_one(waiting[k]);
  }
  if (empty_leaves) *empty_leaves = empty_leaf;
  if (bad_refs) *bad_refs = bad_ref;
  return productive;
}

std::vector<char> reachable_rules(const Grammar& g) {
  std::vector<char> reachable(g.rules.size(), 0);
  if (g.root >= g.rules.size()) return reachable;
  std::vector<uint32_t> todo{g.root};
  reachable[g.root] = 1;
  while (!todo.empty()) {
    const uint32_t r = todo.back();
    todo.pop_back();
    visit_refs(g.rules[r].body, [&](const Expr& ref) {
      if (ref.rule < g.rules.size() && !reachable[ref.rule]) {
        reachable[ref.rule] = 1;
        todo.push_back(ref.rule);
      }
    });
  }
  return reachable;
}

GrammarDiagnostics diagnose_rules(const Grammar& g) {
  const std::vector<char> productive = productive_rules(g);
  const std::vector<char> reachable = reachable_rules(g);
  GrammarDiagnostics out;
  for (uint32_t r = 0; r < g.rules.size(); ++r) {
    const RuleDiagnostic d{r, g.rules[r].name, g.rules[r].where};
    if (!reachable[r]) out.unreachable.push_back(d);
    if (!productive[r]) out.unproductive.push_back(d);
  }
  return out;
}

uint32_t bottom_unproductive_rule(const Grammar& g, const std::vector<char>& productive) {
  // Tarjan's strongly connected components, iterative, over the references to unproductive
  // rules from the root; a component with no edge leaving it is a bottom.
  const auto n = static_cast<uint32_t>(g.rules.size());
  std::vector<uint32_t> edge_begin(n + 1, 0), edges;
  for (uint32_t r = 0; r < n; ++r) {
    if (!productive[r]) {
      visit_refs(g.rules[r].body, [&](const Expr& ref) {
        if (ref.rule < n && !productive[ref.rule]) edges.push_back(ref.rule);
      });
    }
    edge_begin[r + 1] = static_cast<uint32_t>(edges.size());
  }
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> index(n, kNone), low(n, 0), component(n, kNone), members;
  std::vector<std::pair<uint32_t, uint32_t>> calls;  // (rule, next edge)
  uint32_t next_index = 0, components = 0, best = kNone;
  auto enter = [&](uint32_t v) {
    index[v] = low[v] = next_index++;
    members.push_back(v);
    calls.emplace_back(v, edge_begin[v]);
  };
  enter(g.root);
  while (!calls.empty()) {
    auto& [v, k] = calls.back();
    if (k < edge_begin[v + 1]) {
      const uint32_t w = edges[k++];
      if (index[w] == kNone) {
        enter(w);
      } else if (component[w] == kNone) {
        low[v] = std::min(low[v], index[w]);
      }
      continue;
    }
    const uint32_t done = v;
    calls.pop_back();
    if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[done]);
    if (low[done] != index[done]) continue;
    const uint32_t c = components++;
    size_t first = members.size();
    while (members[first - 1] != done) --first;
    --first;
    uint32_t lowest = kNone;
    for (size_t i = first; i < members.size(); ++i) component[members[i]] = c, lowest = std::min(lowest, members[i]);
    bool sink = true;
    for (size_t i = first; i < members.size() && sink; ++i) {
      const uint32_t m = members[i];
      for (uint32_t e = edge_begin[m]; e < edge_begin[m + 1]; ++e) {
        if (component[edges[e]] != c) {
          sink = false;
          break;
        }
      }
    }
    members.resize(first);
    if (sink) best = std::min(best, lowest);
  }
  return best == kNone ? g.root : best;
}

}  // namespace lockstep
