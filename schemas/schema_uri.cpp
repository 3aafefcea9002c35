// schemas/schema_uri.cpp — see schema_uri.h.
#include "schemas/schema_uri.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace lockstep::schema {

namespace {

bool has_scheme(const std::string& s) {
  const size_t colon = s.find(':');
  if (colon == std::string::npos || colon == 0) return false;
  for (size_t i = 0; i < colon; ++i) {
    const char c = s[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.')) return false;
  }
  return true;
}

// RFC 3986 §5.2.4: removes "." and ".." segments from a path.
std::string remove_dot_segments(const std::string& uri) {
  const size_t scheme_end = uri.find("://");
  const size_t path_start = scheme_end == std::string::npos ? uri.find(':') + 1 : uri.find('/', scheme_end + 3);
  if (path_start == std::string::npos || path_start >= uri.size()) return uri;
  const size_t path_end = std::min(uri.find('?', path_start), uri.find('#', path_start));
  const std::string path = uri.substr(path_start, path_end == std::string::npos ? std::string::npos : path_end - path_start);
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= path.size()) {
    const size_t j = std::min(path.find('/', i), path.size());
    const std::string seg = path.substr(i, j - i);
    if (seg == "..") {
      if (out.size() > 1) out.pop_back();
    } else if (seg != ".") {
      out.push_back(seg);
    } else if (j == path.size()) {
      out.push_back("");
    }
    i = j + 1;
  }
  std::string joined;
  for (size_t k = 0; k < out.size(); ++k) joined += (k ? "/" : "") + out[k];
  return uri.substr(0, path_start) + joined + (path_end == std::string::npos ? "" : uri.substr(path_end));
}

// RFC 3986 §5.2 reference resolution, enough for schema identifiers.
std::string resolve_uri_raw(const std::string& base, const std::string& ref) {
  if (ref.empty()) return base;
  if (has_scheme(ref)) return ref;
  const std::string b = strip_fragment(base);
  if (ref[0] == '#') return b + ref;
  const size_t scheme_end = b.find("://");
  if (ref[0] == '/') {
    if (scheme_end == std::string::npos) return b.substr(0, b.find(':') + 1) + ref;
    const size_t path_start = b.find('/', scheme_end + 3);
    return (path_start == std::string::npos ? b : b.substr(0, path_start)) + ref;
  }
  const size_t slash = b.rfind('/');
  if (slash == std::string::npos || (scheme_end != std::string::npos && slash < scheme_end + 3)) {
    return (scheme_end != std::string::npos ? b + "/" : b.substr(0, b.find(':') + 1)) + ref;
  }
  return b.substr(0, slash + 1) + ref;
}

}  // namespace

std::string strip_fragment(const std::string& uri) { return uri.substr(0, uri.find('#')); }

std::string resolve_uri(const std::string& base, const std::string& ref) {
  return remove_dot_segments(resolve_uri_raw(base, ref));
}

// The draft a $schema URI names: 0 for a meta-schema other than json-schema.org's own
// (a custom meta-schema may drop vocabularies: lockstep cannot know what it validates), -1 for
// json-schema.org's unversioned "schema#" (the default draft).
int draft_from_uri(const std::string& uri) {
  static const std::string hosts[] = {"http://json-schema.org/", "https://json-schema.org/"};
  if (uri.rfind(hosts[0], 0) != 0 && uri.rfind(hosts[1], 0) != 0) return 0;
  if (uri.find("draft-04") != std::string::npos) return 4;
  if (uri.find("draft-06") != std::string::npos) return 6;
  if (uri.find("draft-07") != std::string::npos) return 7;
  if (uri.find("2019-09") != std::string::npos) return 2019;
  if (uri.find("2020-12") != std::string::npos) return 2020;
  if (uri.find("draft-03") != std::string::npos) return 0;
  return -1;
}

std::string url_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace lockstep::schema
