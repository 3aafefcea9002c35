// Number languages against an exact oracle: Python's fractions.Fraction decides every
// (text, constraint) pair; the automata must agree on every text of the exact region and
// be sound (accept only true members) everywhere, and so must their complements.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "schemas/number_language.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

// Reads "TEXTS n", n texts, "CONSTRAINTS m", m lines "kind value..." ; writes one line of
// 0/1 per constraint (one character per text). Kinds: ge gt le lt (a bound), mul (multiple
// of), nmul (no multiple of), int, in (one of the values), and (a conjunction: "and <k>
// <constraint>;...").
constexpr const char* kOracle = R"(
import sys
from fractions import Fraction as F

def holds(kind, args, v):
    if kind == 'ge': return v >= F(args[0])
    if kind == 'gt': return v > F(args[0])
    if kind == 'le': return v <= F(args[0])
    if kind == 'lt': return v < F(args[0])
    if kind == 'mul': return (v / F(args[0])).denominator == 1
    if kind == 'nmul': return (v / F(args[0])).denominator != 1
    if kind == 'int': return v.denominator == 1
    if kind == 'in': return any(v == F(a) for a in args)
    raise ValueError(kind)

lines = open(sys.argv[1]).read().split('\n')
n = int(lines[0].split()[1])
values = [F(t) for t in lines[1:1 + n]]
m = int(lines[1 + n].split()[1])
out = []
for line in lines[2 + n:2 + n + m]:
    parts = [p.split() for p in line.split(';')]
    out.append(''.join('1' if all(holds(p[0], p[1:], v) for p in parts) else '0' for v in values))
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
)";

struct Constraint {
  std::string oracle;  // "ge 1.5;mul 0.5"
  NumberConstraints c;
  std::vector<Decimal> among;  // "in": the values
  bool is_in = false;
};

std::string digits(std::mt19937& rng, int n, bool first_nonzero) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>(i == 0 && first_nonzero ? '1' + rng() % 9 : '0' + rng() % 10);
  return s;
}

// A random number text: plain or with an exponent, mantissas of varied lengths with leading
// and trailing zeros, exponents with signs, leading zeros, small and large values.
std::string random_text(std::mt19937& rng) {
  std::string t = rng() % 3 == 0 ? "-" : "";
  const int shape = static_cast<int>(rng() % 10);
  if (shape < 3) {
    t += "0";
  } else {
    const int len = shape < 8 ? 1 + static_cast<int>(rng() % 4) : 1 + static_cast<int>(rng() % 26);
    std::string i = digits(rng, len, true);
    if (rng() % 3 == 0) i = i.substr(0, 1) + std::string(static_cast<size_t>(len - 1), '0');  // trailing zeros
    t += i;
  }
  if (rng() % 2) {
    const int len = rng() % 5 == 0 ? 15 + static_cast<int>(rng() % 12) : 1 + static_cast<int>(rng() % 5);
    std::string f = digits(rng, len, false);
    if (rng() % 4 == 0) f = std::string(static_cast<size_t>(len), '0');
    if (rng() % 4 == 0) f = std::string(static_cast<size_t>(rng() % 25), '0') + f;  // leading zeros
    if (rng() % 5 == 0) f += std::string(1 + rng() % 3, '0');                         // trailing zeros
    t += "." + f;
  }
  if (rng() % 3 != 0) {
    t += rng() % 2 ? "e" : "E";
    const int sign = static_cast<int>(rng() % 3);
    if (sign) t += sign == 1 ? "+" : "-";
    t += std::string(rng() % 4 == 0 ? rng() % 4 : 0, '0');
    const int kind = static_cast<int>(rng() % 10);
    t += std::to_string(kind < 7 ? rng() % 30 : kind < 9 ? rng() % 400 : 400 + rng() % 600);
  }
  return t;
}

// `value` written with its decimal point moved by `shift` and the exponent compensating.
std::string shifted(const Decimal& value, int shift) {
  std::string all = value.int_digits + value.frac_digits;
  int point = static_cast<int>(value.int_digits.size()) - shift;  // digits before the point
  while (point <= 0) all = "0" + all, ++point;
  while (point > static_cast<int>(all.size())) all += "0";
  std::string i = all.substr(0, static_cast<size_t>(point)), f = all.substr(static_cast<size_t>(point));
  i = i.substr(std::min(i.find_first_not_of('0'), i.size() - 1));
  std::string t = (value.negative ? "-" : "") + i + (f.empty() ? "" : "." + f);
  return t + fmt::format("e{}", shift);
}

Decimal random_constant(std::mt19937& rng) {
  std::string t = rng() % 3 == 0 ? "-" : "";
  t += rng() % 4 == 0 ? "0" : digits(rng, 1 + static_cast<int>(rng() % 4), true);
  if (rng() % 2) t += "." + digits(rng, 1 + static_cast<int>(rng() % 4), false);
  if (rng() % 6 == 0) t += fmt::format("e{}", static_cast<int>(rng() % 40) - 20);
  return Decimal::parse(t);
}

// The documented exact region: plain texts, and exponent texts whose mantissa is zero or has
// at most kExactScale integer digits and a fraction that is empty, exactly "0", or ends in a
// non-zero digit at most kExactScale places after the point.
bool in_region(const std::string& text) {
  const size_t e = text.find_first_of("eE");
  if (e == std::string::npos) return true;
  std::string m = text.substr(text[0] == '-' ? 1 : 0, e - (text[0] == '-' ? 1 : 0));
  const size_t dot = m.find('.');
  const std::string i = m.substr(0, dot), f = dot == std::string::npos ? "" : m.substr(dot + 1);
  if ((i + f).find_first_not_of('0') == std::string::npos) return true;
  if (i.size() > static_cast<size_t>(kExactScale)) return false;
  if (f.empty() || f == "0") return true;
  return f.back() != '0' && f.size() <= static_cast<size_t>(kExactScale);
}

TEST(NumberOracle, AutomataAgreeWithFractionArithmetic) {
  if (std::system("python3 -c 'import fractions' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 is not available: the exact oracle (fractions.Fraction) cannot run";
  }
  std::mt19937 rng(20240611);
  std::vector<Constraint> constraints;
  std::vector<Decimal> constants;
  for (int k = 0; k < 14; ++k) constants.push_back(random_constant(rng));
  for (const char* c : {"0", "-0", "1", "100", "0.001", "2147483647", "1e-6", "-180", "2.5e20", "0.1"}) {
    constants.push_back(Decimal::parse(c));
  }
  const char* multiples[] = {"0.01", "0.5", "2.5", "3", "7", "1e-8", "0.1", "1", "4", "0.25", "12", "1.5", "17.5", "16", "125"};
  auto bound = [](Constraint& x, const Decimal& c, int kind) {
    static const char* names[] = {"ge", "gt", "le", "lt"};
    x.oracle += (x.oracle.empty() ? "" : ";") + fmt::format("{} {}", names[kind], c.to_string());
    auto& list = kind < 2 ? x.c.at_least : x.c.at_most;
    list.push_back({c, kind % 2 == 1});
  };
  for (const auto& c : constants) {
    for (int kind = 0; kind < 4; ++kind) {
      Constraint x;
      bound(x, c, kind);
      constraints.push_back(x);
    }
  }
  for (const char* m : multiples) {
    Constraint x;
    x.oracle = fmt::format("mul {}", m);
    x.c.multiple_of.push_back(Decimal::parse(m));
    constraints.push_back(x);
  }
  {
    Constraint x;
    x.oracle = "int";
    x.c.integer = true;
    constraints.push_back(x);
  }
  for (int k = 0; k < 30; ++k) {  // conjunctions: bounds, a multiple, integer
    Constraint x;
    Decimal lo = constants[rng() % constants.size()], hi = constants[rng() % constants.size()];
    if (rng() % 4) bound(x, lo, static_cast<int>(rng() % 2));
    if (rng() % 4) bound(x, hi, 2 + static_cast<int>(rng() % 2));
    if (rng() % 3 == 0) {
      const char* m = multiples[rng() % std::size(multiples)];
      x.oracle += (x.oracle.empty() ? "" : ";") + fmt::format("mul {}", m);
      x.c.multiple_of.push_back(Decimal::parse(m));
    }
    if (rng() % 2 || x.oracle.empty()) {
      x.oracle += (x.oracle.empty() ? "" : ";") + std::string("int");
      x.c.integer = true;
    }
    constraints.push_back(x);
  }
  // Several multiples at once (one condition of their least common multiple when it fits):
  // coprime, sharing factors, decimals of different scales, with bounds and "integer".
  for (const std::vector<const char*>& ms : std::vector<std::vector<const char*>>{
           {"2", "3", "5"}, {"4", "6"}, {"0.5", "0.3"}, {"0.25", "1.5"}, {"1e-8", "3"}, {"0.01", "7", "12"},
           {"0.5", "0.75"}, {"64", "80"}}) {
    for (const bool integer : {false, true}) {
      Constraint x;
      for (const char* m : ms) {
        x.oracle += (x.oracle.empty() ? "" : ";") + fmt::format("mul {}", m);
        x.c.multiple_of.push_back(Decimal::parse(m));
      }
      if (integer) {
        x.oracle += ";int";
        x.c.integer = true;
        bound(x, Decimal::parse("-1000"), 0);
      }
      constraints.push_back(x);
    }
  }
  // Bounds that the multiples move to zero (with_bounds_at_zero), and their neighbours that
  // stay: at, just inside and just outside ±L.
  for (const auto& [b, m, integer] : std::vector<std::tuple<const char*, const char*, bool>>{
           {"ge 2", "2.5", false}, {"gt 0", "0.5", false}, {"ge 2.5", "2.5", false}, {"gt 2.5", "2.5", false},
           {"gt 2.4", "2.5", false}, {"ge -0.3", "0.5", false}, {"gt -2.5", "2.5", false}, {"ge -2.5", "2.5", false},
           {"le -1", "4", false}, {"lt 0.5", "0.5", false}, {"le 0.5", "0.5", false}, {"lt -0.5", "0.5", false},
           {"le -0.5", "0.5", false}, {"ge 0.5", "0.25", true}, {"ge 1", "", true}, {"lt 1", "", true},
           {"gt -1", "", true}, {"ge 1e-3", "1e-3", false}, {"ge 299", "300", true}, {"ge 2.6", "2.5", false},
           {"le -2.6", "2.5", false}, {"ge -2.6", "2.5", false}}) {
    Constraint x;
    const std::string text = b;
    const int kind = text.rfind("ge", 0) == 0 ? 0 : text.rfind("gt", 0) == 0 ? 1 : text.rfind("le", 0) == 0 ? 2 : 3;
    bound(x, Decimal::parse(text.substr(3)), kind);
    if (*m) {
      x.oracle += fmt::format(";mul {}", m);
      x.c.multiple_of.push_back(Decimal::parse(m));
    }
    if (integer) {
      x.oracle += ";int";
      x.c.integer = true;
    }
    constraints.push_back(x);
  }
  // Excluded multiples (NumberConstraints::not_multiple_of, the complement of multipleOf), alone
  // and beside multiples, "integer" and bounds at zero.
  for (const std::vector<const char*>& parts : std::vector<std::vector<const char*>>{
           {"nmul 3"}, {"nmul 0.5"}, {"nmul 17.5"}, {"nmul 0.01"}, {"nmul 16"}, {"nmul 1e-8"}, {"nmul 1"},
           {"nmul 630", "mul 420", "int"}, {"nmul 2", "nmul 3", "int"}, {"nmul 0.3", "mul 0.1"},
           {"nmul 2.5", "gt 0"}, {"nmul 7", "le 0", "mul 0.5"}}) {
    Constraint x;
    for (const char* p : parts) {
      const std::string text = p;
      x.oracle += (x.oracle.empty() ? "" : ";") + text;
      const size_t space = text.find(' ');
      const std::string kind = text.substr(0, space);
      if (kind == "int") x.c.integer = true;
      else if (kind == "mul") x.c.multiple_of.push_back(Decimal::parse(text.substr(space + 1)));
      else if (kind == "nmul") x.c.not_multiple_of.push_back(Decimal::parse(text.substr(space + 1)));
      else bound(x, Decimal::parse(text.substr(space + 1)), kind == "gt" ? 1 : 2);
    }
    constraints.push_back(x);
  }
  for (int k = 0; k < 8; ++k) {  // enums
    Constraint x;
    x.is_in = true;
    x.oracle = "in";
    for (int j = 0, n = 1 + static_cast<int>(rng() % 6); j < n; ++j) {
      x.among.push_back(constants[rng() % constants.size()]);
      x.oracle += " " + x.among.back().to_string();
    }
    constraints.push_back(x);
  }
  // Texts: random ones, and every constant written in many exponent forms, and nudged.
  std::vector<std::string> texts;
  for (int k = 0; k < 1500; ++k) texts.push_back(random_text(rng));
  for (const auto& c : constants) {
    for (int shift : {-25, -21, -20, -7, -1, 0, 1, 2, 5, 19, 20, 21, 30}) {
      texts.push_back(shifted(c, shift));
      Decimal nudged = c;
      nudged.frac_digits += "1";
      texts.push_back(shifted(nudged, shift));
    }
  }
  for (const char* t : {"1e-06", "2.5E+20", "1e5", "1.5e1", "100e-2", "2.5e-1", "1e400", "1.5e-1", "1.0e5", "-0e0",
                        "0.000e-5", "1.50e3", "1e0000000000000000000000001", "123456789012345678901e-21"}) {
    texts.push_back(t);
  }
  // The oracle.
  const auto dir = std::filesystem::temp_directory_path();
  const std::string pid = std::to_string(::getpid());
  const std::string script = (dir / ("lockstep_oracle." + pid + ".py")).string();
  const std::string in = (dir / ("lockstep_oracle_in." + pid)).string();
  const std::string out = (dir / ("lockstep_oracle_out." + pid)).string();
  std::ofstream(script) << kOracle;
  {
    std::ofstream f(in);
    f << "TEXTS " << texts.size() << "\n";
    for (const auto& t : texts) f << t << "\n";
    f << "CONSTRAINTS " << constraints.size() << "\n";
    for (const auto& c : constraints) f << c.oracle << "\n";
  }
  const int status = std::system(fmt::format("python3 '{}' '{}' '{}'", script, in, out).c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the oracle script failed";
  std::vector<std::string> verdicts;
  {
    std::ifstream f(out);
    for (std::string line; std::getline(f, line);) verdicts.push_back(line);
  }
  for (const auto& p : {script, in, out}) std::filesystem::remove(p);
  ASSERT_EQ(verdicts.size(), constraints.size());

  const CharDfa& region = exact_numbers();
  size_t inside = 0, decided = 0, fallbacks = 0, exponent_members = 0;
  for (const auto& t : texts) {
    ASSERT_EQ(region.accepts(t), in_region(t)) << t << ": exact_numbers() disagrees with the documented region";
    inside += in_region(t);
  }
  for (size_t k = 0; k < constraints.size(); ++k) {
    const Constraint& x = constraints[k];
    // Over the state budget, the schema compiler falls back to plain texts (and warns).
    bool plain_only = false;
    CharDfa set = CharDfa::none();
    try {
      set = x.is_in ? numbers_in(x.among) : numbers_satisfying(x.c);
    } catch (const std::invalid_argument&) {
      plain_only = true;
      set = numbers_satisfying(x.c, false);
      ++fallbacks;
    }
    // The complement as the schema algebra takes it: within the region the set is exact on.
    bool compare = x.is_in, multiple = x.c.integer || !x.c.multiple_of.empty() || !x.c.not_multiple_of.empty();
    for (const auto* list : {&x.c.at_least, &x.c.at_most}) {
      for (const auto& b : *list) compare = compare || !b.value.is_zero();
    }
    const CharDfa& exact = plain_only ? plain_numbers() : region_numbers(compare, multiple);
    const CharDfa complement = CharDfa::intersect(exact, set.complement());
    for (size_t i = 0; i < texts.size(); ++i) {
      const std::string& t = texts[i];
      const bool truth = verdicts[k][i] == '1';
      const bool accepted = set.accepts(t), rejected = complement.accepts(t);
      if (plain_only ? t.find_first_of("eE") == std::string::npos : in_region(t)) {
        ASSERT_EQ(accepted, truth) << t << " under " << x.oracle;
        ASSERT_EQ(rejected, !truth) << t << " under not(" << x.oracle << ")";
        ++decided;
        exponent_members += truth && t.find_first_of("eE") != std::string::npos;
      } else {
        ASSERT_TRUE(!accepted || truth) << t << " accepted under " << x.oracle << " (outside the region)";
        ASSERT_TRUE(!rejected || !truth) << t << " accepted under not(" << x.oracle << ") (outside the region)";
      }
    }
  }
  // The sample covers both sides of the region.
  EXPECT_GT(inside, texts.size() / 2);
  EXPECT_LT(inside, texts.size());
  EXPECT_GT(decided, 100000u);
  // Walks over their budget: the bound beside multipleOf 0.01, 7 and 12 (84 residues). The
  // schema compiler takes the product of the bound's and the multiples' automata instead.
  EXPECT_LE(fallbacks, 1u);
  EXPECT_GT(exponent_members, 10000u);  // exponent texts that satisfy their constraint, not only rejections
  std::printf("texts %zu (%zu in the region), constraints %zu, decided %zu (%zu exponent texts accepted), "
              "plain only %zu\n", texts.size(), inside, constraints.size(), decided, exponent_members, fallbacks);
}

}  // namespace
}  // namespace lockstep
