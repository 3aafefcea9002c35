// JSON Schema → grammar: options, drafts, errors and the object machine, each checked by
// feeding documents byte by byte to an Earley parser over the compiled grammar.
#include <algorithm>
#include <map>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "schemas/json_schema.h"
#include "schemas/string_lengths.h"
#include "tests/schemas/compiled_schema.h"

namespace lockstep {
namespace {

using ojson = nlohmann::ordered_json;

using Compiled = schema_test::CompiledSchemaGrammar;
Compiled compile(const std::string& schema, JsonSchemaOptions options = {}) {
  return schema_test::compile_schema(schema, options);
}
std::string error_of(const std::string& schema, JsonSchemaOptions options = {}) {
  return schema_test::schema_error_of(schema, options);
}

// An object of `n` required integer properties `<prefix>0`, `<prefix>1`, …, nothing else
// allowed; `names` gets the names in order.
ojson required_integers(int n, const char* prefix, std::vector<std::string>& names) {
  ojson schema = {{"type", "object"}, {"properties", ojson::object()}, {"required", ojson::array()},
                  {"additionalProperties", false}};
  for (int i = 0; i < n; ++i) {
    names.push_back(fmt::format("{}{}", prefix, i));
    schema["properties"][names.back()] = {{"type", "integer"}};
    schema["required"].push_back(names.back());
  }
  return schema;
}

// The compact object with these keys in this order, the i-th valued i.
std::string object_of(const std::vector<std::string>& keys) {
  std::string s = "{";
  for (size_t i = 0; i < keys.size(); ++i) s += (i ? "," : "") + fmt::format("\"{}\":{}", keys[i], i);
  return s + "}";
}

TEST(JsonSchema, ManyRequiredPropertiesInAnyOrderAreCounted) {
  // Twelve required names in any order: the grammar cannot list the orders, it counts.
  std::vector<std::string> names;
  const ojson schema = required_integers(12, "p", names);
  JsonSchemaOptions o;
  o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  o.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  const Compiled c = compile(schema.dump(), o);
  std::mt19937 rng(7);
  const auto doc = object_of;
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<std::string> keys = names;
    std::shuffle(keys.begin(), keys.end(), rng);
    EXPECT_TRUE(c.accepts(doc(keys))) << doc(keys);
    std::vector<std::string> missing(keys.begin(), keys.end() - 1);
    EXPECT_FALSE(c.accepts(doc(missing))) << doc(missing);
  }
  EXPECT_FALSE(c.accepts(doc({"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10", "x"})));
}

// In any order, a required name tracked as a bit is read once: after it, the member machine
// offers the names still missing (and the optional ones), not the same name again. An
// optional name is not tracked, so it may still repeat.
TEST(JsonSchema, TrackedRequiredNamesAreNotReadTwice) {
  std::vector<std::string> names;
  ojson schema = required_integers(4, "r", names);
  schema["properties"]["opt"] = {{"type", "integer"}};
  JsonSchemaOptions o = schema_test::compact_options();
  o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  const Compiled c = compile(schema.dump(), o);
  std::vector<std::string> keys = names;
  std::mt19937 rng(3);
  for (int trial = 0; trial < 8; ++trial) {
    std::shuffle(keys.begin(), keys.end(), rng);
    EXPECT_TRUE(c.accepts(object_of(keys))) << object_of(keys);
    for (size_t i = 0; i < keys.size(); ++i) {
      std::vector<std::string> twice = keys;
      twice.insert(twice.begin() + static_cast<long>(i) + 1, keys[i]);  // the name again, right after itself
      EXPECT_FALSE(c.accepts(object_of(twice))) << object_of(twice);
      std::vector<std::string> late = keys;
      late.push_back(keys[i]);  // the name again, after all the others
      EXPECT_FALSE(c.accepts(object_of(late))) << object_of(late);
    }
    std::vector<std::string> optional_twice = keys;
    optional_twice.insert(optional_twice.begin() + 1, "opt");
    optional_twice.push_back("opt");
    EXPECT_TRUE(c.accepts(object_of(optional_twice))) << object_of(optional_twice);
  }
  // A prefix with a name read twice is already a dead end, not only the whole text.
  EXPECT_FALSE(c.accepts_prefix(R"({"r0":0,"r0")"));
  EXPECT_TRUE(c.accepts_prefix(R"({"r0":0,"r1")"));

  const ojson dependent = {{"type", "object"},
                           {"properties", {{"a", {{"type", "integer"}}}, {"b", {{"type", "integer"}}}}},
                           {"dependentRequired", {{"a", {"b"}}}}};
  const Compiled d = compile(dependent.dump(), o);
  EXPECT_TRUE(d.accepts(R"({"a":1,"b":2})"));
  EXPECT_TRUE(d.accepts(R"({"b":2,"a":1})"));
  EXPECT_FALSE(d.accepts(R"({"a":1})"));
  EXPECT_FALSE(d.accepts(R"({"a":1,"b":2,"b":3})"));
}

// A member machine of names in any order is one machine walk: a state per set of names read
// (2^4), a move per name not read yet from each (4·2^3), each member once among its
// elements. Its separator is a reference to one rule holding it, which the compiler
// substitutes back, so no automaton calls it.
TEST(JsonSchema, MemberMachineIsOneWalkWithOneSeparatorRule) {
  std::vector<std::string> names;
  const ojson schema = required_integers(4, "r", names);
  JsonSchemaOptions any;
  any.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  const Compiled c = compile(schema.dump(), any);
  const Grammar& g = c.schema.grammar;
  std::vector<uint32_t> seps;
  for (uint32_t r = 0; r < g.rules.size(); ++r) {
    if (g.rules[r].name.rfind("sep-", 0) == 0) seps.push_back(r);
  }
  ASSERT_EQ(seps.size(), 1u);
  const Expr& sep = g.rules[seps[0]].body;
  ASSERT_EQ(sep.kind, Expr::Kind::kSequence);
  ASSERT_EQ(sep.children.size(), 3u);
  EXPECT_EQ(sep.children[1].bytes, ",");
  std::vector<const Expr*> walks;
  for (const Rule& rule : g.rules) {
    if (rule.body.kind == Expr::Kind::kMachine) walks.push_back(&rule.body);
    EXPECT_EQ(rule.name.find("members-s"), std::string::npos) << rule.name;  // no rule per state
  }
  ASSERT_EQ(walks.size(), 1u);
  const Expr& walk = *walks[0];
  EXPECT_EQ(walk.machine->num_states(), 16u);
  EXPECT_EQ(walk.machine->moves.size(), 32u);
  ASSERT_EQ(walk.children.size(), 5u);  // the separator, then the four members
  ASSERT_EQ(walk.children[0].kind, Expr::Kind::kRuleRef);
  EXPECT_EQ(walk.children[0].rule, seps[0]);
  for (uint32_t q = 0; q < c.grammar->num_states(); ++q) {
    for (const auto& e : c.grammar->rule_edges(q)) EXPECT_NE(e.rule, seps[0]) << "state " << q;
  }
  EXPECT_TRUE(c.accepts(R"({ "r2" : 1 ,"r0":2,  "r3":3 , "r1":4 })"));
  EXPECT_FALSE(c.accepts(R"({ "r2" : 1 ,"r0":2,  "r3":3 ,, "r1":4 })"));
  // A pretty layout's separator is one literal already: no rule for it.
  JsonSchemaOptions pretty = any;
  pretty.whitespace = JsonSchemaOptions::Whitespace::kPretty;
  const Compiled p = compile(schema.dump(), pretty);
  for (const Rule& rule : p.schema.grammar.rules) EXPECT_NE(rule.name.rfind("sep-", 0), 0u) << rule.name;
}

// Past 8 required names the names are counted: each count leads to the next by any name not
// read. When the names' values differ (each its own member), every count's moves lead to one
// target, and the machine stays rules: the choice of the members is one rule every count
// calls, where a machine walk would build each count's moves on their own (n^2 for n names).
TEST(JsonSchema, CountedNamesOfDifferentValuesShareOneChoice) {
  std::vector<std::string> names;
  ojson schema = required_integers(12, "c", names);
  for (size_t i = 0; i < names.size(); ++i) schema["properties"][names[i]] = {{"const", static_cast<int>(i)}};
  JsonSchemaOptions o;
  o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  o.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  const Compiled c = compile(schema.dump(), o);
  for (const Rule& rule : c.schema.grammar.rules) EXPECT_NE(rule.body.kind, Expr::Kind::kMachine) << rule.name;
  std::vector<std::string> keys = names;
  std::mt19937 rng(5);
  std::shuffle(keys.begin(), keys.end(), rng);
  std::string doc = "{";
  for (size_t i = 0; i < keys.size(); ++i) doc += fmt::format("{}\"{}\":{}", i ? "," : "", keys[i], keys[i].substr(1));
  EXPECT_TRUE(c.accepts(doc + "}")) << doc;
  EXPECT_FALSE(c.accepts(doc + ",\"c0\":0}"));
}

// Past 63 required names too: plain required names are counted, not given a bit each, so
// their number is not bounded by a state's bit set (it was 63).
TEST(JsonSchema, HundredsOfRequiredNamesAreCounted) {
  std::vector<std::string> names;
  const ojson schema = required_integers(200, "k", names);
  const auto doc = object_of;
  JsonSchemaOptions o = schema_test::compact_options();
  o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  const Compiled any = compile(schema.dump(), o);
  std::mt19937 rng(11);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<std::string> keys = names;
    std::shuffle(keys.begin(), keys.end(), rng);
    EXPECT_TRUE(any.accepts(doc(keys)));
    EXPECT_FALSE(any.accepts(doc({keys.begin(), keys.end() - 1})));
  }
  o.property_order = JsonSchemaOptions::PropertyOrder::kSchema;
  const Compiled ordered = compile(schema.dump(), o);
  EXPECT_TRUE(ordered.accepts(doc(names)));
  std::vector<std::string> skipped = names;
  skipped.erase(skipped.begin() + 100);
  EXPECT_FALSE(ordered.accepts(doc(skipped)));
  std::swap(names[3], names[4]);
  EXPECT_FALSE(ordered.accepts(doc(names)));
}

// In schema order the names that may come at position p are name p and those that may come
// at p + 1: the member machine is a chain, compiled in rules linear in the names (automata
// of a bounded number of links calling the next), where its n^2/2 moves spelled out took
// seconds to determinize at 600 names. One required name in the middle: no name after it
// may come before it.
TEST(JsonSchema, SchemaOrderOfManyOptionalNamesIsAChain) {
  constexpr int n = 600;
  ojson schema = {{"type", "object"}, {"properties", ojson::object()}, {"required", {"p300"}},
                  {"additionalProperties", false}};
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    names.push_back(fmt::format("p{}", i));
    schema["properties"][names.back()] = {{"type", "integer"}};
  }
  JsonSchemaOptions o = schema_test::compact_options();
  o.property_order = JsonSchemaOptions::PropertyOrder::kSchema;
  const Compiled c = compile(schema.dump(), o);
  EXPECT_LT(c.grammar->num_states(), 40u * n);  // 600^2/2 moves would be far more
  std::mt19937 rng(600);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<std::string> keys;
    const unsigned every = 1 + rng() % 40;
    for (int i = 0; i < n; ++i) {
      if (i == 300 || rng() % every == 0) keys.push_back(names[i]);
    }
    EXPECT_TRUE(c.accepts(object_of(keys))) << trial;
    std::vector<std::string> without = keys;
    without.erase(std::find(without.begin(), without.end(), "p300"));
    EXPECT_FALSE(c.accepts(object_of(without))) << trial;
    if (keys.size() < 2) continue;
    const size_t i = rng() % (keys.size() - 1);
    std::vector<std::string> swapped = keys, repeated = keys;
    std::swap(swapped[i], swapped[i + 1]);
    EXPECT_FALSE(c.accepts(object_of(swapped))) << trial;
    repeated.insert(repeated.begin() + static_cast<ptrdiff_t>(i) + 1, keys[i]);
    EXPECT_FALSE(c.accepts(object_of(repeated))) << trial;
  }
  EXPECT_TRUE(c.accepts(object_of({"p0", "p31", "p32", "p33", "p64", "p300", "p599"})));
  EXPECT_TRUE(c.accepts(object_of({"p300"})));
  EXPECT_FALSE(c.accepts(object_of({"p301", "p300"})));
  EXPECT_FALSE(c.accepts("{}"));
}

// patternProperties split the other keys into regions, each matched by the same patterns.
// Twenty prefixes and four suffixes that overlap them (2^24 pattern combinations, about a
// hundred of them non-empty), additionalProperties false: every key's value must meet each
// pattern that matches it, a key no pattern matches is refused.
TEST(JsonSchema, ManyKeyPatternsSplitTheKeysIntoRegions) {
  const char* types[] = {"integer", "string", "boolean"};
  const char* samples[] = {"7", "\"v\"", "true"};
  ojson schema = {{"type", "object"}, {"patternProperties", ojson::object()}, {"additionalProperties", false}};
  for (int i = 0; i < 20; ++i) schema["patternProperties"][fmt::format("^p{}_", i)] = {{"type", types[i % 3]}};
  for (int j = 0; j < 4; ++j) schema["patternProperties"][fmt::format("_s{}$", j)] = {{"type", types[j % 2]}};
  const Compiled c = compile(schema.dump(), schema_test::compact_options());
  int accepted = 0;
  for (int i = -1; i < 20; ++i) {
    for (int j = -1; j < 4; ++j) {
      const std::string key = (i < 0 ? std::string("q_") : fmt::format("p{}_", i)) + "x" + (j < 0 ? "" : fmt::format("_s{}", j));
      for (int t = 0; t < 3; ++t) {
        bool matched = false, ok = true;
        if (i >= 0) matched = true, ok = ok && i % 3 == t;
        if (j >= 0) matched = true, ok = ok && j % 2 == t;
        const std::string d = fmt::format("{{\"{}\":{}}}", key, samples[t]);
        EXPECT_EQ(c.accepts(d), matched && ok) << d;
        accepted += matched && ok;
      }
    }
  }
  EXPECT_GT(accepted, 40);
  // Patterns that all overlap (each a letter the key contains) make 2^12 regions: refused,
  // naming the bound, rather than built.
  ojson letters = {{"type", "object"}, {"patternProperties", ojson::object()}};
  for (char ch = 'a'; ch < 'a' + 12; ++ch) letters["patternProperties"][std::string(1, ch)] = {{"type", "integer"}};
  EXPECT_NE(error_of(letters.dump()).find("more than 256 regions"), std::string::npos) << error_of(letters.dump());
}

// In any order, members whose values are the same schema differ only in their keys: they
// are one member rule whose key is a trie of the names (and of the other keys, when the
// additional properties take the same value). Here 3 member rules instead of 10, and the
// language unchanged: every name with each kind of value, escaped names, unknown keys.
TEST(JsonSchema, MembersWithTheSameValueShareOneKeyAutomaton) {
  const std::string s = R"({"type":"object","properties":{
      "id":{"type":"integer"},"idx":{"type":"integer","description":"an index"},"n":{"type":"integer"},
      "name":{"type":"string"},"nick":{"type":"string","description":"short"},"note":{"type":"string","title":"Note"},
      "ok":{"type":"boolean"},"on":{"type":"boolean"},"off":{"type":"boolean"}},
      "required":["ok"],"additionalProperties":{"type":"integer"}})";
  JsonSchemaOptions o = schema_test::compact_options();
  o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  const Compiled c = compile(s, o);
  size_t members = 0;
  for (const auto& r : c.schema.grammar.rules) members += r.name.rfind("member-", 0) == 0;
  // integers (three names and every other key), strings, and "ok" apart from "on"/"off"
  // (only "ok" meets the required-name obligation).
  EXPECT_EQ(members, 4u);
  const std::pair<const char*, const char*> values[] = {
      {"id", "integer"}, {"idx", "integer"}, {"n", "integer"}, {"name", "string"}, {"nick", "string"},
      {"note", "string"}, {"on", "boolean"}, {"off", "boolean"}, {"zzz", "integer"}, {"i", "integer"}};
  const std::map<std::string, std::string> sample = {{"integer", "12"}, {"string", "\"x\""}, {"boolean", "true"}};
  for (const auto& [key, type] : values) {
    for (const auto& [other, text] : sample) {
      const std::string doc = fmt::format(R"({{"ok":false,"{}":{}}})", key, text);
      EXPECT_EQ(c.accepts(doc), other == type) << doc;
    }
  }
  EXPECT_TRUE(c.accepts(R"({"\u006eick":"y","ok":true,"n\u0061me":"z","idx":-1})"));
  EXPECT_FALSE(c.accepts(R"({"\u006eick":1,"ok":true})"));
  EXPECT_FALSE(c.accepts(R"({"on":true})"));  // "ok" is required
  // In schema order each declared name keeps its place, so its own member rule.
  o.property_order = JsonSchemaOptions::PropertyOrder::kSchema;
  const Compiled ordered = compile(s, o);
  EXPECT_TRUE(ordered.accepts(R"({"id":1,"name":"a","ok":true,"zz":3})"));
  EXPECT_FALSE(ordered.accepts(R"({"name":"a","id":1,"ok":true})"));
}

// Long length bounds are written as blocks of code points and a tail (schema_grammar.cpp):
// every length on both sides of each block boundary and of the bounds must be decided
// exactly as the bounds say, with code points written raw, as UTF-8 and as escapes (an
// escaped surrogate pair too).
TEST(JsonSchema, LongLengthBoundsAreExact) {
  struct Case {
    const char* schema;
    uint32_t lo, hi;  // hi = UINT32_MAX: unbounded
  };
  const Case cases[] = {
      {R"({"type": "string", "maxLength": 1200})", 0, 1200},
      {R"({"type": "string", "minLength": 514, "maxLength": 1040})", 514, 1040},
      {R"({"type": "string", "minLength": 600, "maxLength": 700})", 600, 700},
      {R"({"type": "string", "minLength": 513})", 513, UINT32_MAX},
      {R"({"type": "string", "minLength": 1024, "maxLength": 2047})", 1024, 2047},
      {R"({"type": "string", "maxLength": 1536})", 0, 1536},
      {R"({"type": "string", "minLength": 3, "maxLength": 512})", 3, 512},
  };
  const std::string units[] = {"a", "\\u00e9", "\xc3\xa9", "\\n", "\\t", "\xf0\x9f\x98\x80", "\\ud83d\\ude00"};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.schema);
    const Compiled c = compile(k.schema);
    const uint32_t top = k.hi == UINT32_MAX ? k.lo + 600 : k.hi + 3;
    for (uint32_t n = 0; n <= top; ++n) {
      constexpr uint32_t K = schema::kLengthBlock;
      const bool boundary = n % K <= 1 || n % K == K - 1 || (n + 1 >= k.lo && n <= k.lo + 1) ||
                            (k.hi != UINT32_MAX && n + 1 >= k.hi && n <= k.hi + 1);
      if (!boundary && n % 61 != 0) continue;
      std::string text = "\"";
      for (uint32_t i = 0; i < n; ++i) text += units[(i * 7 + n) % std::size(units)];
      text += "\"";
      const bool valid = n >= k.lo && n <= k.hi;
      EXPECT_EQ(c.accepts(text), valid) << n << " code points";
    }
  }
}

// A string enum is one automaton built from the values' trie; a large one compiles in time
// linear in its bytes (5,000 values took seconds when each value was a product) and keeps
// exactly its values, escapes and non-ASCII included, alone and under allOf.
TEST(JsonSchema, LargeStringEnumsAreExact) {
  std::vector<std::string> values = {"", "Zo\xc3\xab", "\xe6\x9d\xb1\xe4\xba\xac", "a\"quote", "back\\slash", "line\nfeed"};
  for (int i = 0; i < 5000; ++i) values.push_back(fmt::format("{}-{}", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[i % 26], i));
  const std::string list = ojson(values).dump();
  const Compiled plain = compile(R"({"enum": [1, null, )" + list.substr(1, list.size() - 2) + R"(, "A-0"]})");
  const Compiled bounded = compile(R"({"allOf": [{"type": "string", "maxLength": 4}, {"enum": )" + list + "}]}");
  for (size_t i = 0; i < values.size(); i += 37) {
    const std::string doc = ojson(values[i]).dump();
    EXPECT_TRUE(plain.accepts(doc)) << doc;
    EXPECT_FALSE(plain.accepts(ojson(values[i] + "x").dump())) << doc;
    if (i >= 6) {  // ASCII from here
      EXPECT_EQ(bounded.accepts(doc), values[i].size() <= 4) << doc;
    }
  }
  for (const char* doc : {R"("")", R"("Zo\u00eb")", "\"Zo\xc3\xab\"", R"("\u6771\u4eac")", R"("a\"quote")",
                          R"("back\\slash")", R"("line\nfeed")", "1", "null"}) {
    EXPECT_TRUE(plain.accepts(doc)) << doc;
  }
  for (const char* doc : {R"("A-")", R"("A-00")", R"("Zo")", "2", "true", R"("line\\nfeed")"}) {
    EXPECT_FALSE(plain.accepts(doc)) << doc;
  }
  EXPECT_TRUE(bounded.accepts(R"("")"));
  EXPECT_TRUE(bounded.accepts(R"("Zo\u00eb")"));
  EXPECT_FALSE(bounded.accepts(R"("back\\slash")"));
}

// anyOf of many consts (and enums): their word lists are merged at once. Mixed with other
// types, duplicates, and a branch whose strings are not a list (a pattern).
TEST(JsonSchema, AnyOfManyConstsIsTheUnionOfTheirValues) {
  std::vector<std::string> values;
  for (int i = 0; i < 3000; ++i) values.push_back(fmt::format("{}{}", "abcdefghijklmnopqrstuvwxyz"[i * 7 % 26], i));
  ojson branches = ojson::array();
  for (const auto& v : values) branches.push_back({{"const", v}});
  branches.push_back({{"const", values[5]}});
  branches.push_back({{"enum", {values[0], "extra", 7}}});
  branches.push_back({{"type", "null"}});
  const Compiled lists = compile(ojson{{"anyOf", branches}}.dump());
  branches.push_back({{"type", "string"}, {"pattern", "^z+$"}});
  const Compiled mixed = compile(ojson{{"anyOf", branches}}.dump());
  for (const Compiled* c : {&lists, &mixed}) {
    for (size_t i = 0; i < values.size(); i += 29) {
      EXPECT_TRUE(c->accepts(ojson(values[i]).dump())) << values[i];
      EXPECT_FALSE(c->accepts("\"x" + values[i] + "\"")) << values[i];
    }
    for (const char* doc : {R"("extra")", "7", "null", R"("a0")", R"("l2999")"}) EXPECT_TRUE(c->accepts(doc)) << doc;
    for (const char* doc : {R"("extr")", "8", "true", R"("a")", R"("a3000")", R"("")"}) EXPECT_FALSE(c->accepts(doc)) << doc;
  }
  EXPECT_FALSE(lists.accepts(R"("zz")"));
  EXPECT_TRUE(mixed.accepts(R"("zz")"));
}

// An enum whose trie is past the automaton limit while its minimized automaton is not
// compiles: the limit is on the minimal automaton, built without the trie.
TEST(JsonSchema, StringEnumWithATriePastTheLimitCompiles) {
  EngineLimits limits = engine_limits();
  limits.string_automaton_states = 300;
  ScopedEngineLimits scoped(limits);
  std::string list;
  for (int i = 0; i < 200; ++i) list += fmt::format(R"({}"k{}-shared-suffix")", i ? "," : "", i);
  const Compiled c = compile(R"({"enum": [)" + list + "]}");
  for (int i = 0; i < 200; ++i) EXPECT_TRUE(c.accepts(fmt::format(R"("k{}-shared-suffix")", i))) << i;
  EXPECT_FALSE(c.accepts(R"("k200-shared-suffix")"));
  EXPECT_FALSE(c.accepts(R"("k1-shared-suffi")"));
}

// Large lists are looked up as given before they are sorted: the same list again takes
// its set, a reordered, changed or longer one its own.
TEST(JsonSchema, LargeEnumsKeepTheirOwnWordsWhenRepeated) {
  std::vector<std::string> words;
  for (int i = 0; i < 1500; ++i) words.push_back(fmt::format(R"("w{}")", i));
  auto list = [](const std::vector<std::string>& w) {
    std::string out = "[";
    for (const std::string& x : w) out += (out.size() > 1 ? "," : "") + x;
    return out + "]";
  };
  std::vector<std::string> reversed(words.rbegin(), words.rend());
  std::vector<std::string> changed = words;
  changed[7] = R"("other")";
  std::vector<std::string> longer = words;
  longer.push_back(R"("extra")");
  const Compiled c = compile(R"({"type":"object","properties":{)"
                             R"("a":{"enum":)" + list(words) + R"(},"b":{"enum":)" + list(words) +
                             R"(},"c":{"enum":)" + list(reversed) + R"(},"d":{"enum":)" + list(changed) +
                             R"(},"e":{"enum":)" + list(longer) + "}}}");
  for (const char* p : {"a", "b", "c", "e"}) {
    EXPECT_TRUE(c.accepts(fmt::format(R"({{"{}":"w7"}})", p))) << p;
    EXPECT_TRUE(c.accepts(fmt::format(R"({{"{}":"w1499"}})", p))) << p;
    EXPECT_FALSE(c.accepts(fmt::format(R"({{"{}":"other"}})", p))) << p;
  }
  EXPECT_TRUE(c.accepts(R"({"d":"other"})"));
  EXPECT_FALSE(c.accepts(R"({"d":"w7"})"));
  EXPECT_TRUE(c.accepts(R"({"e":"extra"})"));
  for (const char* p : {"a", "b", "c", "d"}) EXPECT_FALSE(c.accepts(fmt::format(R"({{"{}":"extra"}})", p))) << p;
}

TEST(JsonSchema, KeywordsOfOtherDraftsAreNotApplied) {
  // draft-04 has no const, if/then or propertyNames; draft-07 has no prefixItems.
  const Compiled d4 = compile(R"({"$schema":"http://json-schema.org/draft-04/schema#","type":"integer","const":5,
                                   "if":{"minimum":3},"then":{"maximum":4}})");
  EXPECT_TRUE(d4.accepts("7"));
  const Compiled d7 = compile(R"({"$schema":"http://json-schema.org/draft-07/schema#","type":"array",
                                   "prefixItems":[{"type":"string"}],"items":{"type":"integer"}})");
  EXPECT_TRUE(d7.accepts("[1,2]"));
  EXPECT_FALSE(d7.accepts(R"(["a"])"));
  const Compiled d2020 = compile(R"({"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"integer"}})");
  EXPECT_TRUE(d2020.accepts(R"(["a",2])"));
  EXPECT_FALSE(d2020.accepts("[1,2]"));
  // draft-04's boolean exclusiveMaximum.
  const Compiled b = compile(R"({"$schema":"http://json-schema.org/draft-04/schema#","maximum":5,"exclusiveMaximum":true})");
  EXPECT_TRUE(b.accepts("4.99"));
  EXPECT_FALSE(b.accepts("5"));
}

TEST(JsonSchema, UnknownMetaSchemaIsAnErrorUnlessLenient) {
  const std::string s = R"({"$schema":"http://example.com/my-meta","type":"string"})";
  EXPECT_NE(error_of(s).find("/$schema"), std::string::npos) << error_of(s);
  JsonSchemaOptions lenient;
  lenient.lenient = true;
  const Compiled c = compile(s, lenient);
  ASSERT_EQ(c.schema.unenforced.size(), 1u);
  EXPECT_TRUE(c.accepts(R"("x")"));
  EXPECT_FALSE(c.accepts("1"));
}

TEST(JsonSchema, UnknownFormatsWarnAndConstrainNothing) {
  const Compiled c = compile(R"({"type":"string","format":"country-code"})");
  ASSERT_EQ(c.schema.warnings.size(), 1u);
  EXPECT_NE(c.schema.warnings[0].find("/format"), std::string::npos);
  EXPECT_TRUE(c.accepts(R"("anything")"));
  const Compiled known = compile(R"({"type":"string","format":"json-pointer"})");
  EXPECT_TRUE(known.accepts(R"("/a~1b/0")"));
  EXPECT_FALSE(known.accepts(R"("a/b")"));
  EXPECT_FALSE(known.accepts(R"("/~2")"));
}

TEST(JsonSchema, ErrorsNameTheJsonPointer) {
  EXPECT_EQ(error_of(R"({"properties":{"a":{"minLength":-5}}})").rfind("/properties/a/minLength", 0), 0u)
      << error_of(R"({"properties":{"a":{"minLength":-5}}})");
  EXPECT_NE(error_of(R"({"$ref":"#/$defs/missing"})").find("/$ref"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"array","uniqueItems":true})").find("/uniqueItems"), std::string::npos);
  EXPECT_NE(error_of(R"({"minLength":-1})").find("/minLength"), std::string::npos);
}

TEST(JsonSchema, WhitespaceOptions) {
  const std::string s = R"({"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}},"required":["a"]})";
  JsonSchemaOptions compact;
  compact.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  EXPECT_TRUE(compile(s, compact).accepts(R"({"a":[1,2]})"));
  EXPECT_FALSE(compile(s, compact).accepts(R"({"a": [1, 2]})"));
  JsonSchemaOptions flexible;
  flexible.max_whitespace = 4;
  EXPECT_TRUE(compile(s, flexible).accepts("{ \"a\" :\n[1 ,\t2] }"));
  EXPECT_FALSE(compile(s, flexible).accepts("{      \"a\":[1]}"));  // a run of 6 > 4
  JsonSchemaOptions pretty;
  pretty.whitespace = JsonSchemaOptions::Whitespace::kPretty;
  EXPECT_TRUE(compile(s, pretty).accepts("{\n  \"a\": [\n    1,\n    2\n  ]\n}"));
  EXPECT_FALSE(compile(s, pretty).accepts(R"({"a":[1,2]})"));
  // Values of unbounded depth: indented to level 16, written without whitespace below.
  const Compiled any = compile("{}", pretty);
  EXPECT_TRUE(any.accepts("[\n  {\n    \"k\": [\n      1\n    ]\n  }\n]"));
  std::string deep, close;
  for (uint32_t d = 0; d < 16; ++d) {
    deep += "[\n" + std::string(2 * (d + 1), ' ');
    close = "\n" + std::string(2 * d, ' ') + "]" + close;
  }
  EXPECT_TRUE(any.accepts(deep + "[[1]]" + close)) << deep + "[[1]]" + close;
  EXPECT_FALSE(any.accepts(deep + "[\n[1]]" + close));
}

TEST(JsonSchema, PropertyOrderAndForbiddenAdditionalProperties) {
  const std::string s = R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}})";
  JsonSchemaOptions o;
  o.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  const Compiled ordered = compile(s, o);
  EXPECT_TRUE(ordered.accepts(R"({"a":1,"b":2,"c":"x"})"));
  EXPECT_FALSE(ordered.accepts(R"({"b":2,"a":1})"));
  o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  EXPECT_TRUE(compile(s, o).accepts(R"({"b":2,"a":1})"));
  o.forbid_additional_properties = true;
  EXPECT_FALSE(compile(s, o).accepts(R"({"a":1,"c":"x"})"));
  EXPECT_TRUE(compile(s, o).accepts(R"({"b":1})"));
}

TEST(JsonSchema, AlgebraNotIfThenElseAndExactOneOf) {
  JsonSchemaOptions o;
  o.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  const Compiled n = compile(R"({"not":{"type":"string","minLength":2}})", o);
  EXPECT_TRUE(n.accepts(R"("a")"));
  EXPECT_TRUE(n.accepts("3"));
  EXPECT_FALSE(n.accepts(R"("ab")"));
  const Compiled ite = compile(R"({"type":"integer","if":{"minimum":10},"then":{"multipleOf":5},"else":{"maximum":3}})", o);
  EXPECT_TRUE(ite.accepts("15"));
  EXPECT_FALSE(ite.accepts("12"));
  EXPECT_TRUE(ite.accepts("2"));
  EXPECT_FALSE(ite.accepts("7"));
  const Compiled one = compile(R"({"oneOf":[{"type":"integer","multipleOf":2},{"type":"integer","multipleOf":3}]})", o);
  EXPECT_TRUE(one.accepts("4"));
  EXPECT_TRUE(one.accepts("9"));
  EXPECT_FALSE(one.accepts("6"));  // both branches: not exactly one
}

}  // namespace
}  // namespace lockstep
