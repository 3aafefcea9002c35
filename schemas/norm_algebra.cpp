// schemas/norm_algebra.cpp — terms and the Boolean algebra of normal forms.
#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>

#include "grammar/limits.h"
#include "schemas/number_sets.h"
#include "schemas/schema_model.h"

namespace lockstep {

namespace schema {

namespace {
// A union of more alternatives than EngineLimits::schema_alternatives (e.g. the complement
// of a record with many constraints, intersected with others). The thrower does not know the
// place: SchemaCompiler::normalize locates it.
[[noreturn]] void too_many_records(size_t n) {
  throw LimitError(ErrorLocation{}, "schema_alternatives", engine_limits().schema_alternatives,
                   fmt::format("a combination of the schema into {} or more alternatives", n));
}

bool is_true(const TermPtr& t) { return t->kind == Term::Kind::kTrue; }
bool is_false(const TermPtr& t) { return t->kind == Term::Kind::kFalse; }

TermPtr make(Term t) {
  t.hash = std::hash<std::string>{}(t.key);
  return std::make_shared<const Term>(std::move(t));
}
}  // namespace

TermPtr t_true() {
  static const TermPtr t = make(Term{Term::Kind::kTrue, nullptr, "", "", {}, "T"});
  return t;
}

TermPtr t_false() {
  static const TermPtr t = make(Term{Term::Kind::kFalse, nullptr, "", "", {}, "F"});
  return t;
}

TermPtr t_schema(const json* node, std::string pointer, std::string base) {
  if (node->is_boolean()) return node->get<bool>() ? t_true() : t_false();
  Term t{Term::Kind::kSchema, node, std::move(pointer), std::move(base), {}, ""};
  t.key = "S" + t.pointer;
  return make(std::move(t));
}

namespace {
TermPtr junction(Term::Kind kind, std::vector<TermPtr> args) {
  const bool conj = kind == Term::Kind::kAnd;
  std::vector<TermPtr> flat;
  for (auto& a : args) {
    if (a->kind == kind) {
      flat.insert(flat.end(), a->args.begin(), a->args.end());
    } else if (conj ? is_false(a) : is_true(a)) {
      return a;  // absorbing element
    } else if (!(conj ? is_true(a) : is_false(a))) {
      flat.push_back(a);
    }
  }
  std::sort(flat.begin(), flat.end(), [](const TermPtr& x, const TermPtr& y) { return x->key < y->key; });
  flat.erase(std::unique(flat.begin(), flat.end(), [](const TermPtr& x, const TermPtr& y) { return x->key == y->key; }),
             flat.end());
  if (flat.empty()) return conj ? t_true() : t_false();
  if (flat.size() == 1) return flat[0];
  Term t{kind, nullptr, "", "", std::move(flat), ""};
  t.key = conj ? "A(" : "O(";
  for (size_t i = 0; i < t.args.size(); ++i) t.key += (i ? "," : "") + t.args[i]->key;
  t.key += ")";
  return make(std::move(t));
}
}  // namespace

TermPtr t_and(std::vector<TermPtr> args) { return junction(Term::Kind::kAnd, std::move(args)); }
TermPtr t_or(std::vector<TermPtr> args) { return junction(Term::Kind::kOr, std::move(args)); }

TermPtr t_not(TermPtr arg) {
  if (is_true(arg)) return t_false();
  if (is_false(arg)) return t_true();
  if (arg->kind == Term::Kind::kNot) return arg->args[0];
  Term t{Term::Kind::kNot, nullptr, "", "", {arg}, "N(" + arg->key + ")"};
  return make(std::move(t));
}

DfaPtr all_strings() {
  static const DfaPtr d = std::make_shared<CharDfa>(CharDfa::all());
  return d;
}

DfaPtr no_strings() {
  static const DfaPtr d = std::make_shared<CharDfa>(CharDfa::none());
  return d;
}

DfaPtr literal_key(const std::string& key) { return std::make_shared<CharDfa>(CharDfa::literal(key)); }

namespace {

// A word list (CharDfa::words) that an operation left whole: that operand itself, so that a
// string language used at several places stays one automaton and one grammar rule.
DfaPtr unchanged_operand(const std::vector<std::string>& w, const DfaPtr& a, const DfaPtr& b) {
  if (a->words() && a->words()->size() == w.size()) return a;
  if (b->words() && b->words()->size() == w.size()) return b;
  return nullptr;
}

DfaPtr dfa_and(const DfaPtr& a, const DfaPtr& b) {
  if (!a || !b || a == no_strings() || b == no_strings()) return no_strings();
  if (a == all_strings()) return b;
  if (b == all_strings() || a == b) return a;
  if (auto w = CharDfa::intersect_words(*a, *b)) {  // a filter of the listed words, no product
    if (w->empty()) return no_strings();
    if (DfaPtr same = unchanged_operand(*w, a, b)) return same;
    return std::make_shared<CharDfa>(CharDfa::sorted_literals(std::move(*w)));
  }
  auto r = CharDfa::intersect(*a, *b);
  return r.empty() ? no_strings() : std::make_shared<CharDfa>(std::move(r));
}

DfaPtr dfa_or(const DfaPtr& a, const DfaPtr& b) {
  if (!a || a == no_strings()) return b ? b : no_strings();
  if (!b || b == no_strings() || a == b) return a;
  if (a == all_strings() || b == all_strings()) return all_strings();
  if (auto w = CharDfa::unite_words(*a, *b)) {
    if (DfaPtr same = unchanged_operand(*w, a, b)) return same;  // one list held the other
    return std::make_shared<CharDfa>(CharDfa::sorted_literals(std::move(*w)));
  }
  return std::make_shared<CharDfa>(CharDfa::unite(*a, *b));
}

DfaPtr dfa_not(const DfaPtr& a, const DfaPtr& universe) {
  if (!a || a == no_strings()) return universe;
  if (a == all_strings() && universe == all_strings()) return no_strings();
  auto r = CharDfa::intersect(*universe, a->complement());
  return r.empty() ? no_strings() : std::make_shared<CharDfa>(std::move(r));
}

bool dfa_empty(const DfaPtr& d) { return !d || d == no_strings() || d->empty(); }

bool record_ok(const ArrayRec& r) { return r.min <= r.max; }
bool record_ok(const ObjectRec& r) {
  if (r.min > r.max) return false;
  // Names whose member is forbidden (hashed: records may hold 100,000 names).
  std::unordered_set<std::string_view> forbidden;
  for (const auto& k : r.rules) {
    if (k.literal && is_false(k.value)) forbidden.insert(*k.literal);
  }
  for (const auto& m : r.must) {
    if (is_false(m.value) || dfa_empty(m.keys)) return false;
    // A required name whose member is forbidden (e.g. one branch of a dependency).
    if (m.literal && forbidden.count(*m.literal)) return false;
  }
  return true;
}

TermPtr item_at(const ArrayRec& r, size_t i) { return i < r.prefix.size() ? r.prefix[i] : r.rest; }

ArrayRec intersect(const ArrayRec& x, const ArrayRec& y) {
  ArrayRec r;
  const size_t n = std::max(x.prefix.size(), y.prefix.size());
  for (size_t i = 0; i < n; ++i) r.prefix.push_back(t_and({item_at(x, i), item_at(y, i)}));
  r.rest = t_and({x.rest, y.rest});
  r.min = std::max(x.min, y.min);
  r.max = std::min(x.max, y.max);
  r.contains = x.contains;
  r.contains.insert(r.contains.end(), y.contains.begin(), y.contains.end());
  r.unique = x.unique || y.unique;
  r.unique_pointer = x.unique ? x.unique_pointer : y.unique_pointer;
  return r;
}

ObjectRec intersect(const ObjectRec& x, const ObjectRec& y) {
  ObjectRec r = x;
  // Hashed lookups: records may hold 100,000 names (x's and y's names are copied, so the
  // views stay valid while r grows).
  if (!y.order.empty()) {
    std::unordered_set<std::string_view> names(x.order.begin(), x.order.end());
    for (const auto& name : y.order) {
      if (names.insert(name).second) r.order.push_back(name);
    }
  }
  r.rules.insert(r.rules.end(), y.rules.begin(), y.rules.end());
  // The same obligation twice (e.g. a name both required and named by a dependency) is one.
  std::unordered_set<std::string> literal_must;  // value key, then the name
  for (size_t i = 0; i < x.must.size() && !y.must.empty(); ++i) {
    if (x.must[i].literal) literal_must.insert(x.must[i].value->key + '\0' + *x.must[i].literal);
  }
  for (const auto& m : y.must) {
    bool dup;
    if (m.literal) {
      dup = !literal_must.insert(m.value->key + '\0' + *m.literal).second;
    } else {
      dup = std::any_of(r.must.begin(), r.must.end(), [&](const Obligation& o) {
        return !o.literal && o.value->key == m.value->key && o.keys == m.keys;
      });
    }
    if (!dup) r.must.push_back(m);
  }
  r.min = std::max(x.min, y.min);
  r.max = std::min(x.max, y.max);
  return r;
}

template <typename Rec>
std::vector<Rec> cross(const std::vector<Rec>& a, const std::vector<Rec>& b) {
  std::vector<Rec> out;
  for (const auto& x : a) {
    for (const auto& y : b) {
      Rec r = intersect(x, y);
      if (!record_ok(r)) continue;
      if (out.size() >= engine_limits().schema_alternatives) too_many_records(out.size() + 1);
      out.push_back(std::move(r));
    }
  }
  return out;
}

template <typename Rec>
std::vector<Rec> concat(const std::vector<Rec>& a, const std::vector<Rec>& b) {
  if (a.size() + b.size() > engine_limits().schema_alternatives) too_many_records(a.size() + b.size());
  std::vector<Rec> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

std::vector<ArrayRec> violations(const ArrayRec& r) {
  if (r.unique) {
    throw SchemaError(r.unique_pointer, "uniqueItems cannot be negated (under not, oneOf or if) in a grammar");
  }
  std::vector<ArrayRec> out;
  auto base = [] {
    ArrayRec v;
    v.rest = t_true();
    return v;
  };
  if (r.min > 0) {
    ArrayRec v = base();
    v.max = r.min - 1;
    out.push_back(v);
  }
  if (r.max != kUnbounded) {
    ArrayRec v = base();
    v.min = r.max + 1;
    out.push_back(v);
  }
  for (size_t i = 0; i < r.prefix.size(); ++i) {
    if (is_true(r.prefix[i])) continue;
    ArrayRec v = base();
    v.prefix.assign(i, t_true());
    v.prefix.push_back(t_not(r.prefix[i]));
    v.min = static_cast<uint32_t>(i + 1);
    out.push_back(v);
  }
  if (!is_true(r.rest)) {
    ArrayRec v = base();
    v.contains.push_back({t_not(r.rest), 1, kUnbounded, static_cast<uint32_t>(r.prefix.size())});
    out.push_back(v);
  }
  for (const auto& c : r.contains) {
    if (c.min > 0) {
      ArrayRec v = base();
      v.contains.push_back({c.term, 0, c.min - 1, c.from});
      out.push_back(v);
    }
    if (c.max != kUnbounded) {
      ArrayRec v = base();
      v.contains.push_back({c.term, c.max + 1, kUnbounded, c.from});
      out.push_back(v);
    }
  }
  return out;
}

std::vector<ObjectRec> violations(const ObjectRec& r) {
  std::vector<ObjectRec> out;
  if (r.min > 0) {
    ObjectRec v;
    v.max = r.min - 1;
    out.push_back(v);
  }
  if (r.max != kUnbounded) {
    ObjectRec v;
    v.min = r.max + 1;
    out.push_back(v);
  }
  for (const auto& k : r.rules) {
    if (is_true(k.value)) continue;
    ObjectRec v;
    v.must.push_back({k.keys, k.literal, t_not(k.value)});
    out.push_back(v);
  }
  for (const auto& m : r.must) {
    ObjectRec v;
    v.rules.push_back({m.keys, m.literal, t_not(m.value), nullptr});
    out.push_back(v);
  }
  return out;
}

}  // namespace

Norm Norm::any() {
  Norm n;
  n.null = true;
  n.booleans = 3;
  n.number = all_number_set();
  n.string = all_strings();
  ArrayRec a;
  a.rest = t_true();
  n.arrays.push_back(a);
  n.objects.emplace_back();
  return n;
}

Norm Norm::nothing() {
  Norm n;
  n.number = no_number_set();
  n.string = no_strings();
  return n;
}

namespace {
// Whether a record constrains nothing (Norm::any()'s): its intersection with any record x is
// x itself (an array's items are x's, their conjunction with `true` being the same term).
bool unconstrained(const ArrayRec& r) {
  return r.prefix.empty() && r.rest->kind == Term::Kind::kTrue && r.min == 0 && r.max == kUnbounded &&
         r.contains.empty() && !r.unique;
}
bool unconstrained(const ObjectRec& r) {
  return r.order.empty() && r.rules.empty() && r.must.empty() && r.min == 0 && r.max == kUnbounded;
}

// a × b into `out` (which may be `a`). Against b's one unconstrained record (a keyword group
// that says nothing of this type: each subschema intersects five of them) the result is a's
// records that cross() would keep, without copying them when `out` is `a`.
template <typename Rec>
void cross_into(std::vector<Rec>& out, const std::vector<Rec>& a, const std::vector<Rec>& b) {
  if (b.size() != 1 || !unconstrained(b[0])) {
    out = cross(a, b);
    return;
  }
  if (&out != &a) out = a;
  std::erase_if(out, [](const Rec& r) { return !record_ok(r); });
  if (out.size() > engine_limits().schema_alternatives) too_many_records(engine_limits().schema_alternatives + 1);
}

// a ∩ b for every type but numbers, into `out` (which may be `a`: a running intersection).
void intersect_but_numbers(Norm& out, const Norm& a, const Norm& b) {
  out.null = a.null && b.null;
  out.booleans = a.booleans & b.booleans;
  out.string = dfa_and(a.string, b.string);
  cross_into(out.arrays, a.arrays, b.arrays);
  cross_into(out.objects, a.objects, b.objects);
}
}  // namespace

Norm intersect(const Norm& a, const Norm& b) {
  Norm n;
  n.number = numbers_and(a.number, b.number);
  intersect_but_numbers(n, a, b);
  return n;
}

Norm intersect(Norm&& a, const Norm& b) {
  a.number = numbers_and(a.number, b.number);
  intersect_but_numbers(a, a, b);
  return std::move(a);
}

Norm intersect_all(const std::vector<const Norm*>& parts) {
  Norm n = *parts[0];
  std::vector<const NumberSet*> numbers{&parts[0]->number};
  for (size_t i = 1; i < parts.size(); ++i) {
    intersect_but_numbers(n, n, *parts[i]);
    numbers.push_back(&parts[i]->number);
  }
  n.number = numbers_and_all(numbers);
  return n;
}

namespace {
// `strings` false: the strings are left out (united elsewhere: united_word_lists).
Norm unite(const Norm& a, const Norm& b, bool strings) {
  Norm n;
  n.null = a.null || b.null;
  n.booleans = a.booleans | b.booleans;
  n.number = numbers_or(a.number, b.number);
  if (strings) n.string = dfa_or(a.string, b.string);
  n.arrays = concat(a.arrays, b.arrays);
  n.objects = concat(a.objects, b.objects);
  return n;
}
}  // namespace

Norm unite(const Norm& a, const Norm& b) { return unite(a, b, true); }

namespace {
Norm unite_range(const std::vector<const Norm*>& parts, size_t lo, size_t hi, bool strings) {
  if (hi - lo == 1) {
    Norm n = *parts[lo];
    if (!strings) n.string = nullptr;
    return n;
  }
  const size_t mid = lo + (hi - lo) / 2;
  return unite(unite_range(parts, lo, mid, strings), unite_range(parts, mid, hi, strings), strings);
}

// When every part's strings are a word list (const, enum) or none: all lists merged and
// sorted once, one trie. Balanced pairwise unions would rebuild a trie of the words so far
// at each of log2(parts) levels. Nothing when a part has other strings or the trie is over
// the limit (the pairwise unions may still find a smaller automaton).
std::optional<DfaPtr> united_word_lists(const std::vector<const Norm*>& parts) {
  std::vector<const DfaPtr*> lists;
  size_t total = 0;
  for (const Norm* p : parts) {
    if (!p->string || p->string == no_strings()) continue;
    if (!p->string->words()) return std::nullopt;
    lists.push_back(&p->string);
    total += p->string->words()->size();
  }
  if (lists.empty()) return no_strings();
  if (lists.size() == 1) return *lists[0];
  std::vector<std::string> words;
  words.reserve(total);
  for (const DfaPtr* d : lists) words.insert(words.end(), (*d)->words()->begin(), (*d)->words()->end());
  CharDfa::sort_words(words);
  for (const DfaPtr* d : lists) {
    if ((*d)->words()->size() == words.size()) return *d;  // one list held the others
  }
  try {
    return std::make_shared<CharDfa>(CharDfa::sorted_literals(std::move(words)));
  } catch (const AutomatonLimitError&) {
    return std::nullopt;
  }
}
}  // namespace

Norm unite_all(const std::vector<const Norm*>& parts) {
  if (parts.empty()) return Norm::nothing();
  // Records past the limit fail where a left fold would, with the same count.
  size_t arrays = parts[0]->arrays.size(), objects = parts[0]->objects.size();
  const size_t limit = engine_limits().schema_alternatives;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (arrays + parts[i]->arrays.size() > limit) too_many_records(arrays + parts[i]->arrays.size());
    arrays += parts[i]->arrays.size();
    if (objects + parts[i]->objects.size() > limit) too_many_records(objects + parts[i]->objects.size());
    objects += parts[i]->objects.size();
  }
  // Balanced: each level's unions cost about the size of the whole, where a left fold
  // redoes the union so far once per part (quadratic for anyOf of many consts).
  std::optional<DfaPtr> words = united_word_lists(parts);
  if (!words) return unite_range(parts, 0, parts.size(), true);
  Norm n = unite_range(parts, 0, parts.size(), false);
  n.string = std::move(*words);
  return n;
}

Norm complement(const Norm& a) {
  Norm n;
  n.null = !a.null;
  n.booleans = static_cast<uint8_t>(3 & ~a.booleans);
  // Within the exact region: a text outside it is rejected by both a set and its complement.
  n.number = numbers_not(a.number);
  n.string = dfa_not(a.string, all_strings());
  ArrayRec any_array;
  any_array.rest = t_true();
  n.arrays = {any_array};
  for (const auto& r : a.arrays) n.arrays = cross(n.arrays, violations(r));
  n.objects = {ObjectRec{}};
  for (const auto& r : a.objects) n.objects = cross(n.objects, violations(r));
  return n;
}

bool obviously_empty(const Norm& n) {
  return !n.null && n.booleans == 0 && dfa_empty(made(n.number).texts) && dfa_empty(n.string) &&
         n.arrays.empty() && n.objects.empty();
}

}  // namespace schema
}  // namespace lockstep
