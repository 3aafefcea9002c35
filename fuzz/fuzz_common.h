// fuzz/fuzz_common.h — what every libFuzzer target shares: the list of errors lockstep
// reports for bad input (ignored by the targets), a small vocabulary, limits that keep one
// execution short, and a scratch file for the loaders that read paths.
//
// An input that makes lockstep throw anything else, crash, trip a sanitizer or run past
// libFuzzer's -timeout is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "automata/earley.h"
#include "automata/matcher.h"
#include "grammar/char_dfa.h"
#include "grammar/errors.h"
#include "grammar/grammar.h"
#include "runtime/errors.h"
#include "schemas/json_schema.h"

namespace lockstep::fuzz {

/// Runs `body`; the errors lockstep documents for malformed or too large input are
/// expected and ignored. Any other exception is reported and aborts (a finding).
/// They all derive from lockstep::Error (grammar/errors.h), with std::invalid_argument for
/// a bad argument of an API call.
template <class Body>
void expect_input_errors(Body&& body) {
  try {
    body();
  } catch (const Error&) {  // GrammarError, SchemaError, LimitError, FileFormatError, ...
  } catch (const std::invalid_argument&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: unexpected exception %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  }
}

/// Compile limits for fuzzing: small enough that one input compiles in well under a
/// second under the sanitizers; exceeding them is an expected GrammarError.
inline CompileLimits compile_limits() {
  CompileLimits limits;
  limits.max_states_per_rule = 1u << 15;
  limits.max_total_states = 1u << 17;
  limits.max_states_to_minimize = 1u << 15;
  return limits;
}

inline ParserLimits parser_limits() {
  ParserLimits limits;
  limits.max_items_per_set = 1u << 12;
  limits.max_total_items = 1u << 18;
  return limits;
}

/// A vocabulary of 300 tokens: end of generation (id 0, control), every single byte, and
/// multi-byte pieces of JSON, GBNF grammars and UTF-8 text.
inline std::shared_ptr<const Vocabulary> small_vocabulary() {
  static const std::shared_ptr<const Vocabulary> vocab = [] {
    std::vector<std::string> tokens = {"</s>"};
    for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
    for (const char* piece : {"{\"", "\":", "\",", "\"}", "\":\"", "\",\"", "true", "false", "null", "  ", "\n",
                              "\n  ", ", ", ": ", "[]", "{}", "ab", "abc", "the", " the", "12", "0.", "e+",
                              "-1", "\\u", "\\n", "\\\"", "\\ud83d", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                              "\xc3", "\xa9\xc3", "name", "\"name\"", "arguments", "\"arguments\":", "{\"name\":\"",
                              "2026-", "T12:", "00Z", "http", "://", ".com", "@", "a1", "_x"}) {
      tokens.emplace_back(piece);
    }
    std::vector<TokenKind> kinds(tokens.size(), TokenKind::kText);
    kinds[0] = TokenKind::kControl;
    return std::make_shared<const Vocabulary>(std::move(tokens), std::move(kinds), std::vector<int32_t>{0});
  }();
  return vocab;
}

/// Compiles `grammar` and takes a few steps: the first mask, then up to `steps` accepted
/// tokens (the first allowed one of each mask), each followed by its mask.
inline void compile_and_mask(Grammar&& grammar, int steps = 2) {
  const auto compiled = GrammarAutomaton::compile(std::move(grammar), compile_limits());
  const auto vocab = small_vocabulary();
  EarleyMatcher m(compiled, vocab, parser_limits());
  std::vector<uint32_t> mask(vocab->bitmask_words());
  for (int step = 0;; ++step) {
    m.fill_next_token_bitmask(mask);
    if (step == steps) break;
    int32_t pick = -1;
    for (size_t id = 0; id < vocab->size() && pick < 0; ++id) {
      if ((mask[id / 32] >> (id % 32)) & 1) pick = static_cast<int32_t>(id);
    }
    if (pick < 0) break;
    if (!m.accept_token(pick)) {
      std::fprintf(stderr, "fuzz: token %d is in the mask but accept_token rejects it\n", pick);
      std::abort();
    }
  }
}

/// One mask of a small fixed grammar over a loaded tokenizer's vocabulary.
inline void tokenizer_mask(const std::shared_ptr<const Vocabulary>& vocab) {
  static const auto grammar = GrammarAutomaton::compile(parse_gbnf(
      "root ::= \"Hello\" [ a-z]* (\"!\" | [0-9]+ | \"\\u00e9\")? \"{\\\"a\\\": [1, 2]}\""));
  EarleyMatcher m(grammar, vocab, parser_limits());
  std::vector<uint32_t> mask(vocab->bitmask_words());
  m.fill_next_token_bitmask(mask);
}

inline std::string& scratch_dir() {
  static std::string dir;
  return dir;
}
inline std::string& scratch_path() {
  static std::string path;
  return path;
}
inline void remove_scratch() {
  if (!scratch_path().empty()) std::remove(scratch_path().c_str());
  if (!scratch_dir().empty()) rmdir(scratch_dir().c_str());
}

/// A file in a private temporary folder (under $TMPDIR, removed at exit) that holds the
/// current input, for loaders that read paths. `name` is the file's name (loaders look at
/// extensions). libFuzzer's fork mode ends its jobs without exit handlers: fuzz/run.sh
/// points $TMPDIR at a folder of the build that it removes after each target.
inline const std::string& write_scratch_file(std::string_view name, const uint8_t* data, size_t size) {
  static const std::string& dir = scratch_dir() = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/lockstep-fuzz-XXXXXX";
    if (!mkdtemp(pattern.data())) {
      std::perror("fuzz: mkdtemp");
      std::abort();
    }
    std::atexit(remove_scratch);
    return pattern;
  }();
  std::string& path = scratch_path();
  path = dir + "/" + std::string(name);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f || (size && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
    std::perror("fuzz: writing the scratch file");
    std::abort();
  }
  return path;
}

}  // namespace lockstep::fuzz
