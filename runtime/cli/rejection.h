// runtime/cli/rejection.h — why `check` rejects a text: where it stops matching and what could come there.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "automata/earley.h"

namespace lockstep::cli {

/// The one-line message for a text the grammar rejects. `parser` has consumed text[0, stop)
/// and either cannot read text[stop] or, with stop == text.size(), is not accepting.
/// Names the byte offset (and line and column when the text has several lines), or that
/// the text ends early, and the bytes the grammar allows there. With `json` (a schema or
/// tools grammar) also the JSON pointer of the value being read; whitespace between tokens
/// and escapes inside strings are left unsaid (unless nothing else is allowed), and member
/// names and enum values are listed as JSON literals when they are few. The parser is left
/// as it was.
std::string rejection_message(EarleyParser& parser, std::string_view text, size_t stop, bool json);

}  // namespace lockstep::cli
