// schemas/number_sets.cpp — shared number automata and memoized operations (number_sets.h).
#include "schemas/number_sets.h"

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "schemas/number_conditions.h"

namespace lockstep::schema {

namespace {

// Automata kept for the life of the process: a pointer registered here is never freed, so
// operand identity is a sound key for the results of operations.
class Registry {
 public:
  static Registry& get() {
    static Registry r;
    return r;
  }

  // The automaton named `key`, made by `make` on first use. One too large to keep stays
  // among the last few made (a schema repeats its own constraints).
  DfaPtr named(const std::string& key, const std::function<CharDfa()>& make) {
    if (DfaPtr d = find(key)) return d;
    DfaPtr d = wrap(make());
    std::lock_guard lock(mutex_);
    if (auto it = named_.find(key); it != named_.end()) return it->second;
    if (keep(d)) {
      named_.emplace(key, d);
    } else {
      recent_.emplace_back(key, d);
      if (recent_.size() > kRecent) recent_.pop_front();
    }
    return d;
  }

  // The automaton named `key` if made already.
  DfaPtr find(const std::string& key) {
    std::lock_guard lock(mutex_);
    if (auto it = named_.find(key); it != named_.end()) return it->second;
    for (const auto& [k, d] : recent_) {
      if (k == key) return d;
    }
    return nullptr;
  }

  // Records that `sub` ⊆ `super` (both kept), so that their intersection is `sub`.
  void note_subset(const DfaPtr& super, const DfaPtr& sub) {
    std::lock_guard lock(mutex_);
    if (kept_.count(super.get()) && kept_.count(sub.get())) subsets_.emplace(super.get(), sub.get());
  }
  bool subset(const CharDfa* super, const CharDfa* sub) {
    std::lock_guard lock(mutex_);
    return subsets_.count({super, sub}) > 0;
  }

  // The result of an operation: an automaton, whether it was taken on the operands' plain
  // texts only (their product with exponent texts was too large), the states its product
  // walked (charged to the schema's ProductBudget, again when memoized), and `over`: the
  // budget left cut the product short (a result for this budget only, not memoized).
  struct Result {
    DfaPtr dfa;
    bool plain = false;
    size_t cost = 0;
    bool over = false;
  };

  // op(a, b) (b may be null), memoized when the operands are registered; otherwise among the
  // last few such operations, which hold their operands (so their addresses stay theirs): a
  // schema repeats its own combinations (oneOf's branches are each intersected with the
  // complements of the others), and its large intermediate automata are not registered.
  Result operation(char op, const DfaPtr& a, const DfaPtr& b, const std::function<Result()>& make) {
    const auto key = std::make_tuple(op, a.get(), b.get());
    bool memo = false;
    {
      std::lock_guard lock(mutex_);
      memo = kept_.count(a.get()) && (!b || kept_.count(b.get()));
      if (memo) {
        if (auto it = results_.find(key); it != results_.end()) return it->second;
      } else {
        for (const auto& x : recent_results_) {
          if (x.op == op && x.a == a && x.b == b) return x.result;
        }
      }
    }
    Result r = make();
    if (r.over) return r;
    std::lock_guard lock(mutex_);
    if (!memo) {
      recent_results_.push_back({op, a, b, r});
      if (recent_results_.size() > kRecent) recent_results_.pop_front();
      return r;
    }
    if (auto it = results_.find(key); it != results_.end()) return it->second;
    if (keep(r.dfa)) results_.emplace(key, r);
    return r;
  }

  static DfaPtr wrap(CharDfa d) { return d.empty() ? no_strings() : std::make_shared<const CharDfa>(std::move(d)); }

 private:

  // Registers `d` when the budget allows (the caller holds the lock).
  bool keep(const DfaPtr& d) {
    if (d == no_strings() || kept_.count(d.get())) return true;
    if (d->size() > kMaxSharedAutomaton || states_ + d->size() > kMaxSharedStates) return false;
    states_ += d->size();
    kept_.insert(d.get());
    return true;
  }

  Registry() {
    kept_.insert(no_strings().get());
    kept_.insert(every_number().get());
  }

  std::mutex mutex_;
  static constexpr size_t kRecent = 32;
  std::unordered_map<std::string, DfaPtr> named_;
  std::deque<std::pair<std::string, DfaPtr>> recent_;
  std::map<std::tuple<char, const CharDfa*, const CharDfa*>, Result> results_;
  struct RecentResult {
    char op;
    DfaPtr a, b;
    Result result;
  };
  std::deque<RecentResult> recent_results_;
  std::unordered_set<const CharDfa*> kept_;
  std::set<std::pair<const CharDfa*, const CharDfa*>> subsets_;  // (super, sub)
  size_t states_ = 0;
};

bool empty(const DfaPtr& d) { return !d || d == no_strings(); }

constexpr uint8_t kCompare = 1, kMultiple = 2, kPlain = 4;

// Where a set of `region` is exact (the intersection of the regions its bits name).
const CharDfa& region_dfa(uint8_t region) {
  if (region & kPlain) return plain_numbers();
  return region_numbers(region & kCompare, region & kMultiple);
}

// The same, shared (operands of products are shared automata), each made on first use.
DfaPtr region_set(uint8_t region) {
  static std::mutex mutex;
  static std::array<DfaPtr, 8> sets;
  std::lock_guard lock(mutex);
  DfaPtr& d = sets[region & 7];
  if (!d) d = std::make_shared<const CharDfa>(region_dfa(region & 7));
  return d;
}

NumberSet set(DfaPtr texts, uint8_t region, bool lost, std::shared_ptr<const NumberConstraints> formula = nullptr) {
  if (empty(texts)) return no_number_set();
  return {std::move(texts), region, std::move(formula), lost};
}

// Both conjunctions at once (a constraint of both once).
NumberConstraints merged(const NumberConstraints& a, const NumberConstraints& b) {
  NumberConstraints m = a;
  auto add_bounds = [](std::vector<NumberConstraints::Bound>& to, const std::vector<NumberConstraints::Bound>& from) {
    for (const auto& x : from) {
      const bool dup = std::any_of(to.begin(), to.end(), [&](const NumberConstraints::Bound& y) {
        return y.strict == x.strict && y.value.to_string() == x.value.to_string();
      });
      if (!dup) to.push_back(x);
    }
  };
  add_bounds(m.at_least, b.at_least);
  add_bounds(m.at_most, b.at_most);
  auto add_values = [](std::vector<Decimal>& to, const std::vector<Decimal>& from) {
    for (const auto& x : from) {
      const bool dup = std::any_of(to.begin(), to.end(), [&](const Decimal& y) { return y.to_string() == x.to_string(); });
      if (!dup) to.push_back(x);
    }
  };
  add_values(m.multiple_of, b.multiple_of);
  add_values(m.not_multiple_of, b.not_multiple_of);
  m.integer = a.integer || b.integer;
  return m;
}

// Where the automaton of the conjunction `c` (bounds already at zero where they can be) is
// exact: comparisons' region for a bound other than 0, multiples' for a multiple.
uint8_t conjunction_region(const NumberConstraints& c) {
  bool compare = false;
  for (const auto* list : {&c.at_least, &c.at_most}) {
    for (const auto& b : *list) compare = compare || !b.value.is_zero();
  }
  const bool multiples = c.integer || !c.multiple_of.empty() || !c.not_multiple_of.empty();
  return (compare ? kCompare : 0) | (multiples ? kMultiple : 0);
}

// The texts of `x` without exponent: its automaton without the edges on 'e' and 'E' (in a
// number text they only begin the exponent), minimized; `x` itself when it has none.
// Memoized: a schema's sets meet the plain texts of one operand again and again once its
// products grow too large.
DfaPtr plain_texts(const DfaPtr& x) {
  auto is_exponent_mark = [](const CharDfa::Edge& e) {
    return (e.lo <= 'E' && 'E' <= e.hi) || (e.lo <= 'e' && 'e' <= e.hi);
  };
  const bool has_exponents = std::ranges::any_of(x->states(), [&](const CharDfa::State& st) {
    return std::ranges::any_of(st.edges, is_exponent_mark);
  });
  if (!has_exponents) return x;
  return Registry::get()
      .operation('p', x, nullptr,
                 [&] {
                   CharDfa::PooledStates states;
                   for (const auto& st : x->states()) {
                     states.first.push_back(static_cast<uint32_t>(states.edges.size()));
                     for (const auto& e : st.edges) {
                       // The edge's range without 'E' and 'e' (a range holding either is only
                       // that letter in a number automaton, but nothing here relies on it).
                       uint32_t lo = e.lo;
                       for (const uint32_t mark : {uint32_t{'E'}, uint32_t{'e'}}) {
                         if (mark < lo || mark > e.hi) continue;
                         if (lo < mark) states.edges.push_back({lo, mark - 1, e.target});
                         lo = mark + 1;
                       }
                       if (lo <= e.hi) states.edges.push_back({lo, e.hi, e.target});
                     }
                     states.past.push_back(static_cast<uint32_t>(states.edges.size()));
                     states.final.push_back(st.final ? 1 : 0);
                   }
                   return Registry::Result{Registry::wrap(CharDfa::minimal_from(states)), false};
                 })
      .dfa;
}

thread_local ProductBudget* current_budget = nullptr;

// The intersection or union of the plain texts of x and y.
DfaPtr plain_product(const DfaPtr& x, const DfaPtr& y, bool intersection) {
  // Held here: an automaton too large for the registry to keep has no other owner.
  const DfaPtr a = plain_texts(x), b = plain_texts(y);
  return Registry::wrap(intersection ? CharDfa::intersect(*a, *b) : CharDfa::unite(*a, *b));
}

// The product of x and y; past kMaxProductStates (the exponent machinery of both multiplies
// out, e.g. unions and complements of several multipleOf), the product of their plain texts.
// Past `left` (the schema's budget, when smaller), the same, marked `over`. An intersection
// with a set of plain texts only (`x_plain`, `y_plain`: one made by such a product) is one of
// plain texts from the start: the same language, without first walking the other operand's
// exponent machinery.
Registry::Result product(const DfaPtr& x, bool x_plain, const DfaPtr& y, bool y_plain, bool intersection,
                         size_t left) {
  if (intersection && (x_plain || y_plain)) return {plain_product(x, y, true), false};  // nothing lost
  const size_t limit = std::min(kMaxProductStates, left);
  size_t explored = 0;
  try {
    if (limit > 0) {
      CharDfa d = intersection ? CharDfa::intersect(*x, *y, limit, &explored) : CharDfa::unite(*x, *y, limit, &explored);
      return {Registry::wrap(std::move(d)), false, explored};
    }
  } catch (const AutomatonLimitError&) {
  }
  if (limit < kMaxProductStates) return {plain_product(x, y, intersection), true, left + 1, true};
  return {plain_product(x, y, intersection), true, kMaxProductStates};
}

// op(x, y) through the registry, within the schema's ProductBudget: `make(left)` is the
// product within `left` states. A result (memoized or not) whose product cost more than is
// left is taken on plain texts (make(0): no states left), and the budget is spent.
Registry::Result budgeted(char op, const DfaPtr& x, const DfaPtr& y,
                          const std::function<Registry::Result(size_t)>& make) {
  const size_t left = ProductBudget::left();
  Registry::Result r = Registry::get().operation(op, x, y, [&] { return make(left); });
  if (r.cost > left) {
    ProductBudget::take(left);
    return r.plain ? r : make(0);
  }
  ProductBudget::take(r.cost);
  return r;
}

}  // namespace

ProductBudget::ProductBudget(size_t states) : left_(states), outer_(current_budget) { current_budget = this; }
ProductBudget::~ProductBudget() { current_budget = outer_; }
size_t ProductBudget::left() { return current_budget ? current_budget->left_ : SIZE_MAX; }
void ProductBudget::take(size_t states) {
  if (current_budget) current_budget->left_ -= std::min(states, current_budget->left_);
}

DfaPtr every_number() {
  static const DfaPtr d = std::make_shared<const CharDfa>(all_numbers());
  return d;
}

NumberSet all_number_set() {
  static const auto none = std::make_shared<const NumberConstraints>();
  return {every_number(), 0, none, false};
}

NumberSet no_number_set() { return {no_strings(), 0, nullptr, false}; }

const NumberSet& made(const NumberSet& s) {
  if (!s.pending) return s;
  NumberSetPending& p = *s.pending;
  if (!p.made) {
    NumberSet n = p.make();
    p.made = n.pending ? made(n) : std::move(n);
    p.make = nullptr;  // what it held (operands, the schema's place) is no longer needed
  }
  return *p.made;
}

NumberSet pending_numbers(const NumberConstraints& given, std::function<NumberSet()> make) {
  std::optional<NumberConstraints> c;
  try {
    c = with_bounds_at_zero(given);
    // A multiple whose own walk would be refused is made now, with its errors where they were.
    for (const auto* list : {&c->multiple_of, &c->not_multiple_of}) {
      for (const Decimal& m : *list) number_conditions::PlainMultiple(m, kMaxNumberStates);
    }
  } catch (const std::invalid_argument&) {
    return make();
  }
  Registry& r = Registry::get();
  const std::string key = c->key();
  // A memoized automaton costs no more than a pending set, and has its own fields.
  if (c->empty() || r.find(key) || r.find("plain " + key)) return make();
  NumberSet n;
  n.region = conjunction_region(*c);
  n.formula = std::make_shared<const NumberConstraints>(std::move(*c));
  n.pending = std::make_shared<NumberSetPending>(NumberSetPending{std::move(make), std::nullopt});
  return n;
}

namespace {
bool conjunction(const NumberSet& x);

// numbers_and() of the operands' automata (made first).
NumberSet numbers_and_made(const NumberSet& given_a, const NumberSet& given_b) {
  const NumberSet& a = made(given_a);
  const NumberSet& b = made(given_b);
  const uint8_t region = a.region | b.region;
  const bool lost = a.lost_exponents || b.lost_exponents;
  if (empty(a.texts) || empty(b.texts)) return no_number_set();
  if (a.texts == every_number() || a.texts == b.texts) return {b.texts, region, b.formula, lost};
  if (b.texts == every_number()) return {a.texts, region, a.formula, lost};
  Registry& r = Registry::get();
  if (r.subset(a.texts.get(), b.texts.get())) return {b.texts, region, b.formula, lost};
  if (r.subset(b.texts.get(), a.texts.get())) return {a.texts, region, a.formula, lost};
  if (a.formula && b.formula && !lost) {
    // One walk for the merged conjunction (within its budget; else the product below).
    const NumberConstraints m = with_bounds_at_zero(merged(*a.formula, *b.formula));
    const std::string key = m.key();
    if (key == a.formula->key() && a.region == region) return a;  // b adds nothing a has not
    if (key == b.formula->key() && b.region == region) return b;
    try {
      bool plain_only = false;
      NumberSet n = numbers_constrained(m, plain_only);
      if (!plain_only) return n;
    } catch (const std::invalid_argument&) {
    }
  }
  // Operands in address order (not a structured binding: clang before 16 cannot capture one).
  const bool in_order = a.texts.get() < b.texts.get();
  const auto& x = in_order ? a.texts : b.texts;
  const auto& y = in_order ? b.texts : a.texts;
  const bool x_plain = (in_order ? a : b).region & kPlain, y_plain = (in_order ? b : a).region & kPlain;
  const auto p = budgeted('&', x, y, [&](size_t left) { return product(x, x_plain, y, y_plain, true, left); });
  return set(p.dfa, p.plain ? kPlain : region, lost || p.plain);
}
}  // namespace

NumberSet numbers_and(const NumberSet& a, const NumberSet& b) {
  // Every number is neutral: a pending operand stays pending (each keyword group of a
  // subschema that says nothing of numbers is intersected with it).
  auto neutral = [](const NumberSet& x) {
    return !x.pending && x.texts == every_number() && x.region == 0 && !x.lost_exponents;
  };
  if (b.pending && neutral(a)) return b;
  if (a.pending && neutral(b)) return a;
  // A pending conjunction meeting another conjunction: their merged walk, pending in turn
  // (numbers_and_all), so the pending operand's own automaton is not made for a set that a
  // later intersection or complement merges again (a subschema's type: integer, then its
  // minimum and multipleOf, then an allOf of multiples: Handwritten num1).
  if ((a.pending || b.pending) && conjunction(a) && conjunction(b)) return numbers_and_all({&a, &b});
  return numbers_and_made(a, b);
}

namespace {

// A set made from a conjunction, with all its exponent texts, or pending (every number is
// neutral): numbers_and_all merges these into one walk.
bool conjunction(const NumberSet& x) {
  return x.pending || (x.formula && !x.lost_exponents && x.texts != every_number());
}

// numbers_and_all() with its automaton made now.
NumberSet numbers_and_all_made(const std::vector<const NumberSet*>& sets, const std::optional<NumberConstraints>& m,
                               size_t conjunctions) {
  NumberSet n = all_number_set();
  bool walked = false;
  if (conjunctions >= 2) {
    try {
      bool plain_only = false;
      NumberSet w = numbers_constrained(*m, plain_only);
      if (!plain_only) n = std::move(w), walked = true;
    } catch (const std::invalid_argument&) {
    }
  }
  for (const NumberSet* x : sets) {
    if (!walked || !conjunction(*x)) n = numbers_and_made(n, *x);
  }
  return n;
}

}  // namespace

NumberSet numbers_and_all(const std::vector<const NumberSet*>& sets) {
  std::optional<NumberConstraints> m;
  size_t conjunctions = 0, others = 0;
  const NumberSet* last = nullptr;
  for (const NumberSet* x : sets) {
    if (!x->pending && empty(x->texts)) return no_number_set();
    if (conjunction(*x)) {
      m = m ? merged(*m, *x->formula) : *x->formula, ++conjunctions, last = x;
    } else if (x->texts != every_number() || x->region != 0) {
      ++others;
    }
  }
  if (others == 0 && conjunctions == 1) return *last;
  if (others == 0 && conjunctions >= 2) {
    // Conjunctions only: their merged walk, made when it is used (an intersection or a
    // complement may merge it into another walk first). The operands are kept for the
    // fallbacks of the walk.
    std::vector<NumberSet> operands;
    for (const NumberSet* x : sets) operands.push_back(*x);
    return pending_numbers(*m, [operands = std::move(operands), m, conjunctions] {
      std::vector<const NumberSet*> ptrs;
      for (const auto& x : operands) ptrs.push_back(&x);
      return numbers_and_all_made(ptrs, m, conjunctions);
    });
  }
  return numbers_and_all_made(sets, m, conjunctions);
}

NumberSet numbers_or(const NumberSet& given_a, const NumberSet& given_b) {
  const NumberSet& a = made(given_a);
  const NumberSet& b = made(given_b);
  if (empty(a.texts)) return b;
  if (empty(b.texts)) return a;
  const uint8_t region = a.region | b.region;
  const bool lost = a.lost_exponents || b.lost_exponents;
  if (a.texts == every_number() || b.texts == every_number()) return all_number_set();
  if (a.texts == b.texts) return {a.texts, region, a.region == b.region ? a.formula : nullptr, lost};
  // Operands in address order (not a structured binding: clang before 16 cannot capture one).
  const bool in_order = a.texts.get() < b.texts.get();
  const auto& x = in_order ? a.texts : b.texts;
  const auto& y = in_order ? b.texts : a.texts;
  const auto p = budgeted('|', x, y, [&](size_t left) { return product(x, false, y, false, false, left); });
  return set(p.dfa, p.plain ? kPlain : region, lost || p.plain);
}

namespace {

// The complement of a set of multiples (`a`: its formula, no bounds) as one walk: not a
// multiple of every m (nor an integer) is not a multiple of their least common multiple,
// within the multiples' region, as numbers_not's complement. Charged to the schema's budget
// as that complement's product was, by the states it made. None when the walk is refused or
// over the budget.
std::optional<NumberSet> excluded_multiples(const NumberSet& a) {
  if (!a.formula || a.region != kMultiple || !a.formula->at_least.empty() || !a.formula->at_most.empty() ||
      !a.formula->not_multiple_of.empty() || (a.formula->multiple_of.empty() && !a.formula->integer)) {
    return std::nullopt;
  }
  std::vector<Decimal> multiples = a.formula->multiple_of;
  if (a.formula->integer) multiples.push_back(Decimal::parse("1"));
  const size_t left = ProductBudget::left();
  const auto l = least_common_multiple(multiples);
  if (!l || left == 0) return std::nullopt;
  NumberConstraints excluded;
  excluded.not_multiple_of.push_back(*l);
  bool plain_only = false;
  try {
    NumberSet n = numbers_constrained(excluded, plain_only);
    if (plain_only) return std::nullopt;
    const size_t cost = n.texts->size();
    ProductBudget::take(std::min(cost, left));
    if (cost <= left) return NumberSet{n.texts, n.region, nullptr, false};
  } catch (const std::invalid_argument&) {
  }
  return std::nullopt;
}

}  // namespace

NumberSet numbers_not(const NumberSet& given) {
  // The walk of the negation replaces the complement of a set of multiples, which is never
  // made when it is pending.
  if (auto n = excluded_multiples(given)) return *n;
  const NumberSet& a = made(given);
  if (empty(a.texts)) return all_number_set();
  if (a.texts == every_number() && a.region == 0) return no_number_set();
  if (a.formula && a.formula->multiple_of.empty() && a.formula->not_multiple_of.empty() && !a.formula->integer &&
      a.formula->at_least.size() + a.formula->at_most.size() == 1) {
    // Not v ≥ c is v < c, and so on: a bound again (exact on the same region).
    NumberConstraints flipped;
    for (const auto& b : a.formula->at_least) flipped.at_most.push_back({b.value, !b.strict});
    for (const auto& b : a.formula->at_most) flipped.at_least.push_back({b.value, !b.strict});
    bool plain_only = false;
    NumberSet n = numbers_constrained(flipped, plain_only);
    if (!plain_only) return n;
  }
  const uint8_t region = a.region;
  // The complement, made at most once and only when the result is not memoized already.
  DfaPtr not_a;
  auto complement = [&] {
    if (!not_a) not_a = Registry::wrap(a.texts->complement());
    return not_a;
  };
  const auto p = budgeted(static_cast<char>('0' + region), a.texts, nullptr,
                          [&](size_t left) { return product(region_set(region), region & kPlain, complement(), false, true, left); });
  return set(p.dfa, p.plain ? kPlain : region, a.lost_exponents || p.plain);
}

bool numbers_disjoint(const NumberSet& a, const NumberSet& b) { return empty(numbers_and_made(a, b).texts); }

namespace {

// Bounds other than 0 beside multipleOf: the product of the bounds' automaton and the
// multiples' (with the integer type, which joins their least common multiple), each kept
// process-wide. One walk over the tuple of both conditions tracks the comparison's scale
// beside the multiple's trailing zeros and fraction position, and passes its 20,000 states
// where their automata are a few hundred states each (`minimum: 2` with `multipleOf: 2.5`:
// the walk gave up after 19 ms and left exponent texts out; the product takes 2–3 ms and
// keeps them). The same language either way. Throws std::invalid_argument when either part is
// plain texts only or the product passes kMaxProductStates.
CharDfa bounded_multiples(const NumberConstraints& c) {
  NumberConstraints bounds, multiples;
  bounds.at_least = c.at_least;
  bounds.at_most = c.at_most;
  multiples.multiple_of = c.multiple_of;
  multiples.not_multiple_of = c.not_multiple_of;
  multiples.integer = c.integer;
  bool plain_bounds = false, plain_multiples = false;
  const NumberSet b = numbers_constrained(bounds, plain_bounds);
  const NumberSet m = numbers_constrained(multiples, plain_multiples);
  if (plain_bounds || plain_multiples) throw std::invalid_argument("plain texts only");
  try {
    return CharDfa::intersect(*b.texts, *m.texts, kMaxProductStates);
  } catch (const AutomatonLimitError&) {
    throw std::invalid_argument("over the product's state budget");
  }
}

}  // namespace

NumberSet numbers_constrained(const NumberConstraints& given, bool& plain_only) {
  // One bound a side, at zero where the multiples allow: "minimum: 2" beside "multipleOf: 2.5"
  // is "exclusiveMinimum: 0", a walk of the multiples and the sign instead of the product of
  // two automata of hundreds of states each (and a set exact on the multiples' region).
  const NumberConstraints c = with_bounds_at_zero(given);
  Registry& r = Registry::get();
  plain_only = false;
  if (c.empty()) return all_number_set();
  const uint8_t region = conjunction_region(c);
  const bool compare = region & kCompare;
  const std::string key = c.key();
  if (DfaPtr d = r.find("plain " + key)) {
    plain_only = true;
    return set(d, kPlain, false);
  }
  DfaPtr d;
  try {
    d = r.named(key, [&] {
      const bool multiples_beside_bounds = compare && (!c.multiple_of.empty() || !c.not_multiple_of.empty());
      return multiples_beside_bounds ? bounded_multiples(c) : numbers_satisfying(c, true);
    });
  } catch (const std::invalid_argument&) {
    plain_only = true;
    return set(r.named("plain " + key, [&] { return numbers_satisfying(c, false); }), kPlain, false);
  }
  if (c.integer) r.note_subset(numbers_integer(6).texts, d);
  return set(d, region, false, std::make_shared<const NumberConstraints>(c));
}

NumberSet numbers_among(const std::vector<Decimal>& values) {
  // Keyed by the values as given: sorting 50,000 of them for the key cost as much as the
  // automaton of their plain texts; the same list in another order is made again.
  bool nonzero = false;
  std::string key = "in";
  for (const auto& v : values) key.append(" ").append(v.to_string()), nonzero = nonzero || !v.is_zero();
  std::optional<CharDfa> plain;  // made from the same digit tries when the walk with exponents is refused
  try {
    return set(Registry::get().named(key, [&] { return lockstep::numbers_in(values, true, kMaxNumberStates * 5, &plain); }),
               nonzero ? kCompare : 0, false);
  } catch (const std::invalid_argument&) {
    // A long list: its plain texts alone (NumberSet::lost_exponents: the grammar warns).
    return set(Registry::get().named("plain " + key,
                                     [&] { return plain ? std::move(*plain) : lockstep::numbers_in(values, false); }),
               kPlain, true);
  }
}

NumberSet numbers_integer(int draft) {
  static const DfaPtr ints = Registry::get().named("integer", [] { return integer_numbers(); });
  static const DfaPtr ints4 = Registry::get().named("integer4", [] { return integer_numbers_without_fraction(); });
  static const auto integer = [] {
    auto c = std::make_shared<NumberConstraints>();
    c->integer = true;
    return std::shared_ptr<const NumberConstraints>(c);
  }();
  return draft <= 4 ? NumberSet{ints4, 0, nullptr, false} : NumberSet{ints, kMultiple, integer, false};
}

DfaPtr numbers_canonical(const DfaPtr& a) {
  static const DfaPtr canonical = Registry::get().named("canonical", [] { return canonical_numbers(); });
  if (empty(a)) return a;
  if (a == every_number()) return canonical;
  const auto c = Registry::get().operation('c', a, nullptr, [&] {
    return Registry::Result{Registry::wrap(CharDfa::intersect(*a, canonical_numbers())), false};
  });
  return empty(c.dfa) ? a : c.dfa;
}

}  // namespace lockstep::schema
