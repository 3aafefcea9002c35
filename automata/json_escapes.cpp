// automata/json_escapes.cpp — see json_escapes.h.
#include "automata/json_escapes.h"

#include <algorithm>
#include <mutex>
#include <string>

#include <fmt/format.h>

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

void pair_calls(const std::vector<CharDfa::Edge>& edges, std::vector<PairCall>& out) {
  size_t n = 0;
  for (const auto& e : edges) {
    if (e.hi < 0x10000) continue;
    const CodepointRange r{std::max<uint32_t>(e.lo, 0x10000), std::min(e.hi, kMaxCodepoint)};
    const auto end = out.begin() + static_cast<ptrdiff_t>(n);
    const auto it = std::find_if(out.begin(), end, [&](const PairCall& c) { return c.target == e.target; });
    if (it == end) {
      if (n == out.size()) out.emplace_back();
      out[n].target = e.target;
      out[n++].ranges.assign(1, r);
    } else if (it->ranges.back().hi + 1 == r.lo) {
      it->ranges.back().hi = r.hi;
    } else {
      it->ranges.push_back(r);
    }
  }
  out.resize(n);
}

namespace {

Expr pair_tail_expr(const std::vector<CodepointRange>& ranges) {
  // Code point c is the pair (H, L), H = D800 + (c - 10000) / 400, L = DC00 + (c - 10000) % 400:
  // a range is at most three rectangles of (high, low) ranges.
  std::vector<std::pair<CodepointRange, CodepointRange>> rects;
  for (const auto& r : ranges) {
    const uint32_t h_lo = 0xD800 + ((r.lo - 0x10000) >> 10), l_lo = 0xDC00 + ((r.lo - 0x10000) & 0x3FF);
    const uint32_t h_hi = 0xD800 + ((r.hi - 0x10000) >> 10), l_hi = 0xDC00 + ((r.hi - 0x10000) & 0x3FF);
    if (h_lo == h_hi) {
      rects.push_back({{h_lo, h_lo}, {l_lo, l_hi}});
      continue;
    }
    // Whole high surrogates in the middle (the ends too when all their low ones are in).
    const uint32_t mid_lo = l_lo == 0xDC00 ? h_lo : h_lo + 1, mid_hi = l_hi == 0xDFFF ? h_hi : h_hi - 1;
    if (mid_lo != h_lo) rects.push_back({{h_lo, h_lo}, {l_lo, 0xDFFF}});
    if (mid_lo <= mid_hi) rects.push_back({{mid_lo, mid_hi}, {0xDC00, 0xDFFF}});
    if (mid_hi != h_hi) rects.push_back({{h_hi, h_hi}, {0xDC00, l_hi}});
  }
  const auto digits = [](const std::pair<uint32_t, uint32_t>& d) {
    std::vector<CodepointRange> cps;
    for (const ByteRange& b : hex_digit_bytes(d.first, d.second)) cps.push_back({b.lo, b.hi});
    return Expr::char_class(std::move(cps));
  };
  std::vector<Expr> choices;
  for (const auto& [high, low] : rects) {
    std::vector<Expr> lows;
    for (const HexDigits& l : hex_sequences(low.lo, low.hi)) {
      lows.push_back(Expr::sequence({digits(l[0]), digits(l[1]), digits(l[2]), digits(l[3])}));
    }
    Expr low_escape = Expr::sequence({Expr::literal("\\u"), Expr::choice(std::move(lows))});
    for (const HexDigits& h : hex_sequences(high.lo, high.hi)) {  // h[0] is D: read by the caller
      choices.push_back(Expr::sequence({digits(h[1]), digits(h[2]), digits(h[3]), low_escape}));
    }
  }
  return Expr::choice(std::move(choices));
}

}  // namespace

std::shared_ptr<const CharDfa> surrogate_pair_tail(const std::vector<CodepointRange>& ranges) {
  static std::mutex mutex;
  static std::map<std::vector<uint32_t>, std::shared_ptr<const CharDfa>> made;  // flattened ranges
  std::vector<uint32_t> key;
  for (const auto& r : ranges) key.insert(key.end(), {r.lo, r.hi});
  std::lock_guard lock(mutex);
  if (made.size() >= 4096) made.clear();  // bounded: patterns with many supplementary classes
  auto& dfa = made[std::move(key)];
  if (!dfa) dfa = std::make_shared<const CharDfa>(CharDfa::from_expr(pair_tail_expr(ranges)));
  return dfa;
}

uint32_t SurrogatePairRules::rule(const std::vector<CodepointRange>& ranges) {
  if (last_rule_ != UINT32_MAX && ranges == last_) return last_rule_;
  std::vector<uint32_t> key;
  for (const auto& r : ranges) key.insert(key.end(), {r.lo, r.hi});
  auto [it, fresh] = index_.try_emplace(std::move(key), end());
  if (fresh) {
    const bool all = ranges.size() == 1 && ranges[0].lo == 0x10000 && ranges[0].hi == kMaxCodepoint;
    std::string name = all ? "json-surrogate-pair" : fmt::format("json-surrogate-pair-{}", rules_.size());
    while (grammar_.find_rule(name) >= 0) name += "-";
    rules_.push_back(Rule{std::move(name), automaton_expr(surrogate_pair_tail(ranges), false), {}, true});
    ranges_.push_back(ranges);
  }
  last_ = ranges;
  last_rule_ = it->second;
  return it->second;
}

}  // namespace lockstep
