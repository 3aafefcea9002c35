// schemas/formats.cpp — see formats.h. Each format is a regex in the ECMA-262 dialect,
// compiled once.
#include "schemas/formats.h"

#include <map>
#include <mutex>
#include <string>

namespace lockstep {

namespace {

// RFC 3339 §5.6, with the month-dependent day limits and leap years (Gregorian).
const std::string kDate =
    R"((\d{4}-(0[13578]|1[02])-(0[1-9]|[12]\d|3[01])|\d{4}-(0[469]|11)-(0[1-9]|[12]\d|30)|)"
    R"(\d{4}-02-(0[1-9]|1\d|2[0-8])|(\d\d(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)-02-29))";
// RFC 3339 §5.6 partial-time and offset. A leap second (:60) is accepted at any minute:
// the exact rule (§5.7: only where it falls at 23:59:60 UTC) ties the local hour and minute
// to the offset and would take one automaton branch per local minute of the day (~15,000
// states for every date-time string), so it is left to the validator.
const std::string kTime =
    R"(([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d))";
// RFC 3339 appendix A (ISO 8601 durations).
const std::string kDuration =
    R"(P((\d+Y(\d+M(\d+D)?)?|\d+M(\d+D)?|\d+D)(T(\d+H(\d+M(\d+S)?)?|\d+M(\d+S)?|\d+S))?|)"
    R"(T(\d+H(\d+M(\d+S)?)?|\d+M(\d+S)?|\d+S)|\d+W))";
const std::string kLabel = R"([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)";
const std::string kHostname = kLabel + R"((\.)" + kLabel + ")*";
const std::string kOctet = R"((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))";
const std::string kIpv4 = kOctet + R"((\.)" + kOctet + "){3}";
const std::string kH16 = "[0-9A-Fa-f]{1,4}";
const std::string kLs32 = "(" + kH16 + ":" + kH16 + "|" + kIpv4 + ")";
// RFC 3986 §3.2.2 IPv6address.
const std::string kIpv6 =
    "((" + kH16 + ":){6}" + kLs32 + "|::(" + kH16 + ":){5}" + kLs32 + "|(" + kH16 + ")?::(" + kH16 + ":){4}" +
    kLs32 + "|((" + kH16 + ":){0,1}" + kH16 + ")?::(" + kH16 + ":){3}" + kLs32 + "|((" + kH16 + ":){0,2}" +
    kH16 + ")?::(" + kH16 + ":){2}" + kLs32 + "|((" + kH16 + ":){0,3}" + kH16 + ")?::" + kH16 + ":" + kLs32 +
    "|((" + kH16 + ":){0,4}" + kH16 + ")?::" + kLs32 + "|((" + kH16 + ":){0,5}" + kH16 + ")?::" + kH16 +
    "|((" + kH16 + ":){0,6}" + kH16 + ")?::)";
// RFC 5321 §4.1.2 Mailbox: a Dot-string or Quoted-string local part (qtextSMTP or a
// backslash-quoted printable character), then a hostname or an address literal.
const std::string kAtext = R"([A-Za-z0-9!#$%&'*+/=?^_`{|}~-])";
const std::string kQuotedLocal = R"("([ !#-\[\]-~]|\\[ -~])*")";
const std::string kEmail = "(" + kAtext + "+(\\." + kAtext + "+)*|" + kQuotedLocal + ")@(" + kHostname +
                           "|\\[(" + kIpv4 + "|IPv6:" + kIpv6 + ")\\])";

// RFC 3987 §2.2 ucschar and iprivate: the characters IRIs (and URI Templates) add to URIs.
const std::string kUcschar =
    R"([\u00A0-\uD7FF\uF900-\uFDCF\uFDF0-\uFFEF\u{10000}-\u{1FFFD}\u{20000}-\u{2FFFD}\u{30000}-\u{3FFFD})"
    R"(\u{40000}-\u{4FFFD}\u{50000}-\u{5FFFD}\u{60000}-\u{6FFFD}\u{70000}-\u{7FFFD}\u{80000}-\u{8FFFD})"
    R"(\u{90000}-\u{9FFFD}\u{A0000}-\u{AFFFD}\u{B0000}-\u{BFFFD}\u{C0000}-\u{CFFFD}\u{D0000}-\u{DFFFD})"
    R"(\u{E1000}-\u{EFFFD}])";
const std::string kIprivate = R"([\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}])";

// RFC 3986 §3 (generic syntax) and, with `iri`, RFC 3987 §2.2 (IRIs: ucschar in
// unreserved, iprivate in queries), as character-level grammars.
struct UriLanguages {
  std::string absolute, reference;
};
UriLanguages uri_languages(bool iri) {
  const std::string pct = "%[0-9A-Fa-f]{2}";
  const std::string ucschar = kUcschar, iprivate = kIprivate;
  const std::string unreserved = iri ? "([A-Za-z0-9._~-]|" + ucschar + ")" : "[A-Za-z0-9._~-]";
  const std::string sub_delims = R"([!$&'()*+,;=])";
  const std::string pchar = "(" + unreserved + "|" + pct + "|" + sub_delims + "|[:@])";
  const std::string query = "(" + pchar + "|[/?]" + (iri ? "|" + iprivate : std::string()) + ")*";
  const std::string fragment = "(" + pchar + "|[/?])*";
  const std::string userinfo = "(" + unreserved + "|" + pct + "|" + sub_delims + "|:)*";
  const std::string reg_name = "(" + unreserved + "|" + pct + "|" + sub_delims + ")*";
  const std::string ip_literal =
      R"(\[()" + kIpv6 + R"(|[vV][0-9A-Fa-f]+\.([A-Za-z0-9._~-]|)" + sub_delims + "|:)+)\\]";
  const std::string authority = "(" + userinfo + "@)?(" + ip_literal + "|" + kIpv4 + "|" + reg_name + ")(:\\d*)?";
  const std::string path_abempty = "(/" + pchar + "*)*";
  const std::string segment_nz = pchar + "+";
  const std::string hier_part = "(//" + authority + path_abempty + "|/(" + segment_nz + "(/" + pchar + "*)*)?|" +
                                segment_nz + "(/" + pchar + "*)*|)";
  const std::string scheme = "[A-Za-z][A-Za-z0-9+.-]*";
  const std::string absolute = scheme + ":" + hier_part + "(\\?" + query + ")?(#" + fragment + ")?";
  // `uri` leaves out RFC 3986's empty hier-part ("scheme:" alone), which ajv-formats (the
  // validator most users run) rejects: a generated URI then validates everywhere.
  const std::string nonempty_hier_part = "(//" + authority + path_abempty + "|/(" + segment_nz + "(/" + pchar +
                                         "*)*)?|" + segment_nz + "(/" + pchar + "*)*)";
  const std::string uri = scheme + ":" + nonempty_hier_part + "(\\?" + query + ")?(#" + fragment + ")?";
  const std::string segment_nz_nc = "(" + unreserved + "|" + pct + "|" + sub_delims + "|@)+";
  const std::string relative_part = "(//" + authority + path_abempty + "|/(" + segment_nz + "(/" + pchar +
                                    "*)*)?|" + segment_nz_nc + "(/" + pchar + "*)*|)";
  const std::string relative_ref = relative_part + "(\\?" + query + ")?(#" + fragment + ")?";
  return {uri, "(" + absolute + "|" + relative_ref + ")"};
}

// RFC 6901 JSON Pointer and draft-handrews-relative-json-pointer-01.
const std::string kJsonPointer = "(/([^/~]|~[01])*)*";
const std::string kRelativeJsonPointer = "(0|[1-9][0-9]*)(#|" + kJsonPointer + ")";

// ECMA-262 §22.2.1 Pattern syntax (the `regex` format), with groups nested at most
// kRegexDepth deep (a regular language needs a bound; deeper nesting is rejected). Not
// checked: the order of class ranges and that backreferences name existing groups.
std::string regex_language() {
  constexpr int kRegexDepth = 4;
  const std::string escape =
      R"(\\([dDwWsSbBfnrtv0]|c[A-Za-z]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|u\{[0-9A-Fa-f]+\}|[pP]\{[A-Za-z_=]+\}|)"
      R"([1-9][0-9]*|k<[A-Za-z_$][A-Za-z0-9_$]*>|[\^$\\.*+?()\[\]{}|/-]))";
  const std::string literal = R"([^\\^$.*+?()\[{|])";  // Annex B: a lone ] or } is literal
  const std::string cls = R"(\[\^?([^\\\]]|)" + escape + R"()*\])";
  const std::string quantifier = R"(([*+?]|\{[0-9]+(,[0-9]*)?\})\??)";
  const std::string group_open = R"(\((\?:|\?=|\?!|\?<=|\?<!|\?<[A-Za-z_$][A-Za-z0-9_$]*>)?)";
  std::string alternation;  // the pattern at nesting depth k, from k = 0 (no groups) up
  for (int k = 0; k <= kRegexDepth; ++k) {
    std::string atom = "(" + literal + "|" + escape + "|" + cls + "|\\." +
                       (k ? "|" + group_open + "(" + alternation + R"()\))" : std::string()) + ")";
    const std::string term = "([\\^$]|" + atom + "(" + quantifier + ")?)";
    alternation = term + "*(\\|" + term + "*)*";
  }
  return alternation;
}

// RFC 6570 §2 URI-Template, with verified erratum 6937 (literals take %x26-3B, so the
// apostrophe, a sub-delim of RFC 3986, is a literal: §3.2.1's own "'{var}'" example needs
// it). An expression is "{", an optional operator, then varspecs separated by ",", each a
// varname (varchars, single dots between them) with at most one modifier: a prefix ":"
// max-length (1 to 9999, no leading zero) or the explode "*".
std::string uri_template_language() {
  const std::string pct = "%[0-9A-Fa-f]{2}";
  const std::string literal = R"(([!#$&-;=?-\[\]_a-z~]|)" + kUcschar + "|" + kIprivate + "|" + pct + ")";
  const std::string varchar = "([A-Za-z0-9_]|" + pct + ")";
  const std::string varspec = varchar + "(\\.?" + varchar + ")*(:[1-9][0-9]{0,3}|\\*)?";
  const std::string expression = R"(\{[+#./;?&=,!@|]?)" + varspec + "(," + varspec + ")*\\}";
  return "(" + literal + "|" + expression + ")*";
}

const std::string kUuid = "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}";

const std::map<std::string, std::string, std::less<>>& patterns() {
  static const UriLanguages uri = uri_languages(false), iri = uri_languages(true);
  static const std::map<std::string, std::string, std::less<>> p = {
      {"date", kDate},
      {"time", kTime},
      {"date-time", kDate + "[Tt]" + kTime},
      {"duration", kDuration},
      {"email", kEmail},
      {"hostname", kHostname},
      {"ipv4", kIpv4},
      {"ipv6", kIpv6},
      {"uri", uri.absolute},
      {"uri-reference", uri.reference},
      {"iri", iri.absolute},
      {"iri-reference", iri.reference},
      {"json-pointer", kJsonPointer},
      {"relative-json-pointer", kRelativeJsonPointer},
      {"regex", regex_language()},
      {"uri-template", uri_template_language()},
      {"uuid", kUuid},
  };
  return p;
}

}  // namespace

std::shared_ptr<const CharDfa> format_language(std::string_view format) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const CharDfa>, std::less<>> cache;
  const auto& p = patterns();
  auto it = p.find(format);
  if (it == p.end()) return nullptr;
  std::lock_guard lock(mutex);
  auto& slot = cache[std::string(format)];
  if (!slot) slot = std::make_shared<CharDfa>(CharDfa::from_expr(regex_to_expr(it->second)));
  return slot;
}

void prepare_format_languages() {
  for (const auto& [format, pattern] : patterns()) format_language(format);
}

}  // namespace lockstep
