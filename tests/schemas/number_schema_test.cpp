// Numbers in compiled schemas: exponent notation under value keywords, `not`, enums, the
// integer type of each draft, the plain-only fallback, and the canonical_numbers option
// (any JSON value and tool-call arguments included), fed byte by byte to an Earley parser.
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "automata/earley.h"
#include "schemas/json_schema.h"
#include "schemas/number_sets.h"
#include "schemas/tool_calls.h"
#include "tests/schemas/compiled_schema.h"

namespace lockstep {
namespace {

using ojson = nlohmann::ordered_json;

using Compiled = schema_test::CompiledSchemaGrammar;
Compiled compile(const std::string& schema, bool canonical = false) {
  JsonSchemaOptions options = schema_test::compact_options();
  options.canonical_numbers = canonical;
  return schema_test::compile_schema(schema, options);
}

void expect(const Compiled& c, const std::vector<const char*>& valid, const std::vector<const char*>& invalid,
            const std::string& schema) {
  for (const char* t : valid) EXPECT_TRUE(c.accepts(t)) << t << " should match " << schema;
  for (const char* t : invalid) EXPECT_FALSE(c.accepts(t)) << t << " should not match " << schema;
}

void expect(const std::string& schema, const std::vector<const char*>& valid, const std::vector<const char*>& invalid) {
  expect(compile(schema), valid, invalid, schema);
}

TEST(NumberSchema, ExponentNotationWhereverTheValueIsAllowed) {
  // What Python's json.dumps writes for small and large floats.
  expect(R"({"type":"object","properties":{"evalue":{"type":"number","minimum":0}}})",
         {R"({"evalue":1e-06})", R"({"evalue":2.5e+20})", R"({"evalue":0.0})", R"({"evalue":-0e5})"},
         {R"({"evalue":-1e-06})", R"({"evalue":-2.5E+20})"});
  expect(R"({"minimum":0.001})", {"1e-03", "1E-3", "0.01e-1", "1.5e-3", "1e400"}, {"1e-06", "9.99e-4", "-1e400"});
  expect(R"({"maximum":100})", {"1e2", "1e+02", "100e0", "1000e-1", "-1e400", "1e-400"}, {"1e400", "1.01e2", "10001e-2"});
  expect(R"({"exclusiveMinimum":0,"exclusiveMaximum":1})", {"5e-1", "9.99e-1", "1e-300"}, {"0e0", "1e0", "10e-1", "-1e-300"});
  // Draft 4's boolean exclusive bounds.
  expect(R"({"$schema":"http://json-schema.org/draft-04/schema#","minimum":1,"exclusiveMinimum":true,
             "maximum":2,"exclusiveMaximum":false})",
         {"1.5e0", "2e0", "0.2e1", "20e-1"}, {"1e0", "0.1e1", "2.0000001e0"});
  expect(R"({"const":9007199254740992})", {"9007199254740992", "9.007199254740992e+15", "9007199254740992.0"},
         {"9.007199254740991e+15", "9.0071992547409921e15"});
  expect(R"({"multipleOf":0.01})", {"1.5e-1", "1e-2", "12.34e1", "1e400", "-2.5E-1"}, {"1e-3", "1.234e-1", "1.5e-400"});
}

TEST(NumberSchema, IntegersPerDraft) {
  expect(R"({"type":"integer"})", {"1e5", "1.5e1", "100e-2", "1.0", "-3E+2", "0.0e0", "1e400"},
         {"1.5e-1", "2.5e-1", "1e-1", "1.5", "1e-400"});
  // Draft 4: "a JSON number without a fraction or exponent part".
  expect(R"({"$schema":"http://json-schema.org/draft-04/schema#","type":"integer"})", {"15", "-3"},
         {"1e5", "1.0", "1.5e1"});
  expect(R"({"type":"integer","minimum":1,"maximum":31})", {"1", "3.1e1", "31", "1e1", "0.1e1", "310e-1"},
         {"0", "3.2e1", "1.5", "3.15e1", "1e-1"});
  // The integer type and the bound in different subschemas.
  expect(R"({"allOf":[{"type":"integer"},{"minimum":1}]})", {"1e0", "2.0e3"}, {"0e3", "5e-1", "1.5e0"});
}

TEST(NumberSchema, NotEnumAndOneOf) {
  // (`minimum` accepts every non-number, so its complement accepts numbers only.)
  expect(R"({"not":{"minimum":1}})", {"5e-1", "0.999e0", "-1e9"}, {"1e0", "1.5", "10e-1", "1e400", "\"x\""});
  expect(R"({"not":{"type":"integer"}})", {"1.5", "1.5e-1", "-2.5E0"}, {"1e5", "1.5e1", "100e-2", "7"});
  expect(R"({"enum":[0.5,1e-06,2.5e+20,"a"]})",
         {"0.5", "5e-1", "0.05e1", "1e-06", "0.000001", "1E-6", "2.5E+20", "250000000000000000000", "\"a\""},
         {"2.5e19", "5e-2", "1e-05", "0.6"});
  expect(R"({"type":"number","oneOf":[{"maximum":2},{"maximum":5}]})", {"3e0", "5e0", "0.4e1"},
         {"1e0", "2e0", "6e0"});
  // 10^30 + 10^4, an integer written with a non-zero digit 26 places after the point: outside
  // the exact region, so neither the integers nor their complement accept it. Comparisons
  // still decide it (exact beyond the region where they can be).
  const char* far = "1.00000000000000000000000001e30";
  expect(R"({"type":"integer"})", {}, {far});
  expect(R"({"not":{"type":"integer"}})", {}, {far});
  expect(R"({"minimum":1e30})", {far}, {"0.99999999999999999999999999e30"});
  // not: {multipleOf…} (several: their least common multiple) is walked as an excluded
  // multiple: multiples of 420 from 10,000 that are no multiple of 630 (nor of 1,260) and
  // not one of three values.
  expect(R"({"type":"integer","allOf":[{"multipleOf":5},{"multipleOf":3},{"multipleOf":2},{"multipleOf":7},
             {"not":{"enum":[10500,10920,11760]}}],"multipleOf":4,
             "not":{"allOf":[{"multipleOf":9},{"multipleOf":5},{"multipleOf":3},{"multipleOf":2},{"multipleOf":7}]},
             "minimum":10000})",
         {"12180", "1.218e4", "12180.0", "121800e-1", "13020", "1.302E+4"},
         {"10080", "10500", "1.05e4", "10920", "11340", "11760", "12600", "1.26e4", "9660", "12180.5", "\"x\""});
  expect(R"({"not":{"multipleOf":2.5}})", {"1", "2.4e0", "7.5e-1"}, {"2.5", "25e-1", "0", "-5", "1e1", "\"x\""});
}

TEST(NumberSchema, ExponentsLeftOutOverTheStateBudgetWithAWarning) {
  const std::string schema = R"({"multipleOf":0.997})";
  const Compiled c = compile(schema);
  expect(c, {"1.994", "0.997", "-9.970"}, {"9.97e-1", "0.998"}, schema);
  ASSERT_EQ(c.schema.warnings.size(), 1u);
  EXPECT_NE(c.schema.warnings[0].find("only without exponent"), std::string::npos) << c.schema.warnings[0];
}

TEST(NumberSchema, BoundsBesideMultiplesKeepExponentTexts) {
  // One walk over both conditions would pass its state budget and leave exponent texts out;
  // the product of the bounds' automaton and the multiples' keeps them, as it does when the
  // same keywords sit in different subschemas of an allOf.
  for (const std::string schema : {R"({"multipleOf":2.5,"minimum":2})", R"({"allOf":[{"multipleOf":2.5},{"minimum":2}]})"}) {
    const Compiled c = compile(schema);
    expect(c, {"2.5", "2.5e0", "5e1", "0.25e1", "1e1", "250e-2"}, {"2", "2e0", "0", "-2.5", "2.5e-1", "1.25e0"}, schema);
    EXPECT_TRUE(c.schema.warnings.empty()) << c.schema.warnings[0];
  }
  const std::string scores = R"({"type":"number","minimum":0,"maximum":100,"multipleOf":0.25})";
  const Compiled c = compile(scores);
  expect(c, {"99.75", "9.975e1", "1e2", "0.25", "0"}, {"100.25", "1.0025e2", "0.1", "-0.25"}, scores);
  EXPECT_TRUE(c.schema.warnings.empty()) << c.schema.warnings[0];
  // With the integer type, which joins the multiples: integers that are multiples of 13.5
  // (odd multiples of 13.5 are not integers), between -1000 and -100.
  const std::string negative = R"({"type":"integer","multipleOf":13.5,"exclusiveMinimum":-1000,"exclusiveMaximum":-100})";
  expect(negative, {"-135", "-1.35e2", "-999e0", "-108"}, {"-121.5", "-1.215e2", "-1026", "-81", "135"});
}

TEST(NumberSchema, IntersectingPlainTextsLosesNoMoreExponents) {
  // The multiple of 0.997 is decided on plain texts only; intersecting it with the complement
  // of the multiples of 7 is an intersection of plain texts from the start (the same
  // language), not a product with the complement's exponent machinery that grows too large
  // and then reports exponents lost a second time.
  const std::string schema = R"({"allOf":[{"multipleOf":0.997},{"not":{"multipleOf":7}}]})";
  const Compiled c = compile(schema);
  expect(c, {"1.994", "0.997", "-9.970", "7.976"}, {"6979", "6.979e3", "1.994e0", "0.998", "7"}, schema);
  ASSERT_EQ(c.schema.warnings.size(), 1u);
  EXPECT_NE(c.schema.warnings[0].find("*0.997"), std::string::npos) << c.schema.warnings[0];
  // The complement alone keeps its exponent texts.
  expect(R"({"type":"number","not":{"multipleOf":7}})", {"1.5e0", "8e0"}, {"7e0", "1.4e1"});
}

TEST(NumberSchema, SetOperationsPastTheSchemaBudgetArePlain) {
  // The union of the multiples of 33 and 12 with exponent texts has 21,741 states; adding the
  // multiples of 77 passes the schema's budget for set operations (kMaxSchemaProductStates),
  // so that union is taken on plain texts, with the warning.
  const std::string two = R"({"type":"number","anyOf":[{"multipleOf":33},{"multipleOf":12}]})";
  const Compiled c2 = compile(two);
  expect(c2, {"66", "3.3e1", "2.4e1", "36"}, {"13", "3.4e1"}, two);
  EXPECT_TRUE(c2.schema.warnings.empty()) << c2.schema.warnings[0];
  const std::string three = R"({"type":"number","anyOf":[{"multipleOf":33},{"multipleOf":12},{"multipleOf":77}]})";
  const Compiled c3 = compile(three);
  expect(c3, {"66", "24", "154", "-231", "36.0"}, {"13", "3.3e1", "1.54e2", "7"}, three);
  ASSERT_EQ(c3.schema.warnings.size(), 1u);
  EXPECT_NE(c3.schema.warnings[0].find("only without exponent"), std::string::npos) << c3.schema.warnings[0];
  // A small combination keeps its exponent texts.
  expect(R"({"type":"number","not":{"anyOf":[{"multipleOf":2},{"multipleOf":5}]}})", {"3", "1.1e1", "7e0"},
         {"1e1", "4", "2.5e1"});
}

TEST(NumberSchema, NotOfAnyOfIsEachComplementInTurn) {
  // Integer multiples of 13.5 in (-1000, -100) that are no multiple of 2, 13, 5, 7, 11 or 37.
  // The complements join the running intersection one by one, so every product is small and
  // exponent texts stay; the complement of the union alone would pass the schema's budget.
  const std::string schema = R"({"type":"integer","multipleOf":13.5,"exclusiveMinimum":-1000,"exclusiveMaximum":-100,
      "not":{"description":"no small prime factor","anyOf":[{"multipleOf":2},{"multipleOf":13},{"multipleOf":5},
      {"multipleOf":7},{"multipleOf":11},{"multipleOf":37}]}})";
  const Compiled c = compile(schema);
  EXPECT_TRUE(c.schema.warnings.empty()) << c.schema.warnings[0];
  for (int v = -1000; v <= -100; ++v) {
    const bool valid = v > -1000 && v < -100 && v % 27 == 0 && v % 2 != 0 && v % 13 != 0 && v % 5 != 0 &&
                       v % 7 != 0 && v % 11 != 0 && v % 37 != 0;
    const std::string text = std::to_string(v), exponent = "-" + text.substr(1, 1) + "." + text.substr(2) + "e2";
    EXPECT_EQ(c.accepts(text), valid) << text;
    if (v <= -100 && v > -1000) {
      EXPECT_EQ(c.accepts(exponent), valid) << exponent;
    }
  }
  EXPECT_FALSE(c.accepts("\"x\""));
  // Other types: not (a string, or a number ≥ 5, or any other value: minimum accepts every
  // non-number), with and without annotations beside the anyOf: numbers below 5.
  for (const std::string s : {R"({"not":{"anyOf":[{"type":"string"},{"minimum":5}]}})",
                              R"({"not":{"title":"t","anyOf":[{"type":"string"},{"minimum":5}]}})"}) {
    expect(s, {"3", "4.5e0", "-1"}, {"\"x\"", "7", "5e0", "null", "true", "[]", "{}"});
  }
  // Beside another keyword the anyOf is not taken apart: not (an object, which both
  // alternatives allow), so every value but objects.
  expect(R"({"not":{"type":"object","anyOf":[{"type":"string"},{"minimum":5}]}})",
         {"null", "true", "3", "7", "\"x\"", "[]"}, {"{}", "{\"a\":1}"});
}

TEST(NumberSchema, AMemoizedSetOperationCostsItsProductAgain) {
  // The same schema gets the same sets whatever the process computed before: a result
  // memoized under a large budget is over a small one.
  schema::NumberSet two, five;
  bool plain = false;
  NumberConstraints m;
  m.multiple_of = {Decimal::parse("2")};
  two = schema::numbers_constrained(m, plain);
  m.multiple_of = {Decimal::parse("5")};
  five = schema::numbers_constrained(m, plain);
  schema::NumberSet first;
  {
    const schema::ProductBudget large(schema::kMaxSchemaProductStates);
    first = schema::numbers_or(two, five);
    EXPECT_LT(schema::ProductBudget::left(), schema::kMaxSchemaProductStates);  // the product cost something
  }
  EXPECT_FALSE(first.lost_exponents);
  EXPECT_TRUE(first.texts->accepts("1e1"));
  {
    const schema::ProductBudget small(1);
    const schema::NumberSet again = schema::numbers_or(two, five);
    EXPECT_TRUE(again.lost_exponents);
    EXPECT_FALSE(again.texts->accepts("1e1"));
    EXPECT_TRUE(again.texts->accepts("10"));
    EXPECT_EQ(schema::ProductBudget::left(), 0u);
  }
  const schema::ProductBudget large(schema::kMaxSchemaProductStates);
  EXPECT_EQ(schema::numbers_or(two, five).texts, first.texts);
}

TEST(NumberSchema, PendingSetsAreMadeOnlyWhereTheirOwnAutomatonIsNeeded) {
  // Multiples no other test asks for, so that the process-wide registry has none of them.
  auto multiple = [](const char* m) {
    NumberConstraints c;
    c.multiple_of = {Decimal::parse(m)};
    return c;
  };
  int made_a = 0, made_b = 0;
  auto pending = [](const NumberConstraints& c, int& count) {
    return schema::pending_numbers(c, [c, &count] {
      ++count;
      bool plain = false;
      return schema::numbers_constrained(c, plain);
    });
  };
  const schema::ProductBudget budget(schema::kMaxSchemaProductStates);
  const schema::NumberSet a = pending(multiple("14"), made_a);
  const schema::NumberSet b = pending(multiple("21"), made_b);
  ASSERT_TRUE(a.pending && b.pending);
  // An intersection of conjunctions is one pending walk of the merged conjunction; making
  // it never makes its operands.
  const schema::NumberSet both = schema::numbers_and_all({&a, &b});
  ASSERT_TRUE(both.pending);
  const schema::NumberSet& walked = schema::made(both);
  EXPECT_EQ(made_a + made_b, 0);
  EXPECT_TRUE(walked.texts->accepts("84"));  // 2 × 42
  EXPECT_TRUE(walked.texts->accepts("8.4e1"));
  EXPECT_FALSE(walked.texts->accepts("14"));
  EXPECT_EQ(schema::made(both).texts, walked.texts);  // made once
  // The complement of a pending multiple is the walk of its negation.
  const schema::NumberSet not_a = schema::numbers_not(a);
  EXPECT_EQ(made_a, 0);
  EXPECT_TRUE(not_a.texts->accepts("15"));
  EXPECT_FALSE(not_a.texts->accepts("28"));
  EXPECT_FALSE(not_a.texts->accepts("2.8e1"));
  // A union needs each automaton: each operand is made, once however often it is used.
  const schema::NumberSet either = schema::numbers_or(a, b);
  const schema::NumberSet again = schema::numbers_or(b, a);
  EXPECT_EQ(made_a, 1);
  EXPECT_EQ(made_b, 1);
  for (const auto* u : {&either, &again}) {
    EXPECT_TRUE(u->texts->accepts("28"));
    EXPECT_TRUE(u->texts->accepts("2.1e1"));
    EXPECT_FALSE(u->texts->accepts("15"));
  }
  // A conjunction the registry holds already is made at once.
  int made_c = 0;
  const schema::NumberSet c = pending(multiple("14"), made_c);
  EXPECT_FALSE(c.pending);
  EXPECT_EQ(made_c, 1);
}

TEST(NumberSchema, APendingSetMeetingEveryNumberOrAnotherConjunctionIsNotMade) {
  // Each keyword group of a subschema intersects the running set with every number, and
  // type: integer is a conjunction made at once: neither makes a pending multiple, which a
  // later allOf or not merges again (Handwritten num1 made it, then walked it merged).
  NumberConstraints c;
  c.multiple_of = {Decimal::parse("26")};  // no other test asks for it
  int made = 0;
  const schema::NumberSet a = schema::pending_numbers(c, [c, &made] {
    ++made;
    bool plain = false;
    return schema::numbers_constrained(c, plain);
  });
  ASSERT_TRUE(a.pending);
  const schema::ProductBudget budget(schema::kMaxSchemaProductStates);
  EXPECT_TRUE(schema::numbers_and(a, schema::all_number_set()).pending);
  EXPECT_TRUE(schema::numbers_and(schema::all_number_set(), a).pending);
  const schema::NumberSet integer = schema::numbers_integer(2020);
  ASSERT_FALSE(integer.pending);
  const schema::NumberSet both = schema::numbers_and(integer, a);
  ASSERT_TRUE(both.pending);
  const schema::NumberSet& walked = schema::made(both);
  EXPECT_EQ(made, 0);
  EXPECT_TRUE(walked.texts->accepts("52"));
  EXPECT_TRUE(walked.texts->accepts("5.2e1"));
  EXPECT_FALSE(walked.texts->accepts("13"));
  EXPECT_FALSE(walked.texts->accepts("27"));
  // Disjointness needs the automata: the pending operand is made then, once.
  EXPECT_FALSE(schema::numbers_disjoint(a, integer));
  EXPECT_EQ(made, 1);
}

TEST(NumberSchema, DeferredMultiplesKeepTheirWarningsAndErrorsInPlace) {
  // The automaton of multipleOf 0.997 with exponent texts is over the state budget: its place
  // is named whether the set is made alone or merged into an allOf's walk.
  for (const std::string schema : {R"({"allOf":[{"multipleOf":0.997},{"minimum":1}]})",
                                   R"({"allOf":[{"multipleOf":0.997},{"multipleOf":3}]})"}) {
    const Compiled c = compile(schema);
    ASSERT_FALSE(c.schema.warnings.empty()) << schema;
    EXPECT_NE(c.schema.warnings[0].find("only without exponent"), std::string::npos) << c.schema.warnings[0];
  }
  // A multiple no walk can take is refused where it is written, pending or not.
  try {
    compile(R"({"allOf":[{"multipleOf":3},{"multipleOf":1e-400}]})");
    ADD_FAILURE() << "expected a SchemaError";
  } catch (const SchemaError& e) {
    EXPECT_NE(std::string(e.what()).find("/allOf/1"), std::string::npos) << e.what();
  }
}

TEST(NumberSchema, PlainProductsHoldPlainTextsTheFullRegistryCannotKeep) {
  // Once the process-wide registry holds kMaxSharedStates states, an operand's plain texts
  // (made when a product goes on plain texts) have no owner but the product that asked for
  // them; a long-running process gets there (a benchmark worker crashed reading them after
  // they were freed). Checked in a child process: filling the registry changes what the
  // rest of a test binary would share. Under AddressSanitizer a read after the free fails.
  EXPECT_EXIT(
      {
        bool plain = false;
        NumberConstraints m;
        m.multiple_of = {Decimal::parse("0.0137")};
        const schema::NumberSet multiples = schema::numbers_constrained(m, plain);  // kept: made first
        m.multiple_of = {Decimal::parse("3")};
        const schema::NumberSet three = schema::numbers_constrained(m, plain);
        // Enums of 25 nine-digit integers (some 4,200 states each, each small enough to
        // keep) up to the registry's states, then of one (180-400 states) to fill what is
        // left: less than the 514 states of the plain multiples of 0.0137 (2,955 with
        // exponents, kept).
        std::mt19937 rng(7);
        for (const auto& [count, total] : {std::pair{25, schema::kMaxSharedStates}, std::pair{1, 2 * schema::kMaxSharedAutomaton}}) {
          for (size_t states = 0; states < total;) {
            std::vector<Decimal> values;
            for (int i = 0; i < count; ++i) values.push_back(Decimal::parse(std::to_string(100000000 + rng() % 900000000)));
            const size_t size = schema::numbers_among(values).texts->size();
            if (size > schema::kMaxSharedAutomaton || (count == 1 && size > 400)) std::exit(2);  // fills nothing, or too coarse
            states += size;
          }
        }
        const schema::ProductBudget none(0);  // the union is on plain texts
        const schema::NumberSet either = schema::numbers_or(multiples, three);
        const bool right = either.lost_exponents && either.texts->accepts("0.0274") && either.texts->accepts("-6") &&
                           !either.texts->accepts("0.0275") && !either.texts->accepts("3e1");
        std::exit(right ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(NumberSchema, CanonicalNumbersAreWhatSerializersWrite) {
  const std::string schema = R"({"type":"array","items":{"type":"number"}})";
  const Compiled c = compile(schema, true);
  expect(c, {"[1.0,0.5,1e-06,2.5e+20,0,-3,123.25,1E5,0.0]"}, {}, schema);
  for (const char* bad : {"1.50", "-0", "-0.0", "0.10", "123456789012345678", "1.0e5", "0.1234567890123456789",
                          "1e1000", "01"}) {
    EXPECT_FALSE(c.accepts(std::string("[") + bad + "]")) << bad;
  }
  // Constrained numbers too.
  expect(compile(R"({"type":"integer","minimum":0})", true), {"0", "15", "15.0", "1e5", "1.5e1"}, {"-0", "1.50e1", "015"},
         "integer");
  // When no canonical text is left, the exact language stays.
  expect(compile(R"({"const":12345678901234567891})", true), {"12345678901234567891", "1.2345678901234567891e19"},
         {"12345678901234567890"}, "const");
  // Any JSON value and tool-call arguments.
  JsonSchemaOptions options;
  options.canonical_numbers = true;
  const auto any = GrammarAutomaton::compile(json_value_grammar(options));
  auto parse = [](const GrammarAutomaton& g, const std::string& text) {
    EarleyParser p(g);
    return p.advance(text) && p.accepting();
  };
  EXPECT_TRUE(parse(*any, R"({"a":[1.5,2e-07]})"));
  EXPECT_FALSE(parse(*any, R"({"a":[1.50]})"));
  EXPECT_TRUE(parse(*GrammarAutomaton::compile(json_value_grammar()), R"({"a":[1.50]})"));
  const auto tools = parse_tool_definitions(ojson::parse(
      R"([{"name":"f","parameters":{"type":"object","properties":{"x":{"type":"number"}}}}])"));
  options.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  const auto call = GrammarAutomaton::compile(compile_tool_calls(tools, options).grammar);
  EXPECT_TRUE(parse(*call, R"({"name":"f","arguments":{"x":0.25}})"));
  EXPECT_FALSE(parse(*call, R"({"name":"f","arguments":{"x":0.250}})"));
}

}  // namespace
}  // namespace lockstep
