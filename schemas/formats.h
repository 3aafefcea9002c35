// schemas/formats.h — JSON Schema `format` values lockstep enforces, as regular languages.
#pragma once

#include <memory>
#include <string_view>

#include "grammar/char_dfa.h"

namespace lockstep {

/// The strings of a format (JSON Schema 2020-12 §7.3): date, time, date-time, duration
/// (RFC 3339 and its appendix A), email (RFC 5321 dot-atom mailbox with a hostname or
/// address literal), hostname (RFC 1123 labels), ipv4, ipv6 (RFC 4291 text forms), uri,
/// uri-reference (RFC 3986), iri, iri-reference (RFC 3987), uri-template (RFC 6570),
/// json-pointer, relative-json-pointer, regex, uuid (RFC 4122). Null for a format lockstep
/// does not know.
std::shared_ptr<const CharDfa> format_language(std::string_view format);

/// Builds the language of every format above into format_language()'s process-wide cache,
/// once per process: about 25 ms on one core and well under 1 MB (regex 11 ms, email 2.5 ms,
/// uri 1.6 ms, the rest less), paid at vocabulary load (prepare_json_building_blocks) instead
/// of by the first schema of a process that names the format. Thread-safe.
void prepare_format_languages();

}  // namespace lockstep
