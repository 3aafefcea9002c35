// automata/inline.cpp — plan which rule references are substituted by the rule bodies.
//
// A rule that is not part of a recursion cycle can be replaced by its body wherever it is
// referenced. The per-rule automata then cover longer stretches of text, so the parser makes
// fewer rule calls and most mask work becomes a plain DFA walk (XGrammar inlines rules for
// the same reason). Rules are processed callees first; bodies above a size bound stay rules.
#include "automata/inline.h"

#include "grammar/char_dfa.h"

#include <algorithm>
#include <span>

namespace lockstep {

namespace {

// How many times walk_nfa builds each child of a machine walk: the separator once per state
// entered by a move that has moves of its own, an element once per move that reads it (a
// move of a state no walk reaches counts too: a front end's machines have none).
std::vector<size_t> machine_uses(const Expr& e) {
  const ElementMachine& m = *e.machine;
  std::vector<size_t> times(e.children.size(), 0);
  std::vector<char> entered(m.num_states(), 0);  // after one element or more
  for (const auto& mv : m.moves) {
    ++times[1 + mv.element];
    entered[mv.target] = 1;
  }
  for (uint32_t s = 0; s < m.num_states(); ++s) {
    if (entered[s] && !m.moves_of(s).empty()) ++times[0];
  }
  return times;
}

// Decides the references of a body in the order a substituting pass would meet them (depth
// first, children in order, never inside a body just substituted: its references were
// decided with its own rule) and returns roughly the automaton states the body expands into
// (repetitions multiply their child; a substituted reference counts as its rule's planned
// size). One walk for both: `decide` says whether a reference to a rule of `planned` size
// is substituted, given what is left of the body's budget.
template <typename Decide>
size_t plan_body(const Expr& e, const std::vector<size_t>& planned, size_t& budget, Decide& decide) {
  constexpr size_t kCap = size_t{1} << 40;
  switch (e.kind) {
    case Expr::Kind::kEmpty: return 1;
    case Expr::Kind::kLiteral: return e.bytes.size();
    case Expr::Kind::kCharClass: return 2 * e.ranges.size() + 1;
    case Expr::Kind::kRuleRef: return decide(e, budget) ? planned[e.rule] : 1;
    case Expr::Kind::kAutomaton: return 4 * e.automaton->size() + 1;
    case Expr::Kind::kRepeat: {
      const size_t child = plan_body(e.children[0], planned, budget, decide);
      const size_t times = e.max == kUnbounded ? size_t{e.min} + 1 : e.max;
      return std::min(kCap, child * std::max<size_t>(1, times) + 1);
    }
    case Expr::Kind::kMachine: {
      // Each child is built once per use (walk_nfa): its substitutions are paid for that
      // many times, out of an equal share of the budget each.
      const std::vector<size_t> times = machine_uses(e);
      size_t n = 1 + 2 * size_t{e.machine->num_states()};
      for (size_t i = 0; i < e.children.size(); ++i) {
        if (times[i] == 0) continue;
        size_t share = budget / times[i];
        const size_t given = share;
        const size_t child = plan_body(e.children[i], planned, share, decide);
        budget -= (given - share) * times[i];
        n = std::min(kCap, n + std::min(kCap / times[i], child) * times[i]);
      }
      return n;
    }
    default: {
      size_t n = 1;
      for (const auto& c : e.children) n = std::min(kCap, n + plan_body(c, planned, budget, decide));
      return n;
    }
  }
}

// References in `e`, each counted in `uses` as often as the automaton builder builds it
// (`times` for `e` itself).
void collect_refs(const Expr& e, std::vector<uint32_t>& out, std::vector<size_t>& uses, size_t times = 1) {
  if (e.kind == Expr::Kind::kRuleRef) {
    out.push_back(e.rule);
    uses[e.rule] += times;
  }
  if (e.kind == Expr::Kind::kMachine) {
    const std::vector<size_t> child_times = machine_uses(e);
    for (size_t i = 0; i < e.children.size(); ++i) {
      if (child_times[i] > 0) collect_refs(e.children[i], out, uses, times * child_times[i]);
    }
    return;
  }
  for (const auto& c : e.children) collect_refs(c, out, uses, times);
}

// A rule's distinct references, sorted: refs[begin[r], begin[r + 1]) (one array for the
// grammar: a grammar of member machines has tens of thousands of rules, and a list each
// was a third of the plan's time).
struct RefGraph {
  std::vector<uint32_t> begin, refs;
  std::span<const uint32_t> of(uint32_t r) const { return {refs.data() + begin[r], begin[r + 1] - begin[r]}; }
};

// Rules on a cycle of the reference graph (Tarjan's strongly connected components).
std::vector<char> recursive_rules(const RefGraph& graph) {
  const size_t n = graph.begin.size() - 1;
  std::vector<int> index(n, -1), low(n, 0);
  std::vector<char> on_stack(n, 0), recursive(n, 0);
  std::vector<uint32_t> stack;
  int counter = 0;
  // Iterative DFS (rule graphs can be deep).
  struct Frame {
    uint32_t v;
    size_t next;
  };
  std::vector<Frame> dfs;
  for (uint32_t root = 0; root < n; ++root) {
    if (index[root] >= 0) continue;
    dfs.assign(1, {root, 0});
    index[root] = low[root] = counter++;
    stack.push_back(root);
    on_stack[root] = 1;
    while (!dfs.empty()) {
      Frame& f = dfs.back();
      const auto refs = graph.of(f.v);
      if (f.next < refs.size()) {
        const uint32_t w = refs[f.next++];
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on_stack[w] = 1;
          dfs.push_back({w, 0});
        } else if (on_stack[w]) {
          low[f.v] = std::min(low[f.v], index[w]);
        }
        continue;
      }
      const uint32_t v = f.v;
      dfs.pop_back();
      if (!dfs.empty()) low[dfs.back().v] = std::min(low[dfs.back().v], low[v]);
      if (low[v] == index[v]) {
        // The component is the stack down to v: recursive when it has two rules or more, or v
        // refers to itself.
        const auto refs_v = graph.of(v);
        const bool self_loop = std::binary_search(refs_v.begin(), refs_v.end(), v);
        const bool cycle = stack.back() != v || self_loop;
        uint32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = 0;
          if (cycle) recursive[w] = 1;
        } while (w != v);
      }
    }
  }
  return recursive;
}

}  // namespace

const Expr& InlinePlan::resolve(const Expr& e) const {
  const Expr* x = &e;
  while (x->kind == Expr::Kind::kRuleRef && substitutes(*x)) x = &body(x->rule);
  return *x;
}

InlinePlan plan_inlining(const Grammar& g, const InlineLimits& limits) {
  const size_t n = g.rules.size();
  RefGraph graph;
  graph.begin.assign(n + 1, 0);
  // How often each rule is referenced: a rule used once is inlined whatever its size.
  std::vector<size_t> uses(n, 0);
  for (size_t r = 0; r < n; ++r) {
    const size_t first = graph.refs.size();
    collect_refs(g.rules[r].body, graph.refs, uses);
    std::sort(graph.refs.begin() + static_cast<ptrdiff_t>(first), graph.refs.end());
    graph.refs.erase(std::unique(graph.refs.begin() + static_cast<ptrdiff_t>(first), graph.refs.end()), graph.refs.end());
    graph.begin[r + 1] = static_cast<uint32_t>(graph.refs.size());
  }
  const std::vector<char> recursive = recursive_rules(graph);

  // Callees first: post-order over the (acyclic part of the) reference graph.
  std::vector<uint32_t> order;
  order.reserve(n);
  std::vector<char> seen(n, 0);
  std::vector<std::pair<uint32_t, size_t>> dfs;
  for (uint32_t start = 0; start < n; ++start) {
    if (seen[start]) continue;
    dfs.assign(1, {start, 0});
    seen[start] = 1;
    while (!dfs.empty()) {
      auto& [v, next] = dfs.back();
      const auto refs = graph.of(v);
      if (next < refs.size()) {
        const uint32_t w = refs[next++];
        if (!seen[w]) {
          seen[w] = 1;
          dfs.push_back({w, 0});
        }
        continue;
      }
      order.push_back(v);
      dfs.pop_back();
    }
  }

  InlinePlan plan;
  plan.grammar_ = &g;
  std::vector<const Expr*> substituted;
  std::vector<size_t> size(n, 0);
  auto decide = [&](const Expr& ref, size_t& budget) {
    const uint32_t r = ref.rule;
    const bool small = size[r] <= limits.max_rule_size || (uses[r] == 1 && size[r] <= limits.max_single_use_size);
    if (recursive[r] || r == g.root || g.rules[r].no_inline || !small || size[r] > budget) return false;
    budget -= size[r];
    substituted.push_back(&ref);
    return true;
  };
  for (uint32_t r : order) {
    size_t budget = limits.max_body_size;
    size[r] = plan_body(g.rules[r].body, size, budget, decide);
  }
  plan.fill(substituted);
  return plan;
}

void InlinePlan::fill(const std::vector<const Expr*>& refs) {
  substituted_.clear();
  slot_bits_ = 0;
  if (refs.empty()) return;
  while ((size_t{1} << slot_bits_) < 2 * refs.size()) ++slot_bits_;
  substituted_.assign(size_t{1} << slot_bits_, nullptr);
  const size_t mask = substituted_.size() - 1;
  for (const Expr* ref : refs) {
    size_t i = slot_of(ref);
    while (substituted_[i] != nullptr && substituted_[i] != ref) i = (i + 1) & mask;
    substituted_[i] = ref;
  }
}

}  // namespace lockstep
