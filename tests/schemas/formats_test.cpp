// `format` languages (schemas/formats.h): uri-template against RFC 6570's own examples and
// its §2 grammar, directly on the automaton and through a compiled schema.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "automata/earley.h"
#include "schemas/formats.h"
#include "schemas/json_schema.h"

namespace lockstep {
namespace {

// Every template that appears in RFC 6570 (§1.1, §1.2 levels 1–4, §2.4, §3.2.x tables),
// verbatim.
const char* const kRfcTemplates[] = {
    "http://example.com/~{username}/", "http://example.com/dictionary/{term:1}/{term}",
    "http://example.com/search{?q,lang}", "http://www.example.com/foo{?query,number}",
    "{var}", "{hello}", "{+var}", "{+hello}", "{+path}/here",
    "here?ref={+path}", "X{#var}", "X{#hello}", "map?{x,y}", "{x,hello,y}", "{+x,hello,y}", "{+path,x}/here",
    "{#x,hello,y}", "{#path,x}/here", "X{.var}", "X{.x,y}", "{/var}", "{/var,x}/here", "{;x,y}", "{;x,y,empty}",
    "{?x,y}", "{?x,y,empty}", "?fixed=yes{&x}", "{&x,y,empty}", "{var:3}", "{var:30}", "{list}", "{list*}",
    "{keys}", "{keys*}", "{+path:6}/here", "{+list}", "{+list*}", "{+keys}", "{+keys*}", "{#path:6}/here",
    "{#list}", "{#list*}", "{#keys}", "{#keys*}", "X{.var:3}", "X{.list}", "X{.list*}", "X{.keys}", "X{.keys*}",
    "{/var:1,var}", "{/list}", "{/list*}", "{/list*,path:4}", "{/keys}", "{/keys*}", "{;hello:5}", "{;list}",
    "{;list*}", "{;keys}", "{;keys*}", "{?var:3}", "{?list}", "{?list*}", "{?keys}", "{?keys*}", "{&var:3}",
    "{&list}", "{&list*}", "{&keys}", "{&keys*}", "{count}", "{count*}", "{/count}", "{/count*}", "{;count}",
    "{;count*}", "{?count}", "{?count*}", "{&count*}", "{half}", "{base}index", "O{empty}X", "O{undef}X",
    "?{x,empty}", "?{x,undef}", "?{undef,y}", "{who}", "{who,who}", "{half,who}", "{+half}", "{+base}index",
    "{+who}", "{#who}", "{#half}", "{#base}index", "{.who}", "{.who,who}", "{.half,who}", "www{.dom*}",
    "X{.empty}", "X{.undef}", "{/who}", "{/who,who}", "{/half,who}", "{/who,dub}", "{/var,empty}",
    "{/var,undef}", "{;who}", "{;half}", "{;empty}", "{;v,empty,who}", "{;v,bar,who}", "{;x,y,undef}",
    "{?who}", "{?half}", "{?x,y,undef}", "{&who}", "{&half}", "{&x}",
    // Beyond the examples, still in the §2 grammar: dotted and pct-encoded varnames, the
    // reserved operators (syntax only), the longest prefix, literals outside ASCII.
    "{a.b.c}", "{%41b}", "{x%2Fy}", "{=var}", "{,var}", "{!var}", "{@var}", "{|var}", "{var:9999}",
    "{_:1}", "caf\xc3\xa9/{id}", "a%41b", "", "/", "!#$&()*+,-./:;=?@[]_~",
    // Verified erratum 6937: the apostrophe is a literal (§3.2.1 used "'{var}'").
    "'{var}'",
};

// Not in the §2 grammar, each for the reason given.
const char* const kMalformed[] = {
    "{",            // an expression must close
    "{var",         // ... even at the end
    "}",            // a lone closing brace is not a literal
    "foo}bar",      //
    "{}",           // an expression has at least one varspec
    "{+}",          //
    "{va r}",       // a space is not a varchar
    "{var:0}",      // max-length is 1 to 9999
    "{var:10000}",  //
    "{var:01}",     // ... without a leading zero
    "{var:}",       //
    "{+var*:3}",    // one modifier at most
    "{var:3*}",     //
    "{var**}",      //
    "{a,,b}",       // no empty varspec
    "{a,}",         //
    "{,}",          //
    "{.a.}",        // a dot only between varchars
    "{a..b}",       //
    "{.a}b}",       //
    "{-var}",       // "-" is not an operator
    "{var-x}",      // ... nor a varchar
    "{$var}",       //
    "{++var}",      // one operator at most
    "{{var}}",      // braces do not nest
    "{%4}",         // pct-encoded is % and two hex digits
    "{%zz}",        //
    "a%",           //
    "a%4",          //
    "a%g0",         //
    "a b",          // excluded from literals: CTL, SP, DQUOTE, %, <, >, \, ^, `, {, |, }
    "a\"b", "a<b", "a>b", "a\\b", "a^b", "a`b", "a|b", "a\177b", "a\tb", "\x01",
};

TEST(Formats, UriTemplateIsRfc6570) {
  const auto dfa = format_language("uri-template");
  ASSERT_TRUE(dfa);
  for (const char* t : kRfcTemplates) EXPECT_TRUE(dfa->accepts(t)) << t;
  for (const char* t : kMalformed) EXPECT_FALSE(dfa->accepts(t)) << t;
  // ucschar and iprivate (RFC 3987) are literals; a C1 control is not.
  EXPECT_TRUE(dfa->accepts("\xf0\x9f\x98\x80{x}"));  // U+1F600
  EXPECT_TRUE(dfa->accepts("\xee\x80\x80"));          // U+E000, private use
  EXPECT_FALSE(dfa->accepts("\xc2\x85"));             // U+0085
}

TEST(Formats, UriTemplateIsEnforcedInSchemas) {
  const auto schema = nlohmann::ordered_json::parse(R"({"type":"string","format":"uri-template"})");
  const CompiledSchema compiled = compile_json_schema(schema);
  EXPECT_TRUE(compiled.warnings.empty());
  const auto grammar = GrammarAutomaton::compile(compiled.grammar);
  auto accepts = [&](const std::string& text) {
    EarleyParser p(*grammar);
    return p.advance(text) && p.accepting();
  };
  EXPECT_TRUE(accepts(R"("http://example.com/search{?q,lang}")"));
  EXPECT_TRUE(accepts(R"("X{.var:3}")"));
  EXPECT_FALSE(accepts(R"("{var:0}")"));
  EXPECT_FALSE(accepts(R"("{var")"));
  EXPECT_FALSE(accepts(R"("a\"b")"));  // an escaped quote is still a DQUOTE in the template
  // An escape that spells an allowed character is that character.
  EXPECT_TRUE(accepts(R"("\u007bvar\u007d")"));
  // Formats lockstep does not know still only warn.
  const CompiledSchema unknown = compile_json_schema(nlohmann::ordered_json::parse(R"({"format":"iso-3166"})"));
  ASSERT_EQ(unknown.warnings.size(), 1u);
  EXPECT_NE(unknown.warnings[0].find("/format"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
