// grammar/unicode.cpp — see unicode.h.
#include "grammar/unicode.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <utf8proc.h>

#include "grammar/utf8.h"

namespace lockstep::unicode {

std::string nfc(std::string_view text) {
  if (!utf8::is_valid(text)) return std::string(text);
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &out,
                                          static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (n < 0) return std::string(text);
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> holder(out, &std::free);
  return std::string(reinterpret_cast<const char*>(out), static_cast<size_t>(n));
}

bool is_whitespace(uint32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

const std::string& whitespace_class_body() {
  static const std::string body =
      "\\t\\n\\x0B\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
      "\\x{205F}\\x{3000}";
  return body;
}

}  // namespace lockstep::unicode

namespace lockstep::unicode {

namespace {

struct CategoryTables {
  // ranges per utf8proc category value (index = utf8proc_category_t)
  std::vector<std::vector<CodepointRange>> by_category;
  CategoryTables() : by_category(32) {
    for (uint32_t cp = 0; cp <= kMaxCodepoint; ++cp) {
      const int c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
      auto& v = by_category[static_cast<size_t>(c)];
      if (!v.empty() && v.back().hi + 1 == cp) {
        v.back().hi = cp;
      } else {
        v.push_back({cp, cp});
      }
    }
  }
};

const CategoryTables& tables() {
  static const CategoryTables t;
  return t;
}

struct CaseTables {
  std::vector<std::pair<uint32_t, uint32_t>> orbit_of;  // (cp, orbit index), sorted by cp
  std::vector<std::vector<uint32_t>> orbits;
  CaseTables() {
    // Simple case folding: the fold of cp when it is a single code point.
    std::vector<std::pair<uint32_t, uint32_t>> folds;  // (fold, cp)
    for (uint32_t cp = 0; cp <= kMaxCodepoint; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      utf8proc_int32_t out[4];
      int boundclass = 0;
      const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cp), out, 4,
                                             UTF8PROC_CASEFOLD, &boundclass);
      const uint32_t fold = n == 1 ? static_cast<uint32_t>(out[0]) : cp;
      folds.emplace_back(fold, cp);
    }
    std::sort(folds.begin(), folds.end());
    for (size_t i = 0; i < folds.size();) {
      size_t j = i;
      while (j < folds.size() && folds[j].first == folds[i].first) ++j;
      // The orbit: every code point folding to f, plus f itself.
      std::vector<uint32_t> orbit;
      for (size_t k = i; k < j; ++k) orbit.push_back(folds[k].second);
      orbit.push_back(folds[i].first);
      std::sort(orbit.begin(), orbit.end());
      orbit.erase(std::unique(orbit.begin(), orbit.end()), orbit.end());
      if (orbit.size() > 1) {
        for (uint32_t cp : orbit) orbit_of.emplace_back(cp, static_cast<uint32_t>(orbits.size()));
        orbits.push_back(std::move(orbit));
      }
      i = j;
    }
    std::sort(orbit_of.begin(), orbit_of.end());
    orbit_of.erase(std::unique(orbit_of.begin(), orbit_of.end(),
                               [](const auto& a, const auto& b) { return a.first == b.first; }),
                   orbit_of.end());
  }
};

const CaseTables& case_tables() {
  static const CaseTables t;
  return t;
}

}  // namespace

std::vector<CodepointRange> general_category(std::string_view name) {
  // Long names (UnicodeData / ECMA-262 \p{Letter}) map to the short ones.
  static const std::pair<std::string_view, std::string_view> aliases[] = {
      {"Letter", "L"}, {"Cased_Letter", "LC"}, {"Uppercase_Letter", "Lu"}, {"Lowercase_Letter", "Ll"},
      {"Titlecase_Letter", "Lt"}, {"Modifier_Letter", "Lm"}, {"Other_Letter", "Lo"}, {"Mark", "M"},
      {"Combining_Mark", "M"}, {"Nonspacing_Mark", "Mn"}, {"Spacing_Mark", "Mc"}, {"Enclosing_Mark", "Me"},
      {"Number", "N"}, {"Decimal_Number", "Nd"}, {"digit", "Nd"}, {"Letter_Number", "Nl"}, {"Other_Number", "No"},
      {"Punctuation", "P"}, {"punct", "P"}, {"Connector_Punctuation", "Pc"}, {"Dash_Punctuation", "Pd"},
      {"Open_Punctuation", "Ps"}, {"Close_Punctuation", "Pe"}, {"Initial_Punctuation", "Pi"},
      {"Final_Punctuation", "Pf"}, {"Other_Punctuation", "Po"}, {"Symbol", "S"}, {"Math_Symbol", "Sm"},
      {"Currency_Symbol", "Sc"}, {"Modifier_Symbol", "Sk"}, {"Other_Symbol", "So"}, {"Separator", "Z"},
      {"Space_Separator", "Zs"}, {"Line_Separator", "Zl"}, {"Paragraph_Separator", "Zp"}, {"Other", "C"},
      {"Control", "Cc"}, {"cntrl", "Cc"}, {"Format", "Cf"}, {"Private_Use", "Co"}, {"Surrogate", "Cs"},
      {"Unassigned", "Cn"}};
  for (const auto& [alias, short_name] : aliases) {
    if (alias == name) return general_category(short_name);
  }
  using C = utf8proc_category_t;
  static const std::vector<std::pair<std::string_view, std::vector<C>>> names = {
      {"Lu", {UTF8PROC_CATEGORY_LU}}, {"Ll", {UTF8PROC_CATEGORY_LL}}, {"Lt", {UTF8PROC_CATEGORY_LT}},
      {"Lm", {UTF8PROC_CATEGORY_LM}}, {"Lo", {UTF8PROC_CATEGORY_LO}},
      {"L", {UTF8PROC_CATEGORY_LU, UTF8PROC_CATEGORY_LL, UTF8PROC_CATEGORY_LT, UTF8PROC_CATEGORY_LM, UTF8PROC_CATEGORY_LO}},
      {"L&", {UTF8PROC_CATEGORY_LU, UTF8PROC_CATEGORY_LL, UTF8PROC_CATEGORY_LT}},
      {"LC", {UTF8PROC_CATEGORY_LU, UTF8PROC_CATEGORY_LL, UTF8PROC_CATEGORY_LT}},
      {"Mn", {UTF8PROC_CATEGORY_MN}}, {"Mc", {UTF8PROC_CATEGORY_MC}}, {"Me", {UTF8PROC_CATEGORY_ME}},
      {"M", {UTF8PROC_CATEGORY_MN, UTF8PROC_CATEGORY_MC, UTF8PROC_CATEGORY_ME}},
      {"Nd", {UTF8PROC_CATEGORY_ND}}, {"Nl", {UTF8PROC_CATEGORY_NL}}, {"No", {UTF8PROC_CATEGORY_NO}},
      {"N", {UTF8PROC_CATEGORY_ND, UTF8PROC_CATEGORY_NL, UTF8PROC_CATEGORY_NO}},
      {"Pc", {UTF8PROC_CATEGORY_PC}}, {"Pd", {UTF8PROC_CATEGORY_PD}}, {"Ps", {UTF8PROC_CATEGORY_PS}},
      {"Pe", {UTF8PROC_CATEGORY_PE}}, {"Pi", {UTF8PROC_CATEGORY_PI}}, {"Pf", {UTF8PROC_CATEGORY_PF}},
      {"Po", {UTF8PROC_CATEGORY_PO}},
      {"P", {UTF8PROC_CATEGORY_PC, UTF8PROC_CATEGORY_PD, UTF8PROC_CATEGORY_PS, UTF8PROC_CATEGORY_PE,
             UTF8PROC_CATEGORY_PI, UTF8PROC_CATEGORY_PF, UTF8PROC_CATEGORY_PO}},
      {"Sm", {UTF8PROC_CATEGORY_SM}}, {"Sc", {UTF8PROC_CATEGORY_SC}}, {"Sk", {UTF8PROC_CATEGORY_SK}},
      {"So", {UTF8PROC_CATEGORY_SO}},
      {"S", {UTF8PROC_CATEGORY_SM, UTF8PROC_CATEGORY_SC, UTF8PROC_CATEGORY_SK, UTF8PROC_CATEGORY_SO}},
      {"Zs", {UTF8PROC_CATEGORY_ZS}}, {"Zl", {UTF8PROC_CATEGORY_ZL}}, {"Zp", {UTF8PROC_CATEGORY_ZP}},
      {"Z", {UTF8PROC_CATEGORY_ZS, UTF8PROC_CATEGORY_ZL, UTF8PROC_CATEGORY_ZP}},
      {"Cc", {UTF8PROC_CATEGORY_CC}}, {"Cf", {UTF8PROC_CATEGORY_CF}}, {"Co", {UTF8PROC_CATEGORY_CO}},
      {"Cs", {UTF8PROC_CATEGORY_CS}}, {"Cn", {UTF8PROC_CATEGORY_CN}},
      {"C", {UTF8PROC_CATEGORY_CC, UTF8PROC_CATEGORY_CF, UTF8PROC_CATEGORY_CO, UTF8PROC_CATEGORY_CS,
             UTF8PROC_CATEGORY_CN}},
  };
  for (const auto& [n, cats] : names) {
    if (n != name) continue;
    std::vector<CodepointRange> out;
    for (C c : cats) {
      const auto& v = tables().by_category[static_cast<size_t>(c)];
      out.insert(out.end(), v.begin(), v.end());
    }
    return Expr::char_class(std::move(out)).ranges;
  }
  return {};
}

std::span<const uint32_t> case_variants(uint32_t cp) {
  const auto& t = case_tables();
  auto it = std::lower_bound(t.orbit_of.begin(), t.orbit_of.end(), std::make_pair(cp, 0u));
  if (it == t.orbit_of.end() || it->first != cp) return {};
  return t.orbits[it->second];
}

}  // namespace lockstep::unicode
