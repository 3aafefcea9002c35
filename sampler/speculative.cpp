// sampler/speculative.cpp — see speculative.h.
#include "sampler/speculative.h"

#include <algorithm>
#include <unordered_map>

namespace lockstep {

double probability_of(const Candidates& dist, int32_t id) {
  for (const auto& t : dist.data) {
    if (t.id == id) return t.p;
  }
  return 0;
}

bool speculative_accept(const Candidates& p, const Candidates& q, int32_t x, double u) {
  const double px = probability_of(p, x);
  const double qx = probability_of(q, x);
  if (px <= 0) return false;
  if (qx <= 0) return true;
  return u * qx < px;
}

int32_t speculative_residual(const Candidates& p, const Candidates& q, double u) {
  std::unordered_map<int32_t, double> qp;
  for (const auto& t : q.data) qp[t.id] = t.p;
  Candidates r;
  for (const auto& t : p.data) {
    const auto it = qp.find(t.id);
    const double rest = t.p - (it == qp.end() ? 0.0 : it->second);
    if (rest > 0) r.data.push_back({t.id, t.logit, static_cast<float>(rest)});
  }
  return r.data.empty() ? draw_from(p, u) : draw_from(r, u);
}

Candidates point_mass(int32_t id) {
  Candidates c;
  c.data.push_back({id, 0.0f, 1.0f});
  c.sorted = true;
  return c;
}

std::vector<int32_t> lookup_ngram_draft(std::span<const int32_t> history, size_t n, size_t k) {
  if (n == 0 || k == 0 || history.size() <= n) return {};
  const auto tail = history.subspan(history.size() - n);
  // From the latest earlier occurrence back: the first with k tokens after it wins; else
  // the one with the most tokens after it (an occurrence near the end has few).
  size_t best_from = 0, best_len = 0;
  for (size_t start = history.size() - n; start-- > 0;) {
    if (!std::equal(tail.begin(), tail.end(), history.begin() + static_cast<std::ptrdiff_t>(start))) continue;
    const size_t from = start + n;
    const size_t len = std::min(k, history.size() - from);
    if (len > best_len) {
      best_from = from;
      best_len = len;
    }
    if (len == k) break;
  }
  return {history.begin() + static_cast<std::ptrdiff_t>(best_from),
          history.begin() + static_cast<std::ptrdiff_t>(best_from + best_len)};
}

}  // namespace lockstep
