#include "data/test_helpers.hpp"

namespace interloper {
namespace {

using namespace std::chrono;
using testing::expect_data_error;

const sys_days kDay = year{2026} / 1 / 5;

TEST(Schema, FindFieldAndEquality) {
  Schema s{{"date", DataType::date}, {"clicks", DataType::int64}};
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.find("clicks"), 1u);
  EXPECT_FALSE(s.find("nope"));
  EXPECT_EQ(s.field(0).name, "date");
  expect_data_error([&] { (void)s.field(5); }, {"5"});
  EXPECT_EQ(s, (Schema{{"date", DataType::date}, {"clicks", DataType::int64}}));
  EXPECT_NE(s, (Schema{{"clicks", DataType::int64}, {"date", DataType::date}}));
  EXPECT_EQ(s.to_string(), "date: date, clicks: int");
  expect_data_error([] { Schema({{"a", DataType::int64}, {"a", DataType::string}}); }, {"'a'"});
}

TEST(Schema, WidenRules) {
  EXPECT_EQ(Schema::widen(DataType::int64, DataType::float64), DataType::float64);
  EXPECT_EQ(Schema::widen(DataType::float64, DataType::int64), DataType::float64);
  EXPECT_EQ(Schema::widen(DataType::date, DataType::timestamp), DataType::timestamp);
  EXPECT_EQ(Schema::widen(DataType::timestamp, DataType::date), DataType::timestamp);
  for (auto t : {DataType::boolean, DataType::int64, DataType::float64, DataType::string,
                 DataType::date, DataType::timestamp}) {
    EXPECT_EQ(Schema::widen(DataType::null, t), t);
    EXPECT_EQ(Schema::widen(t, DataType::null), t);
    EXPECT_EQ(Schema::widen(t, t), t);
  }
  expect_data_error([] { Schema::widen(DataType::string, DataType::int64); }, {"string", "int"});
  expect_data_error([] { Schema::widen(DataType::boolean, DataType::int64); }, {"bool", "int"});
  expect_data_error([] { Schema::widen(DataType::date, DataType::string); }, {"date", "string"});
  expect_data_error([] { Schema::widen(DataType::float64, DataType::timestamp); },
                    {"double", "timestamp"});
}

TEST(Schema, Infer) {
  EXPECT_EQ(Schema::infer({}), DataType::null);
  EXPECT_EQ(Schema::infer({Value(), Value()}), DataType::null);
  EXPECT_EQ(Schema::infer({Value(), Value(1), Value()}), DataType::int64);
  EXPECT_EQ(Schema::infer({Value(1), Value(2.5)}), DataType::float64);
  EXPECT_EQ(Schema::infer({Value(kDay), Value(sys_seconds(kDay))}), DataType::timestamp);
  expect_data_error(
      [] {
        Schema::infer({Value("a"), Value(1)}, "campaign");
      },
      {"'campaign'", "string", "int", "row 2"});
}

TEST(Schema, Unify) {
  Schema a{{"x", DataType::int64}, {"y", DataType::null}};
  Schema b{{"y", DataType::string}, {"x", DataType::float64}, {"z", DataType::date}};
  EXPECT_EQ(Schema::unify(a, b),
            (Schema{{"x", DataType::float64}, {"y", DataType::string}, {"z", DataType::date}}));
  expect_data_error(
      [] {
        Schema::unify({{"x", DataType::int64}}, {{"x", DataType::string}});
      },
      {"'x'", "int", "string"});
}

TEST(Table, AppendByName) {
  Table t;
  t.append({{"date", kDay}, {"clicks", 12}});
  t.append({{"clicks", 7}, {"date", kDay + days(1)}});  // any order
  EXPECT_EQ(t.num_rows(), 2u);
  EXPECT_EQ(t.num_columns(), 2u);
  EXPECT_EQ(t.schema(), (Schema{{"date", DataType::date}, {"clicks", DataType::int64}}));
  EXPECT_EQ(t.at(1, "clicks"), Value(7));
  EXPECT_EQ(t.at(1, "date"), Value(kDay + days(1)));
  EXPECT_EQ(t.column("clicks"), (std::vector<Value>{12, 7}));
  EXPECT_EQ(t.column(0)[0], Value(kDay));
  EXPECT_EQ(t.row(0), (std::vector<Value>{kDay, 12}));
  EXPECT_EQ(t.column_index("clicks"), 1u);
  EXPECT_FALSE(t.column_index("nope"));
  expect_data_error([&] { (void)t.column("nope"); }, {"'nope'"});
  expect_data_error([&] { (void)t.column(9); }, {"9"});
  expect_data_error([&] { (void)t.at(2, "clicks"); }, {"row 2"});
  expect_data_error([&] { (void)t.row(2); }, {"row 2"});
}

TEST(Table, NewAndMissingColumnsAreNull) {
  Table t;
  t.append({{"a", 1}});
  t.append({{"b", "x"}});
  t.append({{"a", 3}, {"b", Value()}});
  EXPECT_EQ(t.column("a"), (std::vector<Value>{1, Value(), 3}));
  EXPECT_EQ(t.column("b"), (std::vector<Value>{Value(), "x", Value()}));
  EXPECT_EQ(t.schema(), (Schema{{"a", DataType::int64}, {"b", DataType::string}}));
}

TEST(Table, NullColumnTakesFirstType) {
  Table t;
  t.append({{"a", Value()}});
  EXPECT_EQ(t.schema().field(0).type, DataType::null);
  t.append({{"a", true}});
  EXPECT_EQ(t.schema().field(0).type, DataType::boolean);
  EXPECT_EQ(t.column("a"), (std::vector<Value>{Value(), true}));
}

TEST(Table, WidensEarlierRows) {
  Table t;
  t.append({{"n", 1}, {"when", kDay}});
  t.append({{"n", 2.5}, {"when", sys_seconds(kDay) + hours(6)}});
  t.append({{"n", 3}, {"when", kDay + days(1)}});  // narrower values convert to the column type
  EXPECT_EQ(t.schema(), (Schema{{"n", DataType::float64}, {"when", DataType::timestamp}}));
  EXPECT_EQ(t.column("n"), (std::vector<Value>{1.0, 2.5, 3.0}));
  EXPECT_EQ(t.column("when"), (std::vector<Value>{sys_seconds(kDay), sys_seconds(kDay) + hours(6),
                                                  sys_seconds(kDay + days(1))}));
}

TEST(Table, IncompatibleAppendNamesColumnRowTypesAndChangesNothing) {
  Table t;
  t.append({{"campaign", "spring"}, {"n", 1}});
  Table before = t;
  expect_data_error(
      [&] {
        t.append({{"n", 2.5}, {"campaign", 5}});
      },
      {"'campaign'", "row 2", "int", "string"});
  EXPECT_EQ(t, before);  // n was not widened
  expect_data_error([&] { t.append({{"new", 1}, {"n", true}}); }, {"'n'", "bool", "int"});
  EXPECT_EQ(t, before);  // "new" was not added
  expect_data_error([&] { t.append({{"n", 1}, {"n", 2}}); }, {"'n'", "twice"});
  EXPECT_EQ(t, before);
}

TEST(Table, AppendRow) {
  Table t(Schema{{"d", DataType::date}, {"x", DataType::int64}, {"s", DataType::string}});
  t.append_row({kDay, 1, "a"});
  t.append_row({Value(), 2.5, Value()});
  EXPECT_EQ(t.schema().field(1).type, DataType::float64);
  EXPECT_EQ(t.column("x"), (std::vector<Value>{1.0, 2.5}));
  Table before = t;
  expect_data_error([&] { t.append_row({kDay, 1}); }, {"2 values", "3 columns"});
  expect_data_error([&] { t.append_row({kDay, 1, 7}); }, {"'s'", "row 3", "int", "string"});
  EXPECT_EQ(t, before);
}

TEST(Table, AddColumn) {
  Table t;
  t.append({{"a", 1}});
  t.add_column("b", DataType::string);
  EXPECT_EQ(t.column("b"), std::vector<Value>{Value()});
  EXPECT_EQ(t.schema().field(1).type, DataType::string);
  expect_data_error([&] { t.add_column("a"); }, {"'a'"});
  t.append({{"b", "x"}});
  EXPECT_EQ(t.at(1, "a"), Value());
}

TEST(Table, SelectAndFilter) {
  Table t;
  for (int i = 0; i < 5; ++i) t.append({{"i", i}, {"even", i % 2 == 0}});
  Table s = t.select_rows({4, 0, 0});
  EXPECT_EQ(s.num_rows(), 3u);
  EXPECT_EQ(s.schema(), t.schema());
  EXPECT_EQ(s.column("i"), (std::vector<Value>{4, 0, 0}));
  expect_data_error([&] { t.select_rows({5}); }, {"row 5"});
  Table f = t.filter_rows([](const RowRef& r) { return r["even"].as_bool() && r[0].as_int() > 0; });
  EXPECT_EQ(f.column("i"), (std::vector<Value>{2, 4}));
  Table none = t.filter_rows([](const RowRef&) { return false; });
  EXPECT_EQ(none.num_rows(), 0u);
  EXPECT_EQ(none.schema(), t.schema());
}

TEST(Table, AppendTable) {
  Table a;
  a.append({{"x", 1}, {"y", "a"}});
  Table b;
  b.append({{"z", kDay}, {"x", 2.5}});
  a.append_table(b);
  EXPECT_EQ(a.schema(),
            (Schema{{"x", DataType::float64}, {"y", DataType::string}, {"z", DataType::date}}));
  EXPECT_EQ(a.num_rows(), 2u);
  EXPECT_EQ(a.row(0), (std::vector<Value>{1.0, "a", Value()}));
  EXPECT_EQ(a.row(1), (std::vector<Value>{2.5, Value(), kDay}));
  Table c;
  c.append({{"y", 3}});
  Table before = a;
  expect_data_error([&] { a.append_table(c); }, {"'y'", "string", "int"});
  EXPECT_EQ(a, before);
  Table empty;
  a.append_table(empty);
  EXPECT_EQ(a, before);
}

TEST(Table, Equality) {
  Table a, b;
  a.append({{"x", 1}});
  b.append({{"x", 1}});
  EXPECT_EQ(a, b);
  b.append({{"x", 2}});
  EXPECT_NE(a, b);
  Table c;
  c.append({{"x", 1.0}});
  EXPECT_NE(a, c);
  EXPECT_NE(Table(Schema{{"x", DataType::int64}}), Table(Schema{{"x", DataType::string}}));
}

TEST(Table, ToString) {
  Table t;
  t.append({{"date", kDay}, {"clicks", 12}});
  t.append({{"date", Value()}, {"clicks", 7}});
  EXPECT_EQ(t.to_string(),
            "date       | clicks\n"
            "-----------+-------\n"
            "2026-01-05 | 12\n"
            "null       | 7\n");
}

}  // namespace
}  // namespace interloper
