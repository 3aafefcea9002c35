// The fast mask equals the brute-force mask (each token's bytes fed to a fresh parser in
// the same state), bit for bit, at every step of random legal walks with random rollbacks,
// on every real vocabulary and every llama.cpp grammar.
#include <algorithm>
#include <random>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "automata/mask/shared_caches.h"
#include "automata/matcher.h"
#include "runtime/tokenizer.h"
#include "schemas/json_schema.h"
#include "schemas/string_lengths.h"
#include "tests/automata/brute_force_walks.h"
#include "tests/test_data.h"

namespace lockstep {
namespace {

using namespace test_walks;

class MaskProperty : public testing::TestWithParam<std::string> {};

TEST_P(MaskProperty, FastMaskEqualsBruteForceAlongRandomWalks) {
  const auto tok = load_tokenizer(test_data::shared("vocab/" + GetParam()).string());
  const auto vocab = tok->shared_vocabulary();
  std::mt19937 rng(12345);
  size_t masks = 0;
  for (const auto& path : test_data::llama_cpp_grammar_files()) {
    SCOPED_TRACE(path.filename().string());
    masks += check_random_walk(GrammarAutomaton::compile(parse_gbnf(test_data::read_file(path))), vocab, rng, 24);
  }
  RecordProperty("masks", static_cast<int>(masks));
  std::printf("[ property ] %s: %zu masks equal to brute force\n", GetParam().c_str(), masks);
  EXPECT_GT(masks, 100u);
}

// Schema grammars: automaton-only rules (keys other than the named ones, patterns,
// formats, length bounds) whose masks come from shared walk segments and process-wide
// caches, in two grammars that share automata.
TEST(MaskPropertySchemas, FastMaskEqualsBruteForceOnLlama3) {
  const auto tok = llama3_tokenizer();
  const auto vocab = tok->shared_vocabulary();
  std::mt19937 rng(777);
  const char* schemas[] = {
      R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},"stack":{"type":"array","items":{"type":"string","pattern":"^[a-z]+(-[a-z]+)*$"}}},"required":["stack"]})",
      R"({"type":"object","properties":{"when":{"type":"string","format":"date-time"},"mail":{"type":"string","format":"email"},"n":{"type":"integer","minimum":-5,"maximum":300}},"additionalProperties":{"type":"string","minLength":2,"maxLength":6}})",
      R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},"kind":{"enum":["a","bb","ccc"]}},"required":["kind"]})",
      // The member shapes of the first schemas under other names: their states' masks come
      // from the process-wide cache of transition networks.
      R"({"type":"object","properties":{"title":{"type":"string","maxLength":12},"sort":{"enum":["a","bb","ccc"]}},"required":["sort"]})",
      // Members that differ only in their keys share one key automaton (a trie of the
      // names, with the other keys where additional properties take the same value).
      R"({"type":"object","properties":{"id":{"type":"integer"},"index":{"type":"integer","description":"i"},"name":{"type":"string"},"nick":{"type":"string","title":"n"},"ok":{"type":"boolean"},"on":{"type":"boolean"}},"additionalProperties":{"type":"integer"}})",
  };
  size_t masks = 0;
  for (const char* text : schemas) {
    SCOPED_TRACE(text);
    JsonSchemaOptions o;
    o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
    o.max_whitespace = 2;
    const auto g = schema_automaton(text, o);
    for (int walk = 0; walk < 3; ++walk) masks += check_random_walk(g, vocab, rng, 12);
  }
  std::printf("[ property ] schemas on llama3: %zu masks equal to brute force\n", masks);
  EXPECT_GT(masks, 60u);
}

// An enum of a few hundred values (shared prefixes and suffixes, non-ASCII, an astral
// character, '"', '\\' and a control character, which JSON escapes) used under allOf at two
// places: maxLength 64 keeps every value (the enum's own automaton), maxLength 6 drops some
// (a smaller word list).
TEST(MaskPropertySchemas, LargeEnumUnderAllOfEqualsBruteForceOnLlama3) {
  const auto tok = llama3_tokenizer();
  const auto vocab = tok->shared_vocabulary();
  std::mt19937 rng(1616);
  nlohmann::ordered_json values = nlohmann::ordered_json::array();
  const char* stems[] = {"alpha", "beta", "Zo\u00eb", "na\u00efve-", "\U0001F600x", "q\"t", "back\\", "ctl\x01", "", "\u65e5\u672c"};
  for (int i = 0; i < 300; ++i) {
    std::string v = stems[i % 10];
    v += std::to_string(i / 10);
    if (i % 3 == 0) v += "_end";
    values.push_back(v);
  }
  values.push_back("");
  const nlohmann::ordered_json schema = {
      {"type", "object"},
      {"properties",
       {{"long", {{"allOf", {{{"type", "string"}, {"maxLength", 64}}, {{"enum", values}}}}}},
        {"short", {{"allOf", {{{"enum", values}}, {{"maxLength", 6}}}}}}}},
      {"required", {"long", "short"}}};
  JsonSchemaOptions o;
  o.max_whitespace = 1;
  const auto g = GrammarAutomaton::compile(compile_json_schema(schema, o).grammar);
  auto cache = std::make_shared<TokenMaskCache>(g, vocab);
  size_t masks = 0;
  for (int walk = 0; walk < 4; ++walk) masks += check_random_walk(g, vocab, rng, 16, cache);
  std::printf("[ property ] a 301-value enum under allOf on llama3: %zu masks equal to brute force\n", masks);
  EXPECT_GT(masks, 30u);
}

// Automaton frames (whitespace, a number, a string body) that can complete inside a member
// rule whose next step may read the same bytes (a digit after a number: the walk turns to
// the Earley parser there) or other bytes only (a quote after whitespace: the walk steps
// the frame alone), and subtrees of the vocabulary left at the first byte the path cannot
// read. The members of an anyOf of objects, as a schema compiles them (rules, never
// inlined), in the spaced form; random walks on Llama 3, each started unchecked at a point
// of interest, without and with the whitespace mask at hand.
TEST(MaskPropertySchemas, FramesThatCompleteBeforeTheirCallerEqualBruteForceOnLlama3) {
  const auto tok = llama3_tokenizer();
  const auto vocab = tok->shared_vocabulary();
  std::mt19937 rng(2026);
  JsonSchemaOptions o;
  o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  o.max_whitespace = 3;
  const auto g = schema_automaton(R"({"anyOf":[
    {"type":"object","properties":{"kind":{"const":"v_1"},"n":{"type":"integer"},"x":{"type":"number"}},"required":["kind","n","x"],"additionalProperties":false},
    {"type":"object","properties":{"kind":{"const":"v_2"},"n":{"type":"string"},"y":{"enum":[1,12,"a b"]}},"required":["kind","n"],"additionalProperties":false},
    {"type":"object","properties":{"kind":{"const":"w"},"n":{"type":"array","items":{"type":"integer"}}},"required":["kind"],"additionalProperties":false}]})", o);
  size_t masks = 0;
  for (const bool whitespace_first : {false, true}) {
    // With the whitespace mask computed first, the member states before whitespace are
    // composed from it (the suffixes its tokens leave, read on from after the whitespace).
    auto cache = std::make_shared<TokenMaskCache>(g, vocab);
    if (whitespace_first) cache->get(g->rule_start(static_cast<uint32_t>(g->grammar().find_rule("ws"))));
    for (const char* start : {"{", "{\"kind\"", "{\"kind\":", "{\"kind\": ", "{\"n\": 12", "{\"n\": 12 ", "{\"n\": [1", "{\"x\": 1.5", "{\"y\": 1", "{\"y\": \"a"}) {
      SCOPED_TRACE(start);
      masks += check_random_walk(g, vocab, rng, 10, cache, true, tok->encode_continuation(start));
    }
  }
  std::printf("[ property ] frames completing before their caller: %zu masks equal to brute force\n", masks);
  EXPECT_GT(masks, 100u);
}

// Whitespace before a value is followed by the first bytes of the values a schema has, so
// its FOLLOW set differs from schema to schema; JSON Schema grammars widen it to one class
// (Grammar::follow_classes), so a second schema whose values differ finds the whitespace
// mask computed by the first; and masks stay equal to brute force. A vocabulary loaded here
// has an id of its own, so no other test's masks are found.
TEST(MaskPropertySchemas, WhitespaceMasksAreSharedAcrossSchemasWhoseValuesDiffer) {
  const auto tok = load_tokenizer(test_data::shared("vocab/llama2/tokenizer.bin").string());
  const auto vocab = tok->shared_vocabulary();
  auto compile = [](const char* text) {
    return GrammarAutomaton::compile(compile_json_schema(nlohmann::ordered_json::parse(text)).grammar);
  };
  const auto numbers = compile(R"({"type":"object","properties":{"n":{"type":"integer"}}})");
  const auto literals = compile(R"({"type":"array","items":{"enum":[true,null,"x"]}})");
  auto ws_start = [](const GrammarAutomaton& g) { return g.rule_start(static_cast<uint32_t>(g.grammar().find_rule("ws"))); };
  TokenMaskCache first(numbers, vocab);
  first.get(ws_start(*numbers));
  EXPECT_EQ(first.stats().computations, 1u);
  TokenMaskCache second(literals, vocab);
  second.get(ws_start(*literals));
  EXPECT_EQ(second.stats().computations, 0u);
  EXPECT_EQ(second.stats().shared, 1u);
  std::mt19937 rng(99);
  size_t masks = 0;
  for (const auto& g : {numbers, literals}) {
    for (int walk = 0; walk < 3; ++walk) masks += check_random_walk(g, vocab, rng, 12);
  }
  std::printf("[ property ] widened whitespace FOLLOW: %zu masks equal to brute force\n", masks);
  EXPECT_GT(masks, 30u);
}

// Long length bounds are blocks of kLengthBlock (512) code points and a tail
// (schema_grammar.cpp): walks that cross a block boundary, where tokens straddle two
// blocks. Each walk starts unchecked 500 code points in (a run of "a" tokens), then checks
// every mask for 40 steps of random tokens. Two walks share one cache, so the second also
// reads configuration masks the first one stored.
TEST(MaskPropertySchemas, LongStringBlocksEqualBruteForceOnLlama3) {
  const auto tok = llama3_tokenizer();
  const auto vocab = tok->shared_vocabulary();
  std::mt19937 rng(4242);
  JsonSchemaOptions o;
  o.max_whitespace = 2;
  static_assert(schema::kLengthBlock == 512);
  const auto g = schema_automaton(R"({"type":"string","minLength":530,"maxLength":700})", o);
  auto cache = std::make_shared<TokenMaskCache>(g, vocab);
  const std::vector<int32_t> start = tok->encode_continuation("\"" + std::string(500, 'a'));
  size_t masks = 0;
  for (int walk = 0; walk < 2; ++walk) masks += check_random_walk(g, vocab, rng, 40, cache, false, start);
  std::printf("[ property ] long strings on llama3: %zu masks equal to brute force\n", masks);
  EXPECT_GT(masks, 60u);
}

// Inside constants and names (JSON string automata), a state that reads one or two bytes
// and few tokens past them is walked by the trie walk, not the table walk
// (TokenMaskCache::Impl::compute_shared): an anyOf of objects told apart by a constant, with
// keys and a constant that share prefixes and underscores, a constant with an escaped quote
// and backslash, walked from inside the constants; every mask checked against brute force,
// and such states were walked directly.
TEST(MaskPropertySchemas, NarrowStatesInsideConstantsEqualBruteForceOnLlama3) {
  const auto tok = llama3_tokenizer();
  const auto vocab = tok->shared_vocabulary();
  std::mt19937 rng(909);
  std::string variants;
  for (int i = 0; i < 6; ++i) {
    variants += fmt::format(R"({}{{"type":"object","properties":{{"kind":{{"const":"variant_{}"}},"al_{}":{{"type":"integer"}},)"
                            R"("q":{{"const":"a\"b\\c_{}"}}}},"required":["kind","q"],"additionalProperties":false}})",
                            i ? "," : "", i * 7, i, i);
  }
  JsonSchemaOptions o;
  o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  o.max_whitespace = 2;
  const auto g = schema_automaton(R"({"anyOf":[)" + variants + "]}", o);
  auto cache = std::make_shared<TokenMaskCache>(g, vocab);
  size_t masks = 0;
  for (const char* prefix : {R"({"kind": "varia)", R"({"kind":"variant_)", R"({"q": "a\"b)", R"({"al_3": 1, "q":"a)"}) {
    SCOPED_TRACE(prefix);
    const std::vector<int32_t> start = tok->encode_continuation(prefix);
    for (int walk = 0; walk < 2; ++walk) masks += check_random_walk(g, vocab, rng, 10, cache, false, start);
  }
  std::printf("[ property ] constants on llama3: %zu masks equal to brute force, %zu states walked directly\n", masks,
              cache->stats().direct);
  EXPECT_GT(masks, 40u);
  EXPECT_GT(cache->stats().direct, 0u);
}

// Near a block's end, where the string's rule goes on into another block or the tail, masks
// are continued through that rule (TokenMaskCache::continued): walks crossing the ends of
// blocks followed by a block or a tail (maxLength 1,100), by the unbounded tail after two
// forced blocks (minLength 1,030), and the last block before a short tail (maxLength 1,030),
// each from 500 or 1,020 code points in, every mask checked against brute force; and the
// continued masks were taken.
TEST(MaskPropertySchemas, ContinuedMasksAtBlockEndsEqualBruteForceOnLlama3) {
  const auto tok = llama3_tokenizer();
  const auto vocab = tok->shared_vocabulary();
  std::mt19937 rng(777);
  JsonSchemaOptions o;
  o.max_whitespace = 2;
  static_assert(schema::kLengthBlock == 512);
  size_t masks = 0;
  for (const char* schema : {R"({"type":"string","maxLength":1100})", R"({"type":"string","minLength":1030})",
                             R"({"type":"string","maxLength":1030})"}) {
    SCOPED_TRACE(schema);
    const auto g = schema_automaton(schema, o);
    auto cache = std::make_shared<TokenMaskCache>(g, vocab);
    for (const size_t in : {size_t{500}, size_t{1020}}) {
      const std::vector<int32_t> start = tok->encode_continuation("\"" + std::string(in, 'a'));
      for (int walk = 0; walk < 2; ++walk) masks += check_random_walk(g, vocab, rng, 20, cache, false, start);
    }
    EXPECT_GT(cache->stats().continued, 0u);
  }
  std::printf("[ property ] continued masks at block ends on llama3: %zu masks equal to brute force\n", masks);
  EXPECT_GT(masks, 160u);
}

// A walk writing `text`: each token drawn among the allowed ones that spell a prefix of what
// is left (so the text is cut in many ways), every mask checked against brute force. The
// number of masks checked; the text must be written whole.
size_t check_spelled_walk(const std::shared_ptr<const GrammarAutomaton>& g, const std::shared_ptr<const Vocabulary>& vocab,
                          std::mt19937& rng, const std::string& text, const std::shared_ptr<TokenMaskCache>& cache) {
  EarleyMatcher m(cache);
  std::vector<uint32_t> mask(vocab->bitmask_words());
  size_t at = 0, masks = 0;
  while (at < text.size()) {
    m.fill_next_token_bitmask(mask);
    EXPECT_EQ(mask, brute_force_mask(*g, *vocab, text.substr(0, at), false)) << "after " << text.substr(0, at);
    if (testing::Test::HasFailure()) return masks;
    ++masks;
    std::vector<int32_t> spelling;
    for (size_t id = 0; id < vocab->size(); ++id) {
      const auto i = static_cast<int32_t>(id);
      const std::string_view bytes = vocab->token_bytes(i);
      if (((mask[id / 32] >> (id % 32)) & 1) && !vocab->is_eog(i) && !bytes.empty() &&
          std::string_view(text).substr(at).starts_with(bytes)) {
        spelling.push_back(i);
      }
    }
    if (spelling.empty()) {
      ADD_FAILURE() << "no allowed token goes on with " << text.substr(at);
      return masks;
    }
    const int32_t pick = spelling[rng() % spelling.size()];
    EXPECT_TRUE(m.accept_token(pick));
    at += vocab->token_bytes(pick).size();
  }
  m.fill_next_token_bitmask(mask);
  EXPECT_EQ(mask, brute_force_mask(*g, *vocab, text, m.is_terminated()));
  return masks + 1;
}

// Escapes in JSON strings, surrogate pairs above all (read by shared rules the string
// automata call, automata/json_escapes.h): tokens that enter the escape, cross it or leave
// it, and masks inside it, on length-bounded and pattern strings and on property names.
void check_surrogate_pair_masks(const std::shared_ptr<const Vocabulary>& vocab, std::mt19937& rng, int spellings) {
  struct Case {
    const char* schema;
    const char* text;  // valid, with pairs
  };
  const Case cases[] = {
      {R"({"type":"object","properties":{"s":{"type":"string","maxLength":3},"p":{"type":"string","pattern":"^[\\u{1F600}-\\u{1F64F}a-z]{1,4}$"}},"required":["s","p"],"additionalProperties":false})",
       R"({"s":"\ud83d\ude00a\uD83D\uDE01","p":"\ud83d\ude4fz\uD83D\uDE00"})"},
      {R"({"type":"array","items":{"type":"string","pattern":"^.$"},"maxItems":3})",
       R"(["\ud83d\ude00","\uDBFF\uDFFF","\u00e9"])"},
      {R"({"type":"string","minLength":2,"maxLength":5})", R"("\ud800\udc00\ud83d\ude00x\uD83D\uDE00")"},
      // Automata alike but for the pair rule they call: masks after "\uD" must not be shared.
      {R"({"type":"string","pattern":"^[\\u{1F600}-\\u{1F64F}]$"})", R"("\ud83d\ude00")"},
      {R"({"type":"string","pattern":"^[\\u{10000}-\\u{103FF}]$"})", R"("\ud800\udc00")"},
      // Property names spelled with escapes: each trie position calls an escape rule per
      // target (the name's next character, or any other key).
      {R"({"type":"object","properties":{"api":{"type":"integer"},"kind":{"type":"string","maxLength":2}},"additionalProperties":{"type":"boolean"}})",
       R"({"\u0061pi":1,"k\u0069nd":"\u00e9\u0041","ap\u0069x":true,"\ud83d\ude00":false,"\/\n":true})"},
      // A long length counter: every \u spelling read by escape rules (escapes_by_rule).
      {R"({"type":"string","minLength":22,"maxLength":40})", R"("a\u0062c\u00E9\ud83d\ude00defghijklmnopqrstuvw")"},
  };
  size_t masks = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.schema);
    JsonSchemaOptions o;
    o.whitespace = JsonSchemaOptions::Whitespace::kCompact;
    const auto g = schema_automaton(c.schema, o);
    auto cache = std::make_shared<TokenMaskCache>(g, vocab);
    for (int walk = 0; walk < spellings; ++walk) masks += check_spelled_walk(g, vocab, rng, c.text, cache);
    for (int walk = 0; walk < 3; ++walk) masks += check_random_walk(g, vocab, rng, 12);
    if (testing::Test::HasFailure()) return;
  }
  std::printf("[ property ] surrogate pairs: %zu masks equal to brute force\n", masks);
  EXPECT_GT(masks, 40u);
}

class SurrogatePairMasks : public testing::TestWithParam<std::string> {};

TEST_P(SurrogatePairMasks, FastMaskEqualsBruteForce) {
  const auto tok = load_tokenizer(test_data::shared("vocab/" + GetParam()).string());
  std::mt19937 rng(99);
  check_surrogate_pair_masks(tok->shared_vocabulary(), rng, 4);
}

// Tokens made to cut pairs everywhere: inside the high or the low half, across the two, and
// with the characters around them.
TEST(SurrogatePairMasks, FastMaskEqualsBruteForceOnPairPieces) {
  std::vector<std::string> tokens = {"</s>", "\"", "{", "}", ":", ",", "[", "]", "\"s\":\"", "\"p\":\"", "a", "z", "x",
                                     "\\", "\\u", "\\uD", "\\ud8", "\\ud83d", "\\ud83d\\", "\\ud83d\\ude00",
                                     "\\ud83d\\ude00\"", "x\\ud83d\\ude00y", "\\ude00", "\\uDE4F", "8", "83", "83d",
                                     "83d\\u", "3d\\", "d", "D", "de", "00", "0", "4f", "4F\"", "d83d", "D83D\\uDE01",
                                     "\\u00e9", "\\uD7FF", "\\ud7ff\\ud83d", "\\ud83d\\ude00\\ud83d\\ude00", "\\n",
                                     "\\udbff\\udfff", "ff", "\\udfff", "db", "\\udc00", "800", "\\ud800\\udc00"};
  for (const char c : std::string("0123456789abcdefABCDEFghijklmnopqrstuvwx/")) tokens.emplace_back(1, c);  // any text can be spelled
  std::vector<TokenKind> kinds(tokens.size(), TokenKind::kText);
  const auto vocab = std::make_shared<Vocabulary>(tokens, kinds, std::vector<int32_t>{0});
  std::mt19937 rng(5);
  check_surrogate_pair_masks(vocab, rng, 12);
}

// Short tokens (at most mask::kShortTokenBytes bytes) are walked by segments keyed by a
// signature cut at that depth, so positions of length bounds that agree for that many bytes
// share them; longer tokens are walked apart, under the full signature. A vocabulary of runs
// of 1 to 20 letters, and strings of every bound from 13 to 20 in one grammar (positions
// whose automata agree up to, just past, or far past the cut): every mask equals brute
// force, where a cut one byte too shallow would let a run of the cut's length through.
TEST(MaskPropertySchemas, CutSignaturesKeepLengthBoundsExact) {
  static_assert(mask::kShortTokenBytes == 16);
  std::vector<std::string> tokens = {"</s>", "\"", "{", "}", ":", ",", "\",\"", "\"}", ":\"", "\\", "n"};
  for (int n = 1; n <= 20; ++n) {
    tokens.push_back(std::string(static_cast<size_t>(n), 'a'));
    tokens.push_back(std::string(static_cast<size_t>(n - 1), 'b') + "\"");
  }
  for (int n = 13; n <= 20; ++n) tokens.push_back(fmt::format("\"p{}\":\"", n));
  for (const char c : std::string("p0123456789")) tokens.emplace_back(1, c);
  std::vector<TokenKind> kinds(tokens.size(), TokenKind::kText);
  const auto vocab = std::make_shared<Vocabulary>(tokens, kinds, std::vector<int32_t>{0});
  nlohmann::ordered_json schema = {{"type", "object"}, {"additionalProperties", false}};
  std::string text = "{";
  for (int n = 13; n <= 20; ++n) {
    schema["properties"][fmt::format("p{}", n)] = {{"type", "string"}, {"maxLength", n}};
    text += fmt::format("{}\"p{}\":\"{}{}\"", n == 13 ? "" : ",", n, std::string(static_cast<size_t>(n - 2), 'a'), "bb");
  }
  text += "}";
  JsonSchemaOptions o;
  o.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  const auto g = GrammarAutomaton::compile(compile_json_schema(schema, o).grammar);
  auto cache = std::make_shared<TokenMaskCache>(g, vocab);
  std::mt19937 rng(16);
  size_t masks = 0;
  for (int walk = 0; walk < 6; ++walk) masks += check_spelled_walk(g, vocab, rng, text, cache);
  for (int walk = 0; walk < 20; ++walk) masks += check_random_walk(g, vocab, rng, 30, cache, false);
  std::printf("[ property ] cut signatures: %zu masks equal to brute force\n", masks);
  EXPECT_GT(masks, 300u);
}

// The loop of an unbounded string body and the positions of a bounded one far from its
// bound read alike for kShortTokenBytes bytes, so the short tokens of a loop's wide segments
// (at least 512 tokens, mostly accepted) are stored under a depth-bounded signature that the
// bounded positions look up. A vocabulary whose 'a' segment is wide (runs of 1 to 20 letters,
// 625 three-letter words, the same behind "é"); first every property unbounded (its loop
// walked), then bounds 13 to 20 read to their end in a new grammar: every mask equals brute
// force. The bounded positions far from their bound take the 'a' segment the loop stored
// (with its uncertain tokens, "a\",\"" among them: stored without those, masks differ);
// those near it must not (the shapes they reach are not the loop's).
TEST(MaskPropertySchemas, BoundedStringsShareTheLoopsSegmentsExactly) {
  static_assert(mask::kShortTokenBytes == 16);
  std::vector<std::string> tokens = {"</s>", "\"", "{", "}", ":", ",", "\",\"", "\"}", ":\"", "\\", "n", "\\n", "\\u00e9"};
  for (int n = 1; n <= 20; ++n) {
    tokens.push_back(std::string(static_cast<size_t>(n), 'a'));
    tokens.push_back(std::string(static_cast<size_t>(n - 1), 'b') + "\"");
    tokens.push_back("\xc3\xa9" + std::string(static_cast<size_t>(n - 1), 'a'));  // é then a run
  }
  for (char x = 'b'; x <= 'z'; ++x) {
    for (char y = 'b'; y <= 'z'; ++y) tokens.push_back(std::string{'a', x, y});
  }
  tokens.push_back("a\",\"");
  for (int n = 13; n <= 20; ++n) tokens.push_back(fmt::format("\"p{}\":\"", n));
  for (const char c : std::string("p0123456789")) tokens.emplace_back(1, c);
  std::vector<TokenKind> kinds(tokens.size(), TokenKind::kText);
  const auto vocab = std::make_shared<Vocabulary>(tokens, kinds, std::vector<int32_t>{0});
  JsonSchemaOptions o;
  o.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  std::mt19937 rng(17);
  size_t masks = 0;
  for (const bool bounded : {false, true}) {
    SCOPED_TRACE(bounded ? "bounded" : "unbounded");
    nlohmann::ordered_json schema = {{"type", "object"}, {"additionalProperties", false}};
    std::string text = "{";
    for (int n = 13; n <= 20; ++n) {
      schema["properties"][fmt::format("p{}", n)] = {{"type", "string"}};
      if (bounded) schema["properties"][fmt::format("p{}", n)]["maxLength"] = n;
      const std::string body = bounded ? "\u00e9" + std::string(static_cast<size_t>(n - 3), 'a') + "bb"
                                       : std::string(40, 'a') + "\\n\xc3\xa9" + std::string(30, 'a');
      text += fmt::format("{}\"p{}\":\"{}\"", n == 13 ? "" : ",", n, body);
    }
    text += "}";
    const auto g = GrammarAutomaton::compile(compile_json_schema(schema, o).grammar);
    auto cache = std::make_shared<TokenMaskCache>(g, vocab);
    for (int walk = 0; walk < 3; ++walk) masks += check_spelled_walk(g, vocab, rng, text, cache);
    if (bounded) {
      for (int walk = 0; walk < 10; ++walk) masks += check_random_walk(g, vocab, rng, 30, cache, false);
    }
  }
  std::printf("[ property ] bounded strings after the loop: %zu masks equal to brute force\n", masks);
  EXPECT_GT(masks, 300u);
}

// An automaton with no cycle (a pattern of counted repeats, a bounded string) is signed
// bottom-up, each state once, with no bound on its size. Two grammars whose patterns differ
// in their first letter only reach, after it, the same automaton of 2,201 states (past
// the 2,048 a numbered signature covers): the second grammar takes that state's mask from
// the first, and masks equal brute force along walks of both.
TEST(MaskPropertySchemas, LargeAcyclicAutomataShareMasksAcrossGrammars) {
  const std::vector<std::string> tokens = {"</s>", "\"", "x", "y", "a", "b", "c", "d", "ab", "cd", "abcd",
                                           "cdab", "b\"", "d\"", "\"x", "\"y", "xab", "ycd"};
  const std::vector<TokenKind> kinds(tokens.size(), TokenKind::kText);
  const auto vocab = std::make_shared<Vocabulary>(tokens, kinds, std::vector<int32_t>{0});
  auto compile = [](char first) {
    const std::string pattern = fmt::format("^{}(ab|cd){{0,1100}}$", first);
    return GrammarAutomaton::compile(compile_json_schema(nlohmann::ordered_json{{"type", "string"}, {"pattern", pattern}}).grammar);
  };
  const auto gx = compile('x'), gy = compile('y');
  auto cx = std::make_shared<TokenMaskCache>(gx, vocab);
  auto cy = std::make_shared<TokenMaskCache>(gy, vocab);
  // The mask after the first letter, and what computing it cost the cache (walks, masks
  // taken from the process-wide cache).
  auto mask_after = [&](const std::shared_ptr<TokenMaskCache>& cache, int32_t id, size_t& walks, size_t& shared) {
    EarleyMatcher m(cache);
    EXPECT_TRUE(m.accept_token(id));
    const TokenMaskCache::Stats before = cache->stats();
    std::vector<uint32_t> mask(vocab->bitmask_words());
    m.fill_next_token_bitmask(mask);
    walks = cache->stats().computations - before.computations;
    shared = cache->stats().shared - before.shared;
    return mask;
  };
  // Besides the pattern's state, the matcher asks for the state of the grammar rule that
  // calls the string (its own in each grammar).
  size_t walks_x = 0, shared_x = 0, walks_y = 0, shared_y = 0;
  const std::vector<uint32_t> after_x = mask_after(cx, 14, walks_x, shared_x);  // "x
  const std::vector<uint32_t> after_y = mask_after(cy, 15, walks_y, shared_y);  // "y
  EXPECT_EQ(shared_x, 0u);
  EXPECT_EQ(shared_y, 1u);
  EXPECT_EQ(walks_y + 1, walks_x);
  EXPECT_EQ(after_x, after_y);
  std::mt19937 rng(2201);
  size_t masks = 0;
  for (const auto& [g, cache, first] : {std::tuple{gx, cx, 'x'}, std::tuple{gy, cy, 'y'}}) {
    for (int walk = 0; walk < 4; ++walk) {
      std::string text = fmt::format("\"{}", first);
      for (int i = 0; i < 30; ++i) text += rng() % 2 ? "ab" : "cd";
      masks += check_spelled_walk(g, vocab, rng, text + "\"", cache);
    }
    masks += check_random_walk(g, vocab, rng, 40, cache, false);
  }
  std::printf("[ property ] large acyclic automata: %zu masks equal to brute force\n", masks);
  EXPECT_GT(masks, 100u);
}

// A state that no signature covers (a counted repeat too long to number, with a loop after
// it) is keyed by its position, its context and a digest of its automaton. The key held the
// whole automaton, every state and edge (about 100 KB here, megabytes for a pattern of
// counted words under a length bound): copied and hashed for each mask, and counted against
// the process-wide cache's budget, which it then emptied every few masks.
TEST(MaskPropertySchemas, StatesWithoutSignatureHaveShortKeys) {
  const std::vector<std::string> tokens = {"</s>", "\"", "a", "b", "c", "ab", "ba", "cc", "b\"", "c\"", "\"a"};
  const std::vector<TokenKind> kinds(tokens.size(), TokenKind::kText);
  const auto vocab = std::make_shared<Vocabulary>(tokens, kinds, std::vector<int32_t>{0});
  const auto g = GrammarAutomaton::compile(
      compile_json_schema(nlohmann::ordered_json{{"type", "string"}, {"pattern", "^[ab]{0,3000}c*$"}}).grammar);
  auto cache = std::make_shared<TokenMaskCache>(g, vocab);
  std::mt19937 rng(3000);
  const size_t before = mask::SharedStateMasks::instance().used();
  std::string text = "\"";
  for (int i = 0; i < 40; ++i) text += rng() % 2 ? "ab" : "ba";
  const size_t masks = check_spelled_walk(g, vocab, rng, text + "cc\"", cache);
  const size_t used = mask::SharedStateMasks::instance().used() - before;
  EXPECT_GT(masks, 40u);
  EXPECT_GT(cache->stats().computations, 40u);  // each position its own mask, none shared
  EXPECT_LT(used, masks * 1024) << used << " bytes for " << masks << " masks";
}

INSTANTIATE_TEST_SUITE_P(RealVocabularies, SurrogatePairMasks,
                         testing::Values("llama3-hf/tokenizer.json", "llama2/tokenizer.bin"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param.substr(0, info.param.find('/'));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

INSTANTIATE_TEST_SUITE_P(RealVocabularies, MaskProperty,
                         testing::Values("llama2/tokenizer.bin", "llama3-hf/tokenizer.json",
                                         "qwen3-hf/tokenizer.json", "gpt2/encoder.json",
                                         "llama.cpp-ggml-vocab/ggml-vocab-deepseek-llm.gguf"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param.substr(0, info.param.find('/'));
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n + "_" + std::to_string(info.index);
                         });

}  // namespace
}  // namespace lockstep
