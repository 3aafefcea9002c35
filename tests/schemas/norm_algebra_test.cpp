// The intersection of normal forms (schemas/norm_algebra.cpp) against its definition: a
// record crossed with the unconstrained record of Norm::any() is itself, so a keyword group
// that says nothing of arrays or objects keeps the other side's records as they are; the
// records cross() would drop (no value satisfies them) are dropped all the same, and the
// schema_alternatives limit still holds. Both forms of intersect() are checked, and each
// against the general product with a record that does constrain.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "grammar/char_dfa.h"
#include "grammar/limits.h"
#include "schemas/schema_model.h"

namespace lockstep::schema {
namespace {

DfaPtr key(const std::string& name) { return std::make_shared<const CharDfa>(CharDfa::literal(name)); }

ObjectRec requiring(const std::string& name, uint32_t min, uint32_t max) {
  ObjectRec r;
  r.order = {name};
  r.must.push_back({key(name), name, t_true()});
  r.min = min;
  r.max = max;
  return r;
}

// Three object records of which one is kept (a required name), one has min > max and one
// requires a name it forbids; two array records of which one has min > max.
Norm mixed() {
  Norm n = Norm::any();
  ObjectRec forbidding = requiring("b", 0, kUnbounded);
  forbidding.rules.push_back({key("b"), std::string("b"), t_false(), nullptr});
  n.objects = {requiring("a", 1, kUnbounded), requiring("a", 3, 1), forbidding};
  ArrayRec first_false;
  first_false.prefix = {t_false()};
  first_false.rest = t_true();
  ArrayRec impossible;
  impossible.rest = t_true();
  impossible.min = 2;
  impossible.max = 1;
  n.arrays = {first_false, impossible};
  return n;
}

void expect_kept(const Norm& r, uint32_t object_max) {
  ASSERT_EQ(r.objects.size(), 1u);
  EXPECT_EQ(r.objects[0].order, std::vector<std::string>{"a"});
  ASSERT_EQ(r.objects[0].must.size(), 1u);
  EXPECT_EQ(r.objects[0].must[0].literal, std::optional<std::string>("a"));
  EXPECT_EQ(r.objects[0].min, 1u);
  EXPECT_EQ(r.objects[0].max, object_max);
  EXPECT_TRUE(r.objects[0].rules.empty());
  ASSERT_EQ(r.arrays.size(), 1u);
  ASSERT_EQ(r.arrays[0].prefix.size(), 1u);
  EXPECT_EQ(r.arrays[0].prefix[0]->kind, Term::Kind::kFalse);
  EXPECT_EQ(r.arrays[0].rest->kind, Term::Kind::kTrue);
  EXPECT_TRUE(r.arrays[0].contains.empty());
}

TEST(NormAlgebra, TheUnconstrainedRecordKeepsTheOtherSidesRecordsAndDropsTheEmptyOnes) {
  const Norm x = mixed();
  expect_kept(intersect(x, Norm::any()), kUnbounded);
  expect_kept(intersect(mixed(), Norm::any()), kUnbounded);  // the running form, reusing its operand
  Norm bounded = Norm::any();  // a record that constrains: the general product
  bounded.objects[0].max = 10;
  expect_kept(intersect(x, bounded), 10);
  expect_kept(intersect(mixed(), bounded), 10);
  // The scalars are intersected as before.
  Norm no_null = Norm::any();
  no_null.null = false;
  EXPECT_FALSE(intersect(mixed(), no_null).null);
  EXPECT_TRUE(intersect(mixed(), Norm::any()).null);
}

TEST(NormAlgebra, TheUnconstrainedRecordStillCountsTheRecordsAgainstTheLimit) {
  Norm many = Norm::any();
  many.objects = {requiring("a", 0, kUnbounded), requiring("b", 0, kUnbounded), requiring("c", 0, kUnbounded)};
  EngineLimits limits = engine_limits();
  limits.schema_alternatives = 2;
  ScopedEngineLimits scoped(limits);
  EXPECT_THROW(intersect(many, Norm::any()), LimitError);
  EXPECT_THROW(intersect(Norm(many), Norm::any()), LimitError);
  Norm bounded = Norm::any();
  bounded.objects[0].max = 10;
  EXPECT_THROW(intersect(many, bounded), LimitError);
  many.objects.pop_back();
  EXPECT_EQ(intersect(Norm(many), Norm::any()).objects.size(), 2u);
}

}  // namespace
}  // namespace lockstep::schema
