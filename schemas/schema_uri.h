// schemas/schema_uri.h — URI handling of the schema compiler's $id / $ref resolution
// (internal): RFC 3986 reference resolution, enough for schema identifiers.
#pragma once

#include <string>

namespace lockstep::schema {

/// The URI without its "#fragment".
std::string strip_fragment(const std::string& uri);
/// `ref` resolved against `base` (RFC 3986 §5.2), dot segments removed.
std::string resolve_uri(const std::string& base, const std::string& ref);
/// The draft a $schema URI names: 4, 6, 7, 2019 or 2020; 0 for a meta-schema other than
/// json-schema.org's own, -1 for json-schema.org's unversioned "schema#".
int draft_from_uri(const std::string& uri);
/// %XX escapes decoded.
std::string url_decode(const std::string& s);

}  // namespace lockstep::schema
