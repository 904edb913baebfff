// Partitions, windows and a schedule's lookback: the vocabulary of interloper in one program.
#include <iostream>

#include <interloper/interloper.hpp>

int main() {
  using namespace std::chrono;

  // A partition is one period, named by an ISO key that also names its granularity.
  const il::TimePartition may(year{2026} / May / 20, il::TimeGranularity::MONTH);
  std::cout << "partition " << may << " starts " << may.value().date_string() << ", bounds ["
            << may.bounds().start << ", " << may.bounds().end << ")\n";
  std::cout << "from_key(\"2026-W21\") is a " << il::TimePartition::from_key("2026-W21").granularity()
            << " starting " << il::TimePartition::from_key("2026-W21").value().date_string() << '\n';

  // A window is a contiguous run of partitions, both ends inclusive.
  const il::TimePartitionWindow week(year{2026} / January / 1, year{2026} / January / 7);
  std::cout << "window " << week << " has " << week.size() << " partitions:";
  for (il::TimePartition p : week) std::cout << ' ' << p.key();
  std::cout << '\n';

  // Destinations select a window with bound parameters, never spliced values.
  const il::Filter::Sql sql = week.filter("date").to_sql();
  std::cout << "select: " << sql.text << "  with " << sql.params.size() << " parameters\n";

  // An asset's config validates the window of a run.
  const il::TimePartitionConfig daily("date", {.allow_window = false});
  try {
    daily.check(week);
  } catch (const il::PartitionError& e) {
    std::cout << "check: " << e.what() << '\n';
  }

  // What a daily schedule at 00:30 in Berlin on 2026-03-30 covers: the last three full days.
  const il::TimePoint now = il::TimePoint::parse("2026-03-29T22:30:00");  // UTC
  const auto window = il::TimePartitionWindow::lookback(now, 3, 1, il::TimeGranularity::DAY,
                                                        std::nullopt, "Europe/Berlin");
  std::cout << "lookback at " << now << "Z in Europe/Berlin: " << *window << '\n';

  // List partitions: declared values; a window is a contiguous range of the declared order.
  const il::ListPartitionConfig regions("region", {"eu", "us", "apac"}, /*allow_window=*/true);
  const il::ListPartitionWindow eu_us = regions.window("eu", "us");
  std::cout << "list window " << eu_us << " selects " << eu_us.filter("region").to_string() << '\n';
  std::cout << "catalog: " << regions.to_definition() << '\n';
  return 0;
}
