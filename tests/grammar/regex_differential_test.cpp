// Differential test against RE2, the reference matcher: for every regex of rust-lang/regex's
// test data and XGrammar's regex converter cases that RE2 accepts and lockstep's dialect
// covers, (a) strings drawn by random walks of lockstep's automaton are full matches for
// RE2, and (b) the test haystacks and random mutations of drawn strings get the same
// full-match verdict from both.
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>
#include <toml++/toml.h>

#include "automata/earley.h"
#include "grammar/utf8.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

struct Corpus {
  std::map<std::string, std::vector<std::string>> haystacks;  // regex → haystacks
};

Corpus load_corpus() {
  Corpus c;
  auto add_dir = [&](const std::filesystem::path& dir) {
    for (const auto& f : test_data::files_with_suffix(dir, ".toml")) {
      const toml::table t = toml::parse_file(f.string());
      const toml::array* tests = t["test"].as_array();
      if (!tests) continue;
      for (const auto& node : *tests) {
        const toml::table& tt = *node.as_table();
        const auto* regex = tt["regex"].as_string();
        if (!regex) continue;  // regex sets
        if (!tt["unicode"].value_or(true) || !tt["utf8"].value_or(true) || tt["unescape"].value_or(false)) continue;
        if (!tt["compiles"].value_or(true)) continue;
        std::string pattern = regex->get();
        if (tt["case-insensitive"].value_or(false)) pattern = "(?i)" + pattern;
        auto& hs = c.haystacks[pattern];
        if (const auto* h = tt["haystack"].as_string()) hs.push_back(h->get());
      }
    }
  };
  add_dir(test_data::shared("regex/rust-regex-testdata"));
  add_dir(test_data::shared("regex/rust-regex-testdata/fowler"));
  const auto xg = nlohmann::json::parse(test_data::read_file(test_data::shared("regex/xgrammar/regex_converter_cases.json")));
  for (const auto& k : xg) {
    auto& hs = c.haystacks[k["regex"].get<std::string>()];
    if (k.contains("input") && k["input"].is_string()) hs.push_back(k["input"]);
  }
  return c;
}

// A random string of the automaton's language: random next bytes, stopping at random once
// the parse accepts. Empty optional when no accepting string was reached within the cap.
std::optional<std::string> draw(const GrammarAutomaton& g, std::mt19937& rng) {
  EarleyParser p(g);
  std::string out;
  for (size_t steps = 0; steps < 4000; ++steps) {
    if (p.accepting() && (rng() % 4 == 0 || !p.can_advance())) return out;
    std::vector<uint8_t> next;
    for (const auto& it : p.current_items()) {
      for (const auto& e : g.byte_edges(it.state)) {
        for (int b = e.lo; b <= e.hi; ++b) next.push_back(static_cast<uint8_t>(b));
      }
    }
    if (next.empty()) return std::nullopt;
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    // Prefer ASCII when there is a choice, so multi-byte walks do not dominate.
    uint8_t b = next[rng() % next.size()];
    if (b >= 0x80 && next.front() < 0x80 && rng() % 2) b = next[rng() % (std::lower_bound(next.begin(), next.end(), 0x80) - next.begin())];
    if (!p.advance(b)) return std::nullopt;  // cannot happen: every edge is viable
    out.push_back(static_cast<char>(b));
  }
  return p.accepting() ? std::optional<std::string>(out) : std::nullopt;
}

// A mutation at code-point granularity (keeps UTF-8 valid).
std::string mutate(const std::string& s, std::mt19937& rng) {
  static const std::vector<std::string> pool = {"a", "b", "z", "A", "0", "9", "-", "_", " ", "\n", ".", "@",
                                                "\xC3\xA9", "\xE2\x98\x83", "\xF0\x9F\x98\x80", "x", "\t", "\\"};
  std::vector<std::string> cps;
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    utf8::decode(s, j);
    cps.push_back(s.substr(i, j - i));
    i = j;
  }
  const int op = static_cast<int>(rng() % 3);
  const size_t at = cps.empty() ? 0 : rng() % (cps.size() + (op == 1 ? 1 : 0));
  if (op == 0 && !cps.empty()) {
    cps.erase(cps.begin() + static_cast<ptrdiff_t>(std::min(at, cps.size() - 1)));
  } else if (op == 1 || cps.empty()) {
    cps.insert(cps.begin() + static_cast<ptrdiff_t>(std::min(at, cps.size())), pool[rng() % pool.size()]);
  } else {
    cps[std::min(at, cps.size() - 1)] = pool[rng() % pool.size()];
  }
  std::string out;
  for (const auto& c : cps) out += c;
  return out;
}

TEST(RegexDifferential, AgreesWithRe2) {
  const Corpus corpus = load_corpus();
  std::mt19937 rng(2026);
  size_t tried = 0, re2_ok = 0, in_dialect = 0, agreeing = 0, drawn = 0, compared = 0;
  std::map<std::string, size_t> out_of_dialect;
  re2::RE2::Options opt;
  opt.set_log_errors(false);
  for (const auto& [pattern, haystacks] : corpus.haystacks) {
    ++tried;
    re2::RE2 re(pattern, opt);
    if (!re.ok()) continue;
    ++re2_ok;
    std::shared_ptr<const GrammarAutomaton> g;
    try {
      g = GrammarAutomaton::compile(parse_regex(pattern));
    } catch (const GrammarError& e) {
      std::string why = e.message();
      out_of_dialect[why.substr(0, why.find_first_of("'(\\"))]++;
      continue;
    }
    ++in_dialect;
    bool agree = true;
    auto ours = [&](const std::string& s) {
      EarleyParser p(*g);
      return p.advance(s) && p.accepting();
    };
    std::vector<std::string> samples;
    for (int i = 0; i < 200; ++i) {
      auto s = draw(*g, rng);
      if (!s) continue;
      ++drawn;
      samples.push_back(*s);
      if (!re2::RE2::FullMatch(*s, re)) {
        agree = false;
        ADD_FAILURE() << "drawn string is not a full match for RE2: /" << pattern << "/ on '" << *s << "'";
        break;
      }
    }
    std::vector<std::string> probes = haystacks;
    for (int i = 0; i < 200 && !samples.empty(); ++i) probes.push_back(mutate(samples[rng() % samples.size()], rng));
    for (const auto& h : probes) {
      if (!utf8::is_valid(h)) continue;
      ++compared;
      const bool expected = re2::RE2::FullMatch(h, re);
      if (ours(h) != expected) {
        agree = false;
        ADD_FAILURE() << "/" << pattern << "/ on '" << h << "': RE2 says " << expected;
        break;
      }
    }
    agreeing += agree;
  }
  std::printf("[ regex    ] %zu regexes tried, %zu accepted by RE2, %zu in dialect, %zu agreeing "
              "(%zu drawn strings, %zu verdicts compared)\n",
              tried, re2_ok, in_dialect, agreeing, drawn, compared);
  for (const auto& [why, n] : out_of_dialect) std::printf("[ regex    ]   out of dialect %3zu: %s\n", n, why.c_str());
  EXPECT_EQ(agreeing, in_dialect);
  EXPECT_GT(in_dialect, 350u);
}

}  // namespace
}  // namespace lockstep
