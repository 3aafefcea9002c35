// fuzz/matcher_fuzz.cpp — differential test of the mask engine. The input drives a small
// random grammar (a few rules of literals, classes, alternations, repetitions and rule
// references, recursion included), a small vocabulary over a few bytes, and a walk of
// accepted tokens and rollbacks. At every step:
//   - the matcher's mask (mask cache, configuration cache) equals the brute-force mask:
//     each token's bytes fed to a parser holding the accepted history;
//   - every allowed token is accepted, a disallowed one is rejected and changes nothing;
//   - after rolling back k steps, the mask equals the one seen k steps ago.
// A mismatch prints the grammar, the vocabulary and the history, and aborts.
#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz/fuzz_common.h"

namespace {

using lockstep::GrammarAutomaton;
using lockstep::EarleyParser;
using lockstep::EarleyMatcher;
using lockstep::Vocabulary;

constexpr int kMaxRules = 4;
constexpr int kMaxSteps = 24;

// The bytes tokens and literals are made of: ASCII and the two bytes of "é" (U+00E9).
constexpr char kAlphabet[] = {'a', 'b', 'c', '\xc3', '\xa9'};

std::string random_expr(FuzzedDataProvider& in, int rules, int depth) {
  const int kind = in.ConsumeIntegralInRange(0, depth >= 3 ? 2 : 7);
  switch (kind) {
    case 0: {  // literal
      static const char* literals[] = {"a", "b", "c", "ab", "abc", "ba", "\\u00e9", "a\\u00e9", "cc"};
      return std::string("\"") + literals[in.ConsumeIntegralInRange<size_t>(0, std::size(literals) - 1)] + "\"";
    }
    case 1: {  // class
      static const char* classes[] = {"[a-b]", "[^a]", "[bc]", "[a\\u00e9]", "[^\\u00e9]", "."};
      return classes[in.ConsumeIntegralInRange<size_t>(0, std::size(classes) - 1)];
    }
    case 2:  // rule reference
      return "r" + std::to_string(in.ConsumeIntegralInRange(0, rules - 1));
    case 3:
    case 4:  // sequence
      return random_expr(in, rules, depth + 1) + " " + random_expr(in, rules, depth + 1);
    case 5:  // alternation
      return "(" + random_expr(in, rules, depth + 1) + " | " + random_expr(in, rules, depth + 1) + ")";
    default: {  // repetition
      static const char* ops[] = {"*", "+", "?", "{2}", "{0,3}", "{1,}", "{2,3}"};
      return "(" + random_expr(in, rules, depth + 1) + ")" + ops[in.ConsumeIntegralInRange<size_t>(0, std::size(ops) - 1)];
    }
  }
}

std::string random_grammar(FuzzedDataProvider& in) {
  const int rules = in.ConsumeIntegralInRange(1, kMaxRules);
  std::string text = "root ::= r0\n";
  for (int r = 0; r < rules; ++r) {
    text += "r" + std::to_string(r) + " ::= " + random_expr(in, rules, 0);
    if (in.ConsumeBool()) text += " | " + random_expr(in, rules, 1);
    text += "\n";
  }
  return text;
}

// End of generation (id 0), the single bytes of the alphabet, and up to 12 random
// strings of 1 to 4 of its bytes.
std::shared_ptr<const Vocabulary> random_vocabulary(FuzzedDataProvider& in) {
  std::vector<std::string> tokens = {"</s>"};
  for (const char c : kAlphabet) tokens.emplace_back(1, c);
  const int extra = in.ConsumeIntegralInRange(0, 12);
  for (int i = 0; i < extra; ++i) {
    std::string token;
    const int length = in.ConsumeIntegralInRange(1, 4);
    for (int j = 0; j < length; ++j) token += kAlphabet[in.ConsumeIntegralInRange<size_t>(0, std::size(kAlphabet) - 1)];
    tokens.push_back(std::move(token));
  }
  std::vector<lockstep::TokenKind> kinds(tokens.size(), lockstep::TokenKind::kText);
  kinds[0] = lockstep::TokenKind::kControl;
  return std::make_shared<const Vocabulary>(std::move(tokens), std::move(kinds), std::vector<int32_t>{0});
}

bool allowed(const std::vector<uint32_t>& mask, size_t id) { return (mask[id / 32] >> (id % 32)) & 1; }

// Each token's bytes fed to a parser that holds `history` (nothing is allowed after end
// of generation).
std::vector<uint32_t> brute_force_mask(const GrammarAutomaton& g, const Vocabulary& v, const std::string& history,
                                       bool terminated) {
  std::vector<uint32_t> mask(v.bitmask_words(), 0);
  if (terminated) return mask;
  EarleyParser p(g, lockstep::fuzz::parser_limits());
  if (!p.advance(history)) {
    std::fprintf(stderr, "fuzz: the parser rejects the accepted history\n");
    std::abort();
  }
  for (size_t id = 0; id < v.size(); ++id) {
    const auto i = static_cast<int32_t>(id);
    bool ok;
    if (v.is_eog(i)) {
      ok = p.accepting();
    } else if (v.is_control(i) || v.token_bytes(i).empty()) {
      ok = false;
    } else {
      EarleyParser fresh = p;  // a copy per token: no rollback involved
      ok = fresh.advance(v.token_bytes(i));
    }
    if (ok) mask[id / 32] |= 1u << (id % 32);
  }
  return mask;
}

std::string printable(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    if (c >= 0x20 && c < 0x7f) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    }
  }
  return out;
}

std::string bits(const std::vector<uint32_t>& mask, size_t n) {
  std::string out;
  for (size_t id = 0; id < n; ++id) out += allowed(mask, id) ? '1' : '0';
  return out;
}

[[noreturn]] void fail(const char* what, const std::string& grammar, const Vocabulary& v, const std::string& history,
                       const std::vector<uint32_t>& got, const std::vector<uint32_t>& want) {
  std::fprintf(stderr, "fuzz: %s\ngrammar:\n%s\nvocabulary:", what, grammar.c_str());
  for (size_t id = 0; id < v.size(); ++id) {
    std::fprintf(stderr, " %zu='%s'", id, printable(v.token_bytes(static_cast<int32_t>(id))).c_str());
  }
  std::fprintf(stderr, "\nhistory: '%s'\nmask:     %s\nexpected: %s\n", printable(history).c_str(),
               bits(got, v.size()).c_str(), bits(want, v.size()).c_str());
  std::abort();
}

void run(FuzzedDataProvider& in) {
  const std::string text = random_grammar(in);
  const auto vocab = random_vocabulary(in);
  const auto grammar = GrammarAutomaton::compile(lockstep::parse_gbnf(text), lockstep::fuzz::compile_limits());
  auto cache = std::make_shared<lockstep::TokenMaskCache>(grammar, vocab);
  EarleyMatcher m(cache);
  std::vector<std::vector<uint32_t>> seen;  // seen[k]: the mask after k steps
  std::vector<std::string> steps;           // bytes of each accepted step
  std::vector<uint32_t> mask(vocab->bitmask_words());
  for (int step = 0; step < kMaxSteps && in.remaining_bytes() > 0; ++step) {
    m.fill_next_token_bitmask(mask);
    std::string history;
    for (const auto& s : steps) history += s;
    if (seen.size() > steps.size()) {
      if (mask != seen[steps.size()]) fail("mask after rollback differs", text, *vocab, history, mask, seen[steps.size()]);
    } else {
      const auto want = brute_force_mask(*grammar, *vocab, history, m.is_terminated());
      if (mask != want) fail("mask differs from brute force", text, *vocab, history, mask, want);
      seen.push_back(mask);
    }
    const int action = in.ConsumeIntegralInRange(0, 7);
    if (action == 0 && m.num_steps() > 0) {  // roll back
      const size_t n = in.ConsumeIntegralInRange<size_t>(1, m.num_steps());
      m.rollback(n);
      steps.resize(steps.size() - n);
      continue;
    }
    const auto id = in.ConsumeIntegralInRange<size_t>(0, vocab->size() - 1);
    const bool ok = m.accept_token(static_cast<int32_t>(id));
    if (ok != allowed(mask, id)) {
      fail(ok ? "accept_token takes a token outside the mask" : "accept_token rejects a token of the mask", text,
           *vocab, history + " + token " + std::to_string(id), mask, mask);
    }
    if (!ok) continue;  // the state is unchanged: the next mask must be the same
    seen.resize(steps.size() + 1);  // masks past this step belong to a rolled-back branch
    steps.emplace_back(vocab->is_eog(static_cast<int32_t>(id)) ? "" : std::string(vocab->token_bytes(static_cast<int32_t>(id))));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  lockstep::fuzz::expect_input_errors([&] { run(in); });
  return 0;
}
