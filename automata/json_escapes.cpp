// automata/json_escapes.cpp — see json_escapes.h.
#include "automata/json_escapes.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "grammar/hash.h"
#include "grammar/intern_table.h"

namespace lockstep {

std::vector<HexDigits> hex_sequences(uint32_t lo, uint32_t hi) {
  std::vector<HexDigits> out;
  std::function<void(uint32_t, uint32_t)> split = [&](uint32_t a, uint32_t b) {
    if (a > b) return;
    for (int i = 1; i < 4; ++i) {
      const uint32_t m = (1u << (4 * i)) - 1;
      if ((a & ~m) != (b & ~m)) {
        if ((a & m) != 0) {
          split(a, a | m);
          split((a | m) + 1, b);
          return;
        }
        if ((b & m) != m) {
          split(a, (b & ~m) - 1);
          split(b & ~m, b);
          return;
        }
      }
    }
    HexDigits d;
    for (int pos = 0; pos < 4; ++pos) {
      const int shift = 4 * (3 - pos);
      d[pos] = {(a >> shift) & 15, (b >> shift) & 15};
    }
    out.push_back(d);
  };
  split(lo, hi);
  return out;
}

std::vector<ByteRange> hex_digit_bytes(uint32_t d0, uint32_t d1) {
  std::vector<ByteRange> out;
  if (d0 <= 9) out.push_back({static_cast<uint8_t>('0' + d0), static_cast<uint8_t>('0' + std::min(d1, 9u))});
  if (d1 >= 10) {
    const uint32_t a = std::max(d0, 10u) - 10, b = d1 - 10;
    out.push_back({static_cast<uint8_t>('A' + a), static_cast<uint8_t>('A' + b)});
    out.push_back({static_cast<uint8_t>('a' + a), static_cast<uint8_t>('a' + b)});
  }
  return out;
}

void escape_calls(const CharDfa::Edges& edges, bool bmp, std::vector<EscapeCall>& out) {
  size_t n = 0;
  auto add = [&](uint32_t target, CodepointRange r) {
    const auto end = out.begin() + static_cast<ptrdiff_t>(n);
    const auto it = std::find_if(out.begin(), end, [&](const EscapeCall& c) { return c.target == target; });
    if (it == end) {
      if (n == out.size()) out.emplace_back();
      out[n].target = target;
      out[n++].ranges.assign(1, r);
    } else if (it->ranges.back().hi + 1 == r.lo) {
      it->ranges.back().hi = r.hi;
    } else {
      it->ranges.push_back(r);
    }
  };
  for (const auto& e : edges) {
    const uint32_t hi = std::min(e.hi, kMaxCodepoint);
    if (!bmp && hi < 0x10000) continue;
    const uint32_t lo = bmp ? e.lo : std::max<uint32_t>(e.lo, 0x10000);
    if (lo > hi) continue;
    // Surrogates are not characters (Expr::char_class): cut U+D800..U+DFFF out.
    if (hi < 0xD800 || lo > 0xDFFF) {
      add(e.target, {lo, hi});
      continue;
    }
    if (lo < 0xD800) add(e.target, {lo, 0xD7FF});
    if (hi > 0xDFFF) add(e.target, {0xE000, hi});
  }
  out.resize(n);
}

bool escapes_by_rule(const Grammar& grammar) {
  size_t pairs = 0;
  // A hash per distinct set (a collision only makes the count smaller), numbered as met:
  // sorting one hash per pair cost a length-counted string automaton a third of this pass.
  InternTable<uint64_t, Mixed64Hash> sets(1024);
  std::vector<EscapeCall> calls;
  std::unordered_set<const CharDfa*> seen;
  std::vector<const Expr*> todo;
  // The pairs of each state shape met (its ranges, and which of them share a target), by a
  // hash of the shape: a shape met again adds its pairs, and its sets are counted already
  // (two shapes with one hash only make the count rougher). A length-counted string repeats
  // each shape at every position (an e-mail address under maxLength 255: 28,149 states of
  // 59 shapes); hashing a shape costs about a third of finding its calls.
  InternTable<uint64_t, Mixed64Hash> shapes(256);
  std::vector<uint32_t> shape_pairs, slots;
  for (const Rule& r : grammar.rules) todo.push_back(&r.body);
  while (!todo.empty()) {
    const Expr& e = *todo.back();
    todo.pop_back();
    for (const Expr& c : e.children) todo.push_back(&c);
    if (e.kind != Expr::Kind::kAutomaton || !e.json_string || !e.automaton || !seen.insert(e.automaton.get()).second) {
      continue;
    }
    for (const auto& st : e.automaton->states()) {
      slots.clear();
      uint64_t shape_hash = st.edges.size();
      for (const auto& edge : st.edges) {
        const auto at = std::find(slots.begin(), slots.end(), edge.target);
        if (at == slots.end()) slots.push_back(edge.target);
        shape_hash = mix64(shape_hash ^ (uint64_t{edge.lo} | uint64_t{edge.hi} << 21 | uint64_t(at - slots.begin()) << 42));
      }
      const auto [shape, fresh] = shapes.intern(shape_hash);
      if (!fresh) {
        pairs += shape_pairs[shape];
        continue;
      }
      shape_pairs.push_back(0);
      escape_calls(st.edges, true, calls);
      for (const EscapeCall& c : calls) {
        if (c.ranges.front().lo > 0xFFFF) continue;  // no \uXXXX of its own
        ++pairs;
        ++shape_pairs[shape];
        uint64_t h = kFnvOffsetBasis;
        for (const auto& r : c.ranges) h = fnv1a_step(fnv1a_step(h, r.lo), r.hi);
        sets.intern(h);
      }
    }
  }
  return pairs > 20 * sets.size();
}

namespace {

// The minimal DFA of "u" and the \u spellings of the code points `c` (sorted, disjoint, no
// surrogates), digit by digit: a state stands for the values the digits read so far still
// allow, an interval of 16^n values with n digits to go. An interval wholly in or out of
// the language needs no recursion (a shared chain of any n digits, or no edge), so only the
// intervals around the ranges' ends are split: the work grows with the ranges, not with the
// code points. A high surrogate's value continues with "\u" and the low surrogates whose
// pairs are in `c`. Equal states (the same finality and edges, children first) are one, so
// the automaton is minimal.
class EscapeDfa {
 public:
  explicit EscapeDfa(const std::vector<CodepointRange>& c) : c_(c) { states_.reserve(32); }

  // With `after_high_digit`, the automaton from after "uD" (c_ above U+FFFF only).
  CharDfa build(bool after_high_digit) {
    final_ = intern(CharDfa::State{{}, true});
    uint32_t start = intern(CharDfa::State{{{'u', 'u', first(4, 0)}}, false});
    if (after_high_digit) start = after_high(start);
    // The start must be state 0: swap it with the state there.
    auto renumber = [&](uint32_t t) { return t == start ? 0 : t == 0 ? start : t; };
    std::swap(states_[0], states_[start]);
    for (auto& st : states_) {
      for (auto& e : st.edges) e.target = renumber(e.target);
    }
    return CharDfa::from_states(std::move(states_));
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  enum Cover { kOut, kSome, kAll };

  // How much of lo..hi `c_` holds.
  Cover cover(uint32_t lo, uint32_t hi) const {
    uint64_t in = 0;
    for (const auto& r : c_) {
      if (r.hi < lo) continue;
      if (r.lo > hi) break;
      in += std::min(r.hi, hi) - std::max(r.lo, lo) + 1;
    }
    return in == 0 ? kOut : in == uint64_t{hi} - lo + 1 ? kAll : kSome;
  }
  // The code point of the surrogate pair (h, l).
  static uint32_t pair_code(uint32_t h, uint32_t l) { return 0x10000 + ((h - 0xD800) << 10) + (l - 0xDC00); }

  // The state after "uD" from `start` becomes state 0, with the states it reaches (the
  // others are dropped); returns it.
  uint32_t after_high(uint32_t start) {
    auto next = [&](uint32_t q, uint32_t byte) {
      for (const auto& e : states_[q].edges) {
        if (e.lo <= byte && byte <= e.hi) return e.target;
      }
      throw std::logic_error("escape rule: no surrogate pair to read after \\uD");
    };
    const uint32_t from = next(next(start, 'u'), 'D');
    std::vector<uint32_t> id(states_.size(), kNone), order{from};
    id[from] = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      for (const auto& e : states_[order[i]].edges) {
        if (id[e.target] == kNone) id[e.target] = static_cast<uint32_t>(order.size()), order.push_back(e.target);
      }
    }
    std::vector<CharDfa::State> kept;
    for (const uint32_t q : order) {
      kept.push_back(std::move(states_[q]));
      for (auto& e : kept.back().edges) e.target = id[e.target];
    }
    states_ = std::move(kept);
    return 0;
  }

  // The first unit: values base..base + 16^n - 1 still possible, n digits to read.
  uint32_t first(int n, uint32_t base) {
    const uint32_t last = base + (1u << (4 * n)) - 1;
    if (base >= 0xDC00 && last <= 0xDFFF) return kNone;  // low surrogates first: no character
    if (n == 0) {
      if (base >= 0xD800 && base <= 0xDBFF) return high(base);
      return cover(base, base) == kAll ? final_ : kNone;
    }
    if (last < 0xD800 || base > 0xDFFF) {  // no surrogates
      const Cover c = cover(base, last);
      if (c == kOut) return kNone;
      if (c == kAll) return any(n, final_);
    } else if (base >= 0xD800 && last <= 0xDBFF) {  // high surrogates only
      const Cover c = cover(pair_code(base, 0xDC00), pair_code(last, 0xDFFF));
      if (c == kOut) return kNone;
      if (c == kAll) return any(n, low_unit_any());
    }
    return digits(n, base, [&](uint32_t b) { return first(n - 1, b); });
  }

  // After the high surrogate h: "\u" and a low surrogate whose pair is in c_.
  uint32_t high(uint32_t h) {
    const Cover c = cover(pair_code(h, 0xDC00), pair_code(h, 0xDFFF));
    if (c == kOut) return kNone;
    if (c == kAll) return low_unit_any();
    const uint32_t u = intern(CharDfa::State{{{'u', 'u', low(4, 0, h)}}, false});
    return intern(CharDfa::State{{{'\\', '\\', u}}, false});
  }

  // "\u" and any low surrogate: D, one of C..F, any two digits.
  uint32_t low_unit_any() {
    if (low_unit_any_ != kNone) return low_unit_any_;
    const uint32_t second = intern(digit_state(12, 15, any(2, final_)));
    const uint32_t u = intern(CharDfa::State{{{'u', 'u', intern(digit_state(13, 13, second))}}, false});
    return low_unit_any_ = intern(CharDfa::State{{{'\\', '\\', u}}, false});
  }

  // The low unit after high surrogate h: values base..base + 16^n - 1 still possible.
  uint32_t low(int n, uint32_t base, uint32_t h) {
    const uint32_t last = base + (1u << (4 * n)) - 1;
    const uint32_t lo = std::max<uint32_t>(base, 0xDC00), hi = std::min<uint32_t>(last, 0xDFFF);
    if (lo > hi) return kNone;
    const Cover c = cover(pair_code(h, lo), pair_code(h, hi));
    if (n == 0) return c == kAll ? final_ : kNone;
    if (c == kOut) return kNone;
    if (c == kAll && lo == base && hi == last) return any(n, final_);
    return digits(n, base, [&](uint32_t b) { return low(n - 1, b, h); });
  }

  // Any n digits, then `then` (a few distinct chains, each made once).
  uint32_t any(int n, uint32_t then) {
    for (const auto& [k, from, state] : any_) {
      if (k == n && from == then) return state;
    }
    uint32_t t = then;
    for (int i = 0; i < n; ++i) t = intern(digit_state(0, 15, t));
    any_.emplace_back(n, then, t);
    return t;
  }

  // The state reading the next digit d of an interval base..base + 16^n - 1, to
  // child(base + d * 16^(n-1)).
  template <typename Child>
  uint32_t digits(int n, uint32_t base, Child child) {
    const uint32_t step = 1u << (4 * (n - 1));
    uint32_t to[16];
    for (uint32_t d = 0; d < 16; ++d) to[d] = child(base + d * step);
    // The digits' bytes in order ('0'-'9', 'A'-'F', 'a'-'f'), a run of digits with the same
    // target one edge: the edges come out sorted.
    CharDfa::State st;
    auto runs = [&](uint32_t first, uint32_t last, uint32_t byte_of_first) {
      for (uint32_t d = first; d <= last;) {
        uint32_t e = d;
        while (e < last && to[e + 1] == to[d]) ++e;
        if (to[d] != kNone) st.edges.push_back({byte_of_first + d - first, byte_of_first + e - first, to[d]});
        d = e + 1;
      }
    };
    runs(0, 9, '0');
    runs(10, 15, 'A');
    runs(10, 15, 'a');
    return st.edges.empty() ? kNone : intern(std::move(st));
  }

  // A state whose digits lo..hi lead to `then` (hex_digit_bytes' ranges, written in place).
  static CharDfa::State digit_state(uint32_t lo, uint32_t hi, uint32_t then) {
    CharDfa::State st;
    if (lo <= 9) st.edges.push_back({'0' + lo, '0' + std::min(hi, 9u), then});
    if (hi >= 10) {
      const uint32_t a = std::max(lo, 10u) - 10, b = hi - 10;
      st.edges.push_back({'A' + a, 'A' + b, then});
      st.edges.push_back({'a' + a, 'a' + b, then});
    }
    return st;
  }

  static uint64_t hash_of(const CharDfa::State& st) {
    uint64_t h = st.final ? 1 : 0;
    for (const auto& e : st.edges) h = mix64(h ^ (uint64_t{e.lo} | uint64_t{e.hi} << 21 | uint64_t{e.target} << 42)) + 1;
    return fmix64(h);
  }
  static bool same(const CharDfa::State& a, const CharDfa::State& b) {
    return a.final == b.final && a.edges.size() == b.edges.size() &&
           std::equal(a.edges.begin(), a.edges.end(), b.edges.begin(), [](const auto& x, const auto& y) {
             return x.lo == y.lo && x.hi == y.hi && x.target == y.target;
           });
  }

  // The state equal to `st`, or a new one (hash-consing): the states' numbers in an
  // open-addressing table (intern_detail::Slots), probed by each state's hash and compared
  // with the state itself. An automaton here has a few dozen states, made 145 times for a
  // Kubernetes schema's key tries: no key copied, no allocation per lookup.
  uint32_t intern(CharDfa::State st) {
    std::sort(st.edges.begin(), st.edges.end(), [](const auto& x, const auto& y) { return x.lo < y.lo; });
    const uint64_t h = hash_of(st);
    size_t slot = 0;
    const uint32_t found = slots_.find(h, [&](uint32_t id) { return same(states_[id], st); }, slot);
    if (found != intern_detail::Slots::kEmpty) return found;
    const uint32_t id = slots_.add(slot, h);
    states_.push_back(std::move(st));
    return id;
  }

  const std::vector<CodepointRange>& c_;
  std::vector<CharDfa::State> states_;
  intern_detail::Slots slots_{32};  // intern()'s table: state numbers by hash
  uint32_t final_ = kNone;
  uint32_t low_unit_any_ = kNone;
  std::vector<std::tuple<int, uint32_t, uint32_t>> any_;  // (n, then, state) of any()
};

}  // namespace

std::shared_ptr<const CharDfa> escape_tail(const std::vector<CodepointRange>& ranges, bool after_high_digit) {
  static std::mutex mutex;
  static std::map<std::vector<uint32_t>, std::shared_ptr<const CharDfa>> made;  // flattened ranges
  std::vector<uint32_t> key{after_high_digit ? 1u : 0u};
  for (const auto& r : ranges) key.insert(key.end(), {r.lo, r.hi});
  std::lock_guard lock(mutex);
  if (made.size() >= 4096) made.clear();  // bounded: tries of many names, patterns of many classes
  auto& dfa = made[std::move(key)];
  if (!dfa) dfa = std::make_shared<const CharDfa>(EscapeDfa(ranges).build(after_high_digit));
  return dfa;
}

uint32_t EscapeRules::rule(const std::vector<CodepointRange>& ranges) {
  if (last_rule_ != UINT32_MAX && ranges == last_) return last_rule_;
  key_.clear();
  for (const auto& r : ranges) {
    key_.push_back(r.lo);
    key_.push_back(r.hi);
  }
  // A string automaton asks at every position (a key trie, 2,800 times for 145 sets): no
  // allocation, one hash and probe. The sets are numbered as their rules.
  const auto [number, fresh] = index_.intern(key_);
  if (fresh) {
    const bool all = ranges.size() == 2 && ranges[0].lo == 0 && ranges[0].hi == 0xD7FF && ranges[1].lo == 0xE000 &&
                     ranges[1].hi == kMaxCodepoint;
    const bool pairs = ranges.size() == 1 && ranges[0].lo == 0x10000 && ranges[0].hi == kMaxCodepoint;
    const char* kind = bmp_ ? "json-escape" : "json-surrogate-pair";
    std::string name = (bmp_ ? all : pairs) ? std::string(kind) : fmt::format("{}-{}", kind, rules_.size());
    while (grammar_.find_rule(name) >= 0) name += "-";
    rules_.push_back(Rule{std::move(name), automaton_expr(escape_tail(ranges, !bmp_), false), {}, true});
    ranges_.push_back(ranges);
  }
  last_ = ranges;
  last_rule_ = first_ + number;
  return last_rule_;
}

}  // namespace lockstep
