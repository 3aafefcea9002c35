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
// RFC 5321 §4.1.2 Mailbox with a Dot-string local part.
const std::string kAtext = R"([A-Za-z0-9!#$%&'*+/=?^_`{|}~-])";
const std::string kEmail =
    kAtext + "+(\\." + kAtext + "+)*@(" + kHostname + "|\\[(" + kIpv4 + "|IPv6:" + kIpv6 + ")\\])";
// RFC 3986 §3 (generic syntax), as a character-level grammar.
const std::string kPct = "%[0-9A-Fa-f]{2}";
const std::string kUnreserved = R"([A-Za-z0-9._~-])";
const std::string kSubDelims = R"([!$&'()*+,;=])";
const std::string kPchar = "(" + kUnreserved + "|" + kPct + "|" + kSubDelims + "|[:@])";
const std::string kQuery = "(" + kPchar + "|[/?])*";
const std::string kUserinfo = "(" + kUnreserved + "|" + kPct + "|" + kSubDelims + "|:)*";
const std::string kRegName = "(" + kUnreserved + "|" + kPct + "|" + kSubDelims + ")*";
const std::string kIpLiteral = R"(\[()" + kIpv6 + R"(|v[0-9A-Fa-f]+\.()" + kUnreserved + "|" + kSubDelims + "|:)+)\\]";
const std::string kAuthority = "(" + kUserinfo + "@)?(" + kIpLiteral + "|" + kIpv4 + "|" + kRegName + ")(:\\d*)?";
const std::string kPathAbempty = "(/" + kPchar + "*)*";
const std::string kSegmentNz = kPchar + "+";
const std::string kHierPart = "(//" + kAuthority + kPathAbempty + "|/(" + kSegmentNz + "(/" + kPchar + "*)*)?|" +
                              kSegmentNz + "(/" + kPchar + "*)*|)";
const std::string kScheme = "[A-Za-z][A-Za-z0-9+.-]*";
const std::string kUri = kScheme + ":" + kHierPart + "(\\?" + kQuery + ")?(#" + kQuery + ")?";
const std::string kSegmentNzNc = "(" + kUnreserved + "|" + kPct + "|" + kSubDelims + "|@)+";
const std::string kRelativePart = "(//" + kAuthority + kPathAbempty + "|/(" + kSegmentNz + "(/" + kPchar + "*)*)?|" +
                                  kSegmentNzNc + "(/" + kPchar + "*)*|)";
const std::string kRelativeRef = kRelativePart + "(\\?" + kQuery + ")?(#" + kQuery + ")?";
const std::string kUuid = "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}";

const std::map<std::string, std::string, std::less<>>& patterns() {
  static const std::map<std::string, std::string, std::less<>> p = {
      {"date", kDate},
      {"time", kTime},
      {"date-time", kDate + "[Tt]" + kTime},
      {"duration", kDuration},
      {"email", kEmail},
      {"hostname", kHostname},
      {"ipv4", kIpv4},
      {"ipv6", kIpv6},
      {"uri", kUri},
      {"uri-reference", "(" + kUri + "|" + kRelativeRef + ")"},
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

}  // namespace lockstep
