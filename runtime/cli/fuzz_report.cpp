// runtime/cli/fuzz_report.cpp — the report of `lockstep fuzz` (see fuzz.h), as text or JSON.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/cli/fuzz.h"

namespace lockstep::cli {

namespace {

// Bytes as a double-quoted string: printable ASCII as is, the rest escaped.
std::string shown(std::string_view bytes) {
  std::string out = "\"";
  for (unsigned char c : bytes) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out + "\"";
}

std::string byte_name(unsigned c) {
  if (c > 0x20 && c < 0x7f && c != '\'' && c != '\\') return fmt::format("'{}'", static_cast<char>(c));
  return fmt::format("0x{:02X}", c);
}

// "'a'-'z', 0x80-0xBF": the bytes of a set, in ranges.
std::string byte_ranges(const GrammarAutomaton::ByteSet& set) {
  std::string out;
  for (unsigned b = 0; b < 256;) {
    if (!((set[b >> 6] >> (b & 63)) & 1)) {
      ++b;
      continue;
    }
    unsigned e = b;
    while (e + 1 < 256 && ((set[(e + 1) >> 6] >> ((e + 1) & 63)) & 1)) ++e;
    out += (out.empty() ? "" : ", ") + (e == b ? byte_name(b) : byte_name(b) + "-" + byte_name(e));
    b = e + 1;
  }
  return out.empty() ? "none" : out;
}

std::string token_list(const Tokenizer& tok, const std::vector<int32_t>& ids, size_t limit = 64) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < limit; ++i) {
    const int32_t id = ids[i];
    out += (i ? " " : "") + fmt::format("{}:{}", id, tok.vocabulary().is_control(id) ? tok.token_name(id) : shown(tok.token_bytes(id)));
  }
  if (ids.size() > limit) out += fmt::format(" … ({} tokens)", ids.size());
  return out;
}

// The control tokens whose text begins with a byte the grammar allows next: where only such
// a token spells the continuation, the state beyond is reachable only through a special
// token, which a model writes as a control token and no grammar allows.
std::vector<int32_t> special_spellers(const Tokenizer& tok, const ExploreSite& s) {
  std::vector<int32_t> out;
  const Vocabulary& vocab = tok.vocabulary();
  for (size_t id = 0; id < vocab.size() && out.size() < 8; ++id) {
    const auto i = static_cast<int32_t>(id);
    if (!vocab.is_control(i)) continue;
    const std::string& name = tok.token_name(i);
    if (name.empty()) continue;
    const auto b = static_cast<unsigned char>(name[0]);
    if ((s.next_bytes[b >> 6] >> (b & 63)) & 1) out.push_back(i);
  }
  return out;
}

nlohmann::json site_json(const ExploreSite& s, const Tokenizer& tok) {
  return nlohmann::json{{"bytes", shown(s.bytes)},
                        {"tokens", s.tokens},
                        {"next_bytes", byte_ranges(s.next_bytes)},
                        {"special_tokens_spelling_next", special_spellers(tok, s)}};
}

}  // namespace

std::string human_report(const FuzzFindings& f, const Tokenizer& tok, size_t examples) {
  const ExploreReport& e = f.explored;
  std::string out = fmt::format("fuzz {} against {} ({} tokens)\n", f.source, f.tokenizer, f.vocab_size);
  out += fmt::format("  explored: {} walks ({} of them closed within --max-steps; {} tokens; {} finished, {} cut at "
                     "--max-steps), {} configurations{}, {:.1f} s{}\n",
                     e.walks, e.closed_walks, e.walk_tokens, e.completed.size(), e.unfinished, e.configurations,
                     e.exhaustive ? " (all reachable ones)" : "", e.seconds, e.timed_out ? " (time limit reached)" : "");
  if (e.walks > 1 && e.closed_walks == 0) {
    out += e.min_tokens == SIZE_MAX
               ? "  no walk was closed: the vocabulary cannot spell the grammar's shortest output\n"
               : fmt::format("  no walk was closed: the shortest output needs {} tokens, more than --max-steps (raise it "
                             "to re-check finished walks)\n",
                             e.min_tokens);
  }
  auto sites = [&](const char* title, const char* what, const std::vector<ExploreSite>& list) {
    out += fmt::format("{}: {}\n", title, list.size());
    if (list.empty()) return;
    out += fmt::format("  {}\n", what);
    for (size_t i = 0; i < list.size() && i < examples; ++i) {
      const ExploreSite& s = list[i];
      out += fmt::format("  after {} (byte {}, {} tokens)\n    tokens: {}\n    the grammar allows next: {}\n",
                         shown(s.bytes), s.bytes.size(), s.tokens.size(), token_list(tok, s.tokens),
                         byte_ranges(s.next_bytes));
      if (const auto special = special_spellers(tok, s); !special.empty()) {
        out += fmt::format("    only special tokens spell it: {} (a model writes them as control tokens, which no "
                           "grammar allows)\n",
                           token_list(tok, special));
      }
    }
  };
  sites("dead ends", "the output is incomplete and no token of the vocabulary continues it (it cannot spell these bytes):",
        e.dead_ends);
  sites("end-of-generation traps",
        "the grammar could continue, but no token spells a continuation: only end of generation is allowed:",
        e.eog_traps);
  if (!e.no_eog.empty()) {
    sites("complete outputs without an end-of-generation token",
          "the output is complete but the vocabulary has no end-of-generation token to end it:", e.no_eog);
  }
  auto rules = [&](const char* title, const char* what, const std::vector<RuleFinding>& list) {
    out += fmt::format("{}: {}\n", title, list.size());
    for (size_t i = 0; i < list.size() && i < std::max<size_t>(examples, 10); ++i) {
      out += fmt::format("  {}:{}: rule '{}' {}\n", list[i].where.line, list[i].where.column, list[i].name, what);
    }
  };
  rules("unreachable rules", "is never used from root", f.unreachable);
  rules("unproductive rules", "can never finish (no finite sentence)", f.unproductive);
  out += fmt::format("never-allowed tokens: {} of {} text tokens ({})\n", f.never_allowed.size(), f.vocab_size,
                     f.never_allowed_exact ? "exact: no reachable state allows them" : "not observed in the walks");
  if (!f.never_allowed.empty() && examples > 0) {
    out += "  e.g. " + token_list(tok, f.never_allowed, std::max<size_t>(examples, 8)) + "\n";
  }
  out += fmt::format("non-canonical forced paths: {} (texts the tokenizer spells in a way the grammar refuses; {} of {} "
                     "finished walks were spelled unlike the tokenizer would)\n",
                     f.non_canonical.size(), f.non_canonical_walks, e.completed.size());
  for (size_t i = 0; i < f.non_canonical.size() && i < examples; ++i) {
    const NonCanonicalPath& p = f.non_canonical[i];
    out += fmt::format("  {}: {}\n    walk:      {}\n    tokenizer: {}\n", shown(p.bytes), p.why,
                       token_list(tok, p.tokens), token_list(tok, p.canonical));
  }
  std::string checks;
  for (const auto& c : f.rechecks) checks += (checks.empty() ? "" : ", ") + c;
  out += fmt::format("independent re-check ({}) of {} finished walks: {} disagreements\n", checks, e.completed.size(),
                     f.disagreements.size());
  if (!f.ajv_skipped.empty()) out += "  ajv did not run: " + f.ajv_skipped + "\n";
  for (size_t i = 0; i < f.disagreements.size() && i < examples; ++i) {
    const Disagreement& d = f.disagreements[i];
    out += fmt::format("  BUG: {} refuses {}: {}\n    tokens: {}\n", d.checker, shown(d.bytes), d.why,
                       token_list(tok, d.tokens, SIZE_MAX));
  }
  out += f.failed() ? "result: FAIL (a model can be stuck or stopped here, or a re-check disagrees)\n"
                    : (f.warned() ? "result: pass, with warnings (--strict fails on them)\n" : "result: pass\n");
  return out;
}

std::string json_report(const FuzzFindings& f, const Tokenizer& tok, size_t examples) {
  const ExploreReport& e = f.explored;
  auto sites = [&](const std::vector<ExploreSite>& list) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& s : list) a.push_back(site_json(s, tok));
    return a;
  };
  auto rules = [&](const std::vector<RuleFinding>& list) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& r : list) a.push_back({{"rule", r.name}, {"line", r.where.line}, {"column", r.where.column}});
    return a;
  };
  nlohmann::json j = {
      {"source", f.source},
      {"tokenizer", f.tokenizer},
      {"vocab_size", f.vocab_size},
      {"walks", e.walks},
      {"closed_walks", e.closed_walks},
      {"min_tokens", e.min_tokens == SIZE_MAX ? nlohmann::json(nullptr) : nlohmann::json(e.min_tokens)},
      {"walk_tokens", e.walk_tokens},
      {"finished_walks", e.completed.size()},
      {"unfinished_walks", e.unfinished},
      {"configurations", e.configurations},
      {"exhaustive", e.exhaustive},
      {"timed_out", e.timed_out},
      {"seconds", e.seconds},
      {"dead_ends", sites(e.dead_ends)},
      {"eog_traps", sites(e.eog_traps)},
      {"complete_without_eog", sites(e.no_eog)},
      {"unreachable_rules", rules(f.unreachable)},
      {"unproductive_rules", rules(f.unproductive)},
      {"never_allowed_tokens", {{"count", f.never_allowed.size()}, {"exact", f.never_allowed_exact}, {"ids", f.never_allowed}}},
      {"non_canonical", {{"walks", f.non_canonical_walks}, {"refused", nlohmann::json::array()}}},
      {"rechecks", f.rechecks},
      {"ajv_skipped", f.ajv_skipped},
      {"disagreements", nlohmann::json::array()},
      {"failed", f.failed()},
      {"warnings", f.warned()},
  };
  for (const auto& p : f.non_canonical) {
    j["non_canonical"]["refused"].push_back(nlohmann::json
        {{"bytes", shown(p.bytes)}, {"tokens", p.tokens}, {"canonical", p.canonical}, {"refused_at", p.rejected_at}, {"why", p.why}});
  }
  for (const auto& d : f.disagreements) {
    j["disagreements"].push_back(nlohmann::json{{"checker", d.checker}, {"bytes", shown(d.bytes)}, {"tokens", d.tokens}, {"why", d.why}});
  }
  (void)examples;
  return j.dump() + "\n";
}

}  // namespace lockstep::cli
