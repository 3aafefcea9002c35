// schemas/number_automaton.cpp — number-text automata from mantissa walks (number_automaton.h).
#include "schemas/number_automaton.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "grammar/hash.h"
#include "grammar/intern_table.h"

namespace lockstep::number_automaton {

namespace {

using Edges = CharDfa::Edges;

// Appends [lo, hi] → target, merging with the previous edge when adjacent and equal.
void add_edge(Edges& edges, uint32_t lo, uint32_t hi, uint32_t target) {
  if (!edges.empty() && edges.back().target == target && edges.back().hi + 1 == lo) {
    edges.back().hi = hi;
  } else {
    edges.push_back({lo, hi, target});
  }
}

// Decimal digits of a magnitude (empty for 0: it compares equal to a run of zeros).
std::string magnitude_digits(int64_t v) { return v == 0 ? std::string() : std::to_string(v); }

// Digit strings [0-9]+ (leading zeros allowed) whose value lies in [a, b] (no b: unbounded),
// walked as a comparison of the significant digits with those of a and b: states are
// (digits read, significant digits read, order of that prefix against a's and b's).
class MagnitudeRange {
 public:
  MagnitudeRange(int64_t a, const int64_t* b) : a_(magnitude_digits(a)), bounded_(b != nullptr) {
    if (b) b_ = magnitude_digits(*b);
    cap_ = static_cast<int>(std::max(a_.size(), b_.size())) + 1;
  }
  struct S {
    bool any = false;  // a digit was read
    int len = 0;       // significant digits read (capped at cap_)
    int ca = 0, cb = 0;  // the significant prefix against a's / b's first len digits: -1, 0, 1
    uint64_t key() const {
      return static_cast<uint64_t>(any) | static_cast<uint64_t>(len) << 1 | static_cast<uint64_t>(ca + 1) << 40 |
             static_cast<uint64_t>(cb + 1) << 44;
    }
  };
  // The state after digit x, or false when no continuation lies in range.
  bool step(S s, int x, S& out) const {
    out = s;
    out.any = true;
    if (s.len == 0 && x == 0) return true;
    const size_t i = static_cast<size_t>(s.len);
    if (bounded_ && i + 1 > b_.size()) return false;  // longer than b: above it
    if (i < a_.size() && s.ca == 0) out.ca = x < a_[i] - '0' ? -1 : x > a_[i] - '0' ? 1 : 0;
    if (i < b_.size() && s.cb == 0) out.cb = x < b_[i] - '0' ? -1 : x > b_[i] - '0' ? 1 : 0;
    out.len = s.len + 1;
    if (out.len >= cap_) out.len = cap_, out.ca = 0, out.cb = 0;  // longer than both: only "more" remains
    if (static_cast<size_t>(out.len) > a_.size()) out.ca = 0;
    return true;
  }
  bool accepts(const S& s) const {
    const size_t n = static_cast<size_t>(s.len);
    const bool above_a = n > a_.size() || (n == a_.size() && s.ca >= 0);
    const bool below_b = !bounded_ || n < b_.size() || (n == b_.size() && s.cb <= 0);
    return s.any && above_a && below_b;
  }

 private:
  std::string a_, b_;
  bool bounded_;
  int cap_;
};

// The exponent automata over a table of rows, one per state, with a target per symbol ('+',
// '-', '0'..'9'; kNoRow: no edge) and minimized in place by Moore's rounds: a number's
// automaton asks for hundreds of intervals (a range of integers with exponents, 365), each a
// dozen states, where the generic construction and minimization cost more in allocations
// than in steps.
constexpr int kSymbols = 12;  // '+', '-', then the digits
constexpr uint32_t kNoRow = UINT32_MAX;
struct ExponentRow {
  std::array<uint32_t, kSymbols> to;
  bool final = false;
  ExponentRow() { to.fill(kNoRow); }
};

// The minimal automaton of `rows` (row 0 starts): rows that reach no final row dropped,
// equivalent rows merged (Moore's rounds: each gives a row the class of its finality and its
// targets' classes, found in a small hash table, until no class splits), classes numbered by
// their first row. Rows are a dozen: buffers of that size live in the call.
template <class Rows>
CharDfa minimal_exponents(const Rows& rows) {
  using Small = boost::container::small_vector<uint32_t, 32>;
  const auto n = static_cast<uint32_t>(rows.size());
  boost::container::small_vector<char, 32> live(n, 0);
  for (uint32_t r = 0; r < n; ++r) live[r] = rows[r].final;
  for (bool grew = true; grew;) {  // rows are made before the rows they lead to: a pass or two, backwards
    grew = false;
    for (uint32_t r = n; r-- > 0;) {
      if (live[r]) continue;
      for (const uint32_t t : rows[r].to) {
        if (t != kNoRow && live[t]) {
          live[r] = grew = true;
          break;
        }
      }
    }
  }
  // Each row's targets that are live (kNoRow: none), once.
  boost::container::small_vector<std::array<uint32_t, kSymbols>, 24> to(n);
  for (uint32_t r = 0; r < n; ++r) {
    for (int k = 0; k < kSymbols; ++k) {
      const uint32_t t = rows[r].to[k];
      to[r][k] = t != kNoRow && live[t] ? t : kNoRow;
    }
  }
  Small cls(n, 0), next(n, 0), order, rep;
  for (uint32_t r = 0; r < n; ++r) {
    cls[r] = rows[r].final ? 1 : 0;
    if (live[r] || r == 0) order.push_back(r);
  }
  // A row's key: its class, then its targets' classes (kNoRow: no edge).
  auto class_of = [&](uint32_t t) { return t == kNoRow ? kNoRow : cls[t]; };
  auto same = [&](uint32_t x, uint32_t y) {
    if (cls[x] != cls[y]) return false;
    for (int k = 0; k < kSymbols; ++k) {
      if (class_of(to[x][k]) != class_of(to[y][k])) return false;
    }
    return true;
  };
  auto hash = [&](uint32_t r) {
    uint64_t h = cls[r];
    for (int k = 0; k < kSymbols; ++k) h = (h ^ class_of(to[r][k])) * 0x9E3779B97F4A7C15ull;
    return h ^ h >> 29;
  };
  size_t slots = 16;
  while (slots < 2 * order.size()) slots *= 2;
  Small table(slots);
  size_t count = 0;
  for (;;) {
    std::fill(table.begin(), table.end(), kNoRow);
    rep.clear();
    for (const uint32_t r : order) {
      for (size_t i = hash(r) & (slots - 1);; i = (i + 1) & (slots - 1)) {
        if (table[i] == kNoRow) {
          table[i] = static_cast<uint32_t>(rep.size());
          next[r] = static_cast<uint32_t>(rep.size());
          rep.push_back(r);
          break;
        }
        if (same(rep[table[i]], r)) {
          next[r] = table[i];
          break;
        }
      }
    }
    for (const uint32_t r : order) cls[r] = next[r];
    if (rep.size() == count) break;  // nothing split: stable
    count = rep.size();
  }
  // Classes are numbered by first row in `order` (row 0 first): rep[c] is class c's.
  std::vector<CharDfa::State> states(rep.size());
  static constexpr char kSymbol[kSymbols] = {'+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'};
  for (size_t c = 0; c < rep.size(); ++c) {
    states[c].final = rows[rep[c]].final && live[rep[c]];
    for (int k = 0; k < kSymbols; ++k) {
      const uint32_t t = to[rep[c]][k];
      if (t != kNoRow) add_edge(states[c].edges, static_cast<uint8_t>(kSymbol[k]), static_cast<uint8_t>(kSymbol[k]), cls[t]);
    }
  }
  return CharDfa::from_states(std::move(states));
}

// The magnitudes m of an exponent in [lo, hi] on each side of its sign: after '+' or no
// sign X = m ≥ 0 with m in [max(lo, 0), hi]; after '-' X = -m with m in [max(-hi, 0), -lo].
struct Side {
  bool ok = false;
  int64_t a = 0, b = 0;
  bool bounded = false;
  std::tuple<int64_t, int64_t, bool> key() const { return {a, bounded ? b : -1, bounded}; }
};
std::pair<Side, Side> sides_of(int64_t lo, int64_t hi) {
  const int64_t L = lo, H = hi;
  Side pos, neg;
  if (hi == kPlusInfinity || H >= 0) {
    pos.a = lo == kMinusInfinity ? 0 : std::max<int64_t>(L, 0);
    pos.bounded = hi != kPlusInfinity;
    pos.b = H;
    pos.ok = !pos.bounded || pos.b >= pos.a;
  }
  if (lo == kMinusInfinity || L <= 0) {
    neg.a = hi == kPlusInfinity ? 0 : std::max<int64_t>(-H, 0);
    neg.bounded = lo != kMinusInfinity;
    neg.b = -L;
    neg.ok = !neg.bounded || neg.b >= neg.a;
  }
  return {pos, neg};
}

// Digit texts [0-9]+ whose value lies in [side.a, side.b] (unbounded: no b), minimized; the
// start reads the first digit.
CharDfa build_magnitudes(const Side& side) {
  const MagnitudeRange range(side.a, side.bounded ? &side.b : nullptr);
  boost::container::small_vector<ExponentRow, 24> rows(1);
  boost::container::small_vector<uint64_t, 24> keys(1, UINT64_MAX);  // the start: no digit read
  boost::container::small_vector<MagnitudeRange::S, 24> walk(1);
  std::unordered_map<uint64_t, uint32_t> index;  // past a scan of kScanRows keys
  constexpr size_t kScanRows = 64;
  auto row_of = [&](const MagnitudeRange::S& st) {
    const uint64_t key = st.key();
    if (keys.size() <= kScanRows) {
      for (size_t i = 0; i < keys.size(); ++i) {
        if (keys[i] == key) return static_cast<uint32_t>(i);
      }
    } else {
      if (index.empty()) {
        for (size_t i = 0; i < keys.size(); ++i) index.emplace(keys[i], static_cast<uint32_t>(i));
      }
      if (const auto it = index.find(key); it != index.end()) return it->second;
      index.emplace(key, static_cast<uint32_t>(keys.size()));
    }
    keys.push_back(key);
    walk.push_back(st);
    rows.emplace_back();
    return static_cast<uint32_t>(rows.size() - 1);
  };
  for (uint32_t r = 0; r < rows.size(); ++r) {
    const MagnitudeRange::S st = walk[r];
    for (int x = 0; x <= 9; ++x) {
      MagnitudeRange::S t;
      if (range.step(st, x, t)) {
        const uint32_t to = row_of(t);
        rows[r].to[2 + x] = to;
      }
    }
    rows[r].final = r != 0 && range.accepts(st);
  }
  return minimal_exponents(rows);
}

// build_magnitudes(side), memoized process-wide as exponents_between() is: the walks of one
// schema ask for the same sides again and again.
const CharDfa& magnitudes_between(const Side& side) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, int64_t, bool>, std::unique_ptr<const CharDfa>> cache;
  const auto key = side.key();
  {
    std::lock_guard lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return *it->second;
  }
  auto dfa = std::make_unique<const CharDfa>(build_magnitudes(side));
  std::lock_guard lock(mutex);
  auto [it, fresh] = cache.try_emplace(key, std::move(dfa));
  return *it->second;
}

CharDfa build_exponents(int64_t lo, int64_t hi) {
  const auto [pos, neg] = sides_of(lo, hi);
  // Row 0 reads the sign or, with none, the first digit as after '+'; then the rows of each
  // side's magnitudes (digits only), merged where they meet.
  boost::container::small_vector<ExponentRow, 24> rows(1);
  auto add_side = [&](const Side& side) {
    const CharDfa& m = magnitudes_between(side);
    const auto base = static_cast<uint32_t>(rows.size());
    for (const auto& st : m.states()) {
      ExponentRow row;
      row.final = st.final;
      for (const auto& e : st.edges) {
        for (uint32_t c = e.lo; c <= e.hi; ++c) row.to[2 + (c - '0')] = base + e.target;
      }
      rows.push_back(row);
    }
    return base;
  };
  if (pos.ok) {
    const uint32_t p = add_side(pos);
    rows[0].to = rows[p].to;  // the digits as after '+'
    rows[0].to[0] = p;
  }
  if (neg.ok) rows[0].to[1] = add_side(neg);
  return minimal_exponents(rows);
}

enum Shape : uint8_t { kBegin, kZero, kInt, kDot, kFrac };

struct Key {
  uint64_t cond;
  uint8_t side, shape;
  bool operator==(const Key& o) const { return cond == o.cond && side == o.side && shape == o.shape; }
};
struct KeyHash {
  uint64_t operator()(const Key& k) const {
    return fmix64(k.cond ^ fmix64(static_cast<uint64_t>(k.side) << 8 | k.shape));
  }
};

}  // namespace

const CharDfa& exponents_between(int64_t lo, int64_t hi) {
  static std::mutex mutex;
  static std::map<std::pair<int64_t, int64_t>, std::unique_ptr<const CharDfa>> cache;
  {
    std::lock_guard lock(mutex);
    auto it = cache.find({lo, hi});
    if (it != cache.end()) return *it->second;
  }
  auto dfa = std::make_unique<const CharDfa>(build_exponents(lo, hi));
  std::lock_guard lock(mutex);
  auto [it, fresh] = cache.try_emplace({lo, hi}, std::move(dfa));
  return *it->second;
}

CharDfa build(const Condition* nonnegative, const Condition* negative, bool exponents, size_t max_states) {
  const Condition* sides[2] = {nonnegative, negative};
  // The states' edges in one pool (CharDfa::minimal_from): a state reads up to ten digits
  // to as many targets, past the edges a CharDfa::State keeps inline.
  CharDfa::PooledStates states;
  constexpr uint32_t kNone = UINT32_MAX;  // no state (no exponent, no side)
  auto add_state = [&] {
    states.first.push_back(0);
    states.past.push_back(0);
    states.final.push_back(0);
  };
  add_state();
  // The keys in the order met, expanded in that order; state_of: each one's state (the
  // exponent states interleave).
  InternTable<Key, KeyHash> keys(1024);
  std::vector<uint32_t> state_of;
  std::map<std::pair<int64_t, int64_t>, uint32_t> exponent_starts;
  auto intern = [&](const Key& k) {
    const auto [n, fresh] = keys.intern(k);
    if (fresh) {
      if (states.final.size() >= max_states) throw std::length_error("number automaton over its state budget");
      state_of.push_back(static_cast<uint32_t>(states.final.size()));
      add_state();
    }
    return state_of[n];
  };
  auto append = [&](const CharDfa& x) {
    const auto offset = static_cast<uint32_t>(states.final.size());
    for (const auto& s : x.states()) {
      states.first.push_back(static_cast<uint32_t>(states.edges.size()));
      for (const auto& e : s.edges) states.edges.push_back({e.lo, e.hi, e.target + offset});
      states.past.push_back(static_cast<uint32_t>(states.edges.size()));
      states.final.push_back(s.final ? 1 : 0);
    }
    return offset;
  };
  // An interval's exponent texts: a state reading the sign, into the automata of the
  // magnitudes on each side, each appended once. The intervals of one walk share their
  // sides (an integer up to 2^31 - 1 asks for 365 intervals, from about 40 sides each way);
  // the minimization at the end merges what the pieces have in common.
  std::map<std::tuple<int64_t, int64_t, bool>, uint32_t> magnitude_starts;
  auto magnitude_state = [&](const Side& side) {
    auto [it, fresh] = magnitude_starts.try_emplace(side.key(), 0);
    if (fresh) it->second = append(magnitudes_between(side));
    return it->second;
  };
  auto exponent_state = [&](int64_t lo, int64_t hi) {
    auto [it, fresh] = exponent_starts.try_emplace({lo, hi}, 0);
    if (!fresh) return it->second;
    const auto [pos, neg] = sides_of(lo, hi);
    const uint32_t p = pos.ok ? magnitude_state(pos) : kNone;
    const uint32_t n = neg.ok ? magnitude_state(neg) : kNone;
    const auto id = static_cast<uint32_t>(states.final.size());
    add_state();
    states.first[id] = static_cast<uint32_t>(states.edges.size());
    if (p != kNone) states.edges.push_back({'+', '+', p});
    if (n != kNone) states.edges.push_back({'-', '-', n});
    if (p != kNone) {  // no sign: the digits as after '+'
      for (uint32_t k = states.first[p]; k < states.past[p]; ++k) {
        const CharDfa::Edge e = states.edges[k];  // a copy: the push may move the pool
        states.edges.push_back(e);
      }
    }
    states.past[id] = static_cast<uint32_t>(states.edges.size());
    return it->second = id;
  };
  // Several intervals (Condition::intervals): merged where they meet; the union of their
  // automata when more than one remains, made once per list. kNone: no exponent.
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::map<std::vector<std::pair<int64_t, int64_t>>, uint32_t> exponent_unions;
  auto exponent_union = [&]() -> uint32_t {
    std::sort(spans.begin(), spans.end());
    size_t n = 0;
    for (const auto& [lo, hi] : spans) {
      if (lo > hi) continue;
      if (n > 0 && lo <= spans[n - 1].second + 1) {
        spans[n - 1].second = std::max(spans[n - 1].second, hi);
      } else {
        spans[n++] = {lo, hi};
      }
    }
    spans.resize(n);
    if (n == 0) return kNone;
    if (n == 1) return exponent_state(spans[0].first, spans[0].second);
    auto [it, fresh] = exponent_unions.try_emplace(spans, 0);
    if (fresh) {
      CharDfa u = exponents_between(spans[0].first, spans[0].second);
      for (size_t i = 1; i < n; ++i) u = CharDfa::unite(u, exponents_between(spans[i].first, spans[i].second));
      it->second = append(u);
    }
    return it->second;
  };
  // The positive side's begin state is state 0; '-' leads to the negative side's.
  if (nonnegative) {
    keys.intern(Key{nonnegative->start(), 0, kBegin});
    state_of.push_back(0);
  }
  // When both signs have the same condition, their walks share states past the begin state.
  const uint8_t negative_side = negative == nonnegative ? 0 : 1;
  const uint32_t minus = negative ? intern({negative->start(), 1, kBegin}) : 0;
  if (!nonnegative && negative) {
    states.first[0] = static_cast<uint32_t>(states.edges.size());
    states.edges.push_back({'-', '-', minus});
    states.past[0] = static_cast<uint32_t>(states.edges.size());
  }
  Edges edges;  // one state's, reused
  for (uint32_t i = 0; i < keys.size(); ++i) {
    const Key k = keys.key(i);
    const uint32_t id = state_of[i];
    const Condition& c = *sides[k.side];
    const uint8_t side = k.side == 1 ? negative_side : k.side;  // of the states after this one
    edges.clear();
    if (id == 0 && negative) edges.push_back({'-', '-', minus});
    if (k.shape == kZero || k.shape == kInt) {
      const uint64_t t = c.step(k.cond, '.');
      if (t != Condition::kReject) edges.push_back({'.', '.', intern({t, side, kDot})});
    }
    if (k.shape != kZero) {
      for (int x = 0; x <= 9; ++x) {
        const Shape to = k.shape == kBegin ? (x == 0 ? kZero : kInt) : k.shape == kInt ? kInt : kFrac;
        const uint64_t t = c.step(k.cond, static_cast<char>('0' + x));
        if (t != Condition::kReject) add_edge(edges, '0' + x, '0' + x, intern({t, side, to}));
      }
    }
    bool final = false;
    if (k.shape == kZero || k.shape == kInt || k.shape == kFrac) {
      const Verdict v = c.end(k.cond);
      final = v.plain;
      uint32_t x = kNone;
      if (exponents) {
        spans.clear();
        if (c.intervals(k.cond, spans)) {
          x = exponent_union();
        } else if (v.lo <= v.hi) {
          x = exponent_state(v.lo, v.hi);
        }
      }
      if (x != kNone) {
        edges.push_back({'E', 'E', x});
        edges.push_back({'e', 'e', x});
      }
    }
    states.first[id] = static_cast<uint32_t>(states.edges.size());
    states.edges.insert(states.edges.end(), edges.begin(), edges.end());
    states.past[id] = static_cast<uint32_t>(states.edges.size());
    states.final[id] = final ? 1 : 0;
  }
  return CharDfa::minimal_from(states);
}

}  // namespace lockstep::number_automaton
