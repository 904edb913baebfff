#include <gtest/gtest.h>

#include "interloper/partitioning.hpp"

namespace il = interloper;

namespace {

il::TimePoint at(const char* text) { return il::TimePoint::parse(text); }

TEST(Filter, RangeMatchesHalfOpen) {
  const auto f = il::Filter::range("date", at("2026-05-01"), at("2026-06-01"));
  EXPECT_EQ(f.kind(), il::Filter::Kind::range);
  EXPECT_EQ(f.column(), "date");
  EXPECT_TRUE(f.matches(at("2026-05-01")));
  EXPECT_TRUE(f.matches(at("2026-05-31T23:59:59")));
  EXPECT_FALSE(f.matches(at("2026-06-01")));
  EXPECT_FALSE(f.matches(at("2026-04-30T23:59:59")));
  EXPECT_TRUE(f.matches(std::string_view("2026-05-20")));
  EXPECT_FALSE(f.matches(std::string_view("not a date")));
}

TEST(Filter, MembershipMatchesValues) {
  const auto f = il::Filter::membership("region", {"eu", "us"});
  EXPECT_EQ(f.kind(), il::Filter::Kind::membership);
  EXPECT_TRUE(f.matches(std::string_view("eu")));
  EXPECT_FALSE(f.matches(std::string_view("apac")));
  EXPECT_FALSE(f.matches(at("2026-05-01")));
}

TEST(Filter, RangeToSqlBindsBothEnds) {
  const auto f = il::Filter::range("date", at("2026-05-01"), at("2026-06-01"));
  const auto sql = f.to_sql();
  EXPECT_EQ(sql.text, R"("date" >= ? AND "date" < ?)");
  ASSERT_EQ(sql.params.size(), 2u);
  EXPECT_EQ(std::get<il::TimePoint>(sql.params[0]), at("2026-05-01"));
  EXPECT_EQ(std::get<il::TimePoint>(sql.params[1]), at("2026-06-01"));
  EXPECT_EQ(f.to_sql(il::Filter::Placeholder::dollar, 3).text, R"("date" >= $3 AND "date" < $4)");
}

TEST(Filter, MembershipToSqlNeverSplicesValues) {
  const auto f = il::Filter::membership("re\"gion", {"eu", "x'); DROP TABLE t; --"});
  const auto sql = f.to_sql(il::Filter::Placeholder::dollar);
  EXPECT_EQ(sql.text, R"("re""gion" IN ($1, $2))");
  EXPECT_EQ(sql.text.find("DROP"), std::string::npos);
  ASSERT_EQ(sql.params.size(), 2u);
  EXPECT_EQ(std::get<std::string>(sql.params[0]), "eu");
  EXPECT_EQ(std::get<std::string>(sql.params[1]), "x'); DROP TABLE t; --");
  EXPECT_EQ(il::Filter::membership("r", {"a", "b"}).to_sql().text, R"("r" IN (?, ?))");
  EXPECT_EQ(il::Filter::membership("r", {}).to_sql().text, "1 = 0");
}

TEST(Filter, ToStringForHumans) {
  EXPECT_EQ(il::Filter::range("date", at("2026-05-01"), at("2026-06-01")).to_string(),
            "date >= 2026-05-01T00:00:00 AND date < 2026-06-01T00:00:00");
  EXPECT_EQ(il::Filter::membership("region", {"eu", "us"}).to_string(), "region IN (eu, us)");
}

}  // namespace
