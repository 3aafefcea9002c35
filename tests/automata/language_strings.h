// tests/automata/language_strings.h — comparing two grammars' languages string by string: whether
// a compiled grammar accepts a text whole, and every string over an alphabet up to a length.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "automata/matcher.h"

namespace lockstep::test_languages {

// Whether `g` accepts `text` whole (the Earley parser over the compiled grammar).
inline bool accepts(const GrammarAutomaton& g, std::string_view text) {
  EarleyParser p(g);
  return p.advance(text) && p.accepting();
}

// Every string over `alphabet` of at most `max_len` bytes, shorter ones first.
inline std::vector<std::string> all_strings(const std::string& alphabet, size_t max_len) {
  std::vector<std::string> out{""};
  for (size_t begin = 0, len = 0; len < max_len; ++len) {
    const size_t end = out.size();
    for (size_t i = begin; i < end; ++i) {
      for (const char c : alphabet) out.push_back(out[i] + c);
    }
    begin = end;
  }
  return out;
}

}  // namespace lockstep::test_languages
