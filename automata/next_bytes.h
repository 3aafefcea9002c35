// automata/next_bytes.h — what a parser can read next: its byte set and a readable description of it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "automata/grammar_automaton.h"
#include "automata/earley.h"

namespace lockstep {

/// The bytes `parser` can consume next: the union of the byte edges of its current items
/// (scanning an item never depends on its context, so each of them advances the parser).
GrammarAutomaton::ByteSet next_bytes(const EarleyParser& parser);

/// One byte for a message: 'a', '"', '\'', '\\', ' ', '\n', '\x7f'.
std::string quote_byte(uint8_t byte);
/// Text for a message in single quotes, escaped like quote_byte: 'abc'.
std::string quote_bytes(std::string_view bytes);

/// The readable parts of a byte set, in this order: classes ("any character", "a digit",
/// "a letter", …), single bytes and ranges in byte order ('"', '0'-'7'), "whitespace" when
/// all of space, tab, newline and carriage return are in it. A long tail of single bytes is
/// cut to "N other bytes".
std::vector<std::string> describe_bytes(const GrammarAutomaton::ByteSet& bytes);

/// "A", "A or B", "A, B or C".
std::string join_alternatives(const std::vector<std::string>& parts);

}  // namespace lockstep
