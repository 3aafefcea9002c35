// grammar/limits.cpp — see limits.h.
#include "grammar/limits.h"

#include <cctype>

#include <fmt/format.h>

namespace lockstep {

namespace {
EngineLimits& current() {
  static EngineLimits limits;
  return limits;
}
}  // namespace

const EngineLimits& engine_limits() { return current(); }
void set_engine_limits(const EngineLimits& limits) { current() = limits; }

const std::vector<EngineLimitInfo>& engine_limit_table() {
  static const std::vector<EngineLimitInfo> table = {
      {"source_bytes", "bytes", "one input file or text (grammar, regex, schema, tools, tokenizer)",
       &EngineLimits::source_bytes},
      {"nesting_depth", "levels", "GBNF parentheses, regex groups, JSON Schema sub-schema nesting",
       &EngineLimits::nesting_depth},
      {"repetition_bound", "repeats", "m and n of {m,n} in GBNF, regex and `pattern`", &EngineLimits::repetition_bound},
      {"vocab_size", "tokens", "token ids of a vocabulary", &EngineLimits::vocab_size},
      {"string_automaton_states", "states", "states of one JSON Schema string or number constraint's automaton",
       &EngineLimits::string_automaton_states},
      {"rule_automaton_states", "states", "byte-automaton states one grammar rule may expand into",
       &EngineLimits::rule_automaton_states},
      {"grammar_automaton_states", "states", "byte-automaton states of a whole grammar",
       &EngineLimits::grammar_automaton_states},
      {"automaton_state_set", "states", "NFA states summed over the sets of one determinization",
       &EngineLimits::automaton_state_set},
      {"object_states", "states", "states of one JSON object's member machine", &EngineLimits::object_states},
      {"schema_alternatives", "records", "alternatives (array or object records) of one JSON Schema's normal form",
       &EngineLimits::schema_alternatives},
      {"compile_ms", "ms", "wall time of one grammar or schema compilation (0: none)", &EngineLimits::compile_ms},
      {"earley_items_per_set", "items", "Earley items one input position may hold",
       &EngineLimits::earley_items_per_set},
      {"earley_items_total", "items", "Earley items of one parse, all positions together (8 bytes each)",
       &EngineLimits::earley_items_total},
      {"mask_cache_bytes", "bytes", "token masks shared between grammars (soft)", &EngineLimits::mask_cache_bytes},
      {"grammar_mask_bytes", "bytes", "token masks of one compiled grammar (soft)", &EngineLimits::grammar_mask_bytes},
      {"rule_automaton_cache_bytes", "bytes", "rule automata shared between grammars (soft)",
       &EngineLimits::rule_automaton_cache_bytes},
  };
  return table;
}

void set_engine_limit(EngineLimits& limits, std::string_view assignment) {
  const size_t eq = assignment.find('=');
  std::string names;
  for (const auto& info : engine_limit_table()) names += (names.empty() ? "" : ", ") + std::string(info.name);
  if (eq == std::string_view::npos) {
    throw Error(fmt::format("--limit {}: expected name=value (limits: {})", assignment, names));
  }
  const std::string_view name = assignment.substr(0, eq);
  const std::string_view text = assignment.substr(eq + 1);
  const EngineLimitInfo* info = nullptr;
  for (const auto& i : engine_limit_table()) {
    if (i.name == name) info = &i;
  }
  if (info == nullptr) throw Error(fmt::format("--limit {}: unknown limit '{}' (limits: {})", assignment, name, names));
  constexpr uint64_t kMax = 1ull << 62;
  uint64_t value = 0;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    value = value * 10 + static_cast<uint64_t>(text[i] - '0');
    if (value > kMax) break;
  }
  int shift = 0;
  if (i + 1 == text.size()) {
    switch (text[i]) {
      case 'k': case 'K': shift = 10; ++i; break;
      case 'M': shift = 20; ++i; break;
      case 'G': shift = 30; ++i; break;
      default: break;
    }
  }
  const bool zero_ok = name == "compile_ms";
  if (i == 0 || i != text.size() || value > (kMax >> shift) || (value == 0 && !zero_ok)) {
    throw Error(fmt::format("--limit {}: {} takes an integer from {} to 2^62 (k, M, G: times 1024, 1024², 1024³)",
                            assignment, name, zero_ok ? 0 : 1));
  }
  limits.*(info->field) = value << shift;
}

CompileDeadline::CompileDeadline() : limit_ms_(engine_limits().compile_ms), start_(std::chrono::steady_clock::now()) {}

void CompileDeadline::check_now(const ErrorLocation& where) {
  if (limit_ms_ == 0) return;
  const auto elapsed = std::chrono::steady_clock::now() - start_;
  if (elapsed > std::chrono::milliseconds(limit_ms_)) {
    throw LimitError(where, "compile_ms", limit_ms_,
                     fmt::format("compiling ({} ms so far)",
                                 std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()));
  }
}

}  // namespace lockstep
