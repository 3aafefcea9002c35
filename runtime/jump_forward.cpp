// runtime/jump_forward.cpp — see jump_forward.h.
#include "runtime/jump_forward.h"

#include <algorithm>
#include <string>

namespace lockstep {

namespace {

// Is there a text token that starts with `s`, is longer, and whose remaining bytes the
// grammar allows after the matcher's state? `allowed`: bytes the grammar allows next.
bool token_crosses(const Vocabulary& v, EarleyMatcher& m, std::string_view s, const GrammarAutomaton::ByteSet& allowed) {
  const auto sorted = v.sorted_text_tokens();
  size_t lo = 0, hi = sorted.size();
  while (lo < hi) {  // first sorted token >= s
    const size_t mid = (lo + hi) / 2;
    if (v.sorted_bytes(mid) < s) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (size_t i = lo; i < sorted.size();) {
    const std::string_view b = v.sorted_bytes(i);
    if (b.size() < s.size() || b.compare(0, s.size(), s) != 0) break;
    if (b.size() == s.size()) {
      ++i;
      continue;
    }
    const auto next = static_cast<uint8_t>(b[s.size()]);
    if (!((allowed[next >> 6] >> (next & 63)) & 1)) {
      i = v.sorted_prefix_end(i, s.size() + 1);  // every token with this next byte
      continue;
    }
    if (m.accept_bytes(b.substr(s.size()))) {
      m.rollback(1);
      return true;
    }
    ++i;
  }
  return false;
}

}  // namespace

ForcedTokens forced_tokens(const Tokenizer& tok, EarleyMatcher& m, std::optional<int32_t> previous) {
  const std::string forced = m.jump_forward_bytes();
  if (forced.empty()) return {};
  const Vocabulary& v = tok.vocabulary();
  const std::string before =
      previous && !v.is_control(*previous) ? std::string(v.token_bytes(*previous)) : std::string();
  const std::string text = before + forced;

  // The first index a token could start at and cross the end of the forced bytes.
  size_t safe = text.size();
  if (!m.accept_bytes(forced)) return {};
  const GrammarAutomaton::ByteSet allowed = m.next_bytes();
  const size_t reach = v.max_token_bytes();
  for (size_t idx = text.size() >= reach ? text.size() - reach + 1 : 0; idx < text.size(); ++idx) {
    if (token_crosses(v, m, std::string_view(text).substr(idx), allowed)) {
      safe = idx;
      break;
    }
  }
  m.rollback(1);

  std::vector<int32_t> tokens = tok.encode_continuation(text);
  size_t end = 0, keep = 0;
  for (; keep < tokens.size(); ++keep) {
    const size_t len = tok.token_bytes(tokens[keep]).size();
    if (end + len > safe) break;
    end += len;
  }
  tokens.resize(keep);
  ForcedTokens out;
  size_t start = 0;  // where the appended tokens' text starts in `text`
  if (!before.empty()) {
    if (!tokens.empty() && tokens[0] == *previous) {
      tokens.erase(tokens.begin());
      start = before.size();
    } else {
      out.rollback = 1;  // the tokenizer merges the previous token with the forced bytes
    }
  }
  // The longest prefix the tokenizer writes exactly so on its own.
  while (!tokens.empty() && tok.encode_continuation(std::string_view(text).substr(start, end - start)) != tokens) {
    end -= tok.token_bytes(tokens.back()).size();
    tokens.pop_back();
  }
  if (tokens.empty() || end <= before.size()) return {};  // nothing forced beyond the previous token
  out.tokens = std::move(tokens);
  out.forced_bytes = end - before.size();
  return out;
}

}  // namespace lockstep
