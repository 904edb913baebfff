// interloper/partitioning.hpp — partitions, windows and the partitioning kinds.
//
// A partitioned asset is cut into *partitions*: the unit a destination stores, replaces and
// counts. A run always covers a *window*: a contiguous run of partitions, the scope of one
// execution. A bare partition is accepted everywhere a window is, as the window of one.
//
// Two kinds ship with the library:
//
//   * time: TimePartitionConfig cuts by hour, day, week, month, quarter or year. A partition is
//     named by the ISO key of its period (time.hpp) and selects the rows whose column falls in
//     its half-open bounds, so a monthly partition may hold daily dates.
//   * list: ListPartitionConfig cuts by a declared list of values (regions, tenants...). The
//     values are the keys; a window is a contiguous range of the declared order.
//
// Example:
//
//   using namespace std::chrono;
//   il::TimePartitionConfig config("date", {.granularity = il::TimeGranularity::DAY,
//                                           .allow_window = true});
//   il::TimePartitionWindow w(year{2026} / January / 1, year{2026} / January / 7);
//   config.check(w);                           // throws il::PartitionError when not servable
//   std::cout << w << ' ' << w.size() << '\n';  // 2026-01-01..2026-01-07 7
//   for (il::TimePartition p : w) std::cout << p.key() << '\n';
//   il::Filter f = w.filter("date");
//   f.to_sql();                                // {"\"date\" >= ? AND \"date\" < ?", {start, end}}
//
//   il::ListPartitionConfig regions("region", {"eu", "us", "apac"});
//   regions.window("eu", "us").keys();         // {"eu", "us"}
//
// A new kind derives from PartitionConfig, Partition and PartitionWindow, implements their pure
// virtual members and calls PartitionConfig::register_kind so from_definition can rebuild it.
// The list kind (list_partition.cpp) is the reference implementation.
//
// All types here are immutable after construction (except by assignment) and safe to share
// between threads for reading. The kind registry is internally synchronized.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "interloper/error.hpp"
#include "interloper/time.hpp"

namespace interloper {

class Table;  // the data layer
class Value;
class PartitionWindow;
class TimePartitionWindow;

// A row predicate on one column, as a database would select it: a half-open time range
// (`column >= start AND column < end`) or membership in a set of string values.
class Filter {
 public:
  enum class Kind { range, membership };
  // How to_sql() writes parameter placeholders: `?` (SQLite), `$1, $2, ...` (PostgreSQL), or
  // named `:PREFIX1, :PREFIX2, ...` (for embedding in a query that has named parameters of its
  // own).
  enum class Placeholder { question, dollar, named };
  // SQL text with placeholders, and the values to bind to them in order.
  struct Sql {
    std::string text;
    std::vector<std::variant<TimePoint, std::string>> params;
  };

  // Rows with start <= column < end.
  static Filter range(std::string column, TimePoint start, TimePoint end);
  // Rows whose column equals one of `values`.
  static Filter membership(std::string column, std::vector<std::string> values);

  Kind kind() const { return kind_; }
  const std::string& column() const { return column_; }
  // The range ends; the epoch for a membership filter.
  TimePoint start() const { return start_; }
  TimePoint end() const { return end_; }
  // The accepted values; empty for a range filter.
  const std::vector<std::string>& values() const { return values_; }

  // Range: start <= t < end. Membership: always false (its values are not times).
  bool matches(TimePoint t) const;
  // Membership: value is one of values(). Range: value parses as a TimePoint
  // (TimePoint::parse) inside the range; false when it does not parse.
  bool matches(std::string_view value) const;

  // The predicate as SQL with bound parameters: `"date" >= ? AND "date" < ?` or
  // `"region" IN ($1, $2)` (an empty membership gives `1 = 0`). The column is double-quoted
  // with embedded quotes doubled; values only ever appear in params, never in the text.
  // `first_index` numbers the first `$n` or named placeholder; `prefix` starts every named one.
  Sql to_sql(Placeholder style = Placeholder::question, int first_index = 1,
             std::string_view prefix = "p") const;
  // For humans and logs: `date >= 2026-05-01T00:00:00 AND date < 2026-06-01T00:00:00`,
  // `region IN (eu, us)`.
  std::string to_string() const;

  // The rows of `table` that match.
  Table apply(const Table& table) const;

 private:
  Filter() = default;
  Kind kind_ = Kind::range;
  std::string column_;
  TimePoint start_;
  TimePoint end_;
  std::vector<std::string> values_;
};

// One partition of some kind. Owned by value in the concrete types, by unique_ptr through this
// interface.
class Partition {
 public:
  virtual ~Partition() = default;
  // The partition's key: how it is persisted, printed and passed on the command line.
  virtual std::string key() const = 0;
  // The key.
  std::string to_string() const { return key(); }
  // The rows of this partition when `column` carries the partition value.
  virtual Filter filter(std::string column) const = 0;
  // The kind name ("time", "list", ...), as registered with PartitionConfig::register_kind.
  virtual std::string_view kind() const = 0;
  // The window holding just this partition.
  virtual std::unique_ptr<PartitionWindow> as_window() const = 0;
  virtual std::unique_ptr<Partition> clone() const = 0;

 protected:
  Partition() = default;
  Partition(const Partition&) = default;
  Partition& operator=(const Partition&) = default;
};

// A contiguous run of partitions of one kind, in order (oldest / first declared first).
class PartitionWindow {
 public:
  virtual ~PartitionWindow() = default;
  // The number of partitions (at least 1).
  virtual std::size_t size() const = 0;
  // The keys of all partitions, in order.
  virtual std::vector<std::string> keys() const = 0;
  // "first..last", or the key alone for a window of one.
  virtual std::string to_string() const = 0;
  // Whether `partition` is one of this window's partitions (false for another kind).
  virtual bool contains(const Partition& partition) const = 0;
  virtual std::string_view kind() const = 0;
  // The partition at `index` (0 = first); throws std::out_of_range when index >= size().
  virtual std::unique_ptr<Partition> partition_at(std::size_t index) const = 0;
  // The rows of the whole window: a half-open range or a membership.
  virtual Filter filter(std::string column) const = 0;
  virtual std::unique_ptr<PartitionWindow> clone() const = 0;
  // Whether both windows hold the same partitions, in the same order. The default compares the
  // kinds and keys; the time kind compares ends and granularity without listing keys.
  virtual bool same_partitions(const PartitionWindow& other) const;
  // The window as consecutive periods of one granularity, when its partitions are such periods
  // (the time kind); nullopt otherwise (the default). Lets callers use bounds and period
  // arithmetic without knowing the concrete type.
  virtual std::optional<TimePartitionWindow> as_time_window() const;

 protected:
  PartitionWindow() = default;
  PartitionWindow(const PartitionWindow&) = default;
  PartitionWindow& operator=(const PartitionWindow&) = default;
};

std::ostream& operator<<(std::ostream& out, const Partition& partition);
std::ostream& operator<<(std::ostream& out, const PartitionWindow& window);

// The time side of a partitioning whose partitions are periods of time: the column holding the
// time, the periods' granularity and the earliest data. What callers use instead of asking
// which kind a partitioning is.
struct TimeAxis {
  std::string column;
  TimeGranularity granularity;
  std::optional<TimePoint> start;
};

// How an asset is partitioned: the kind, the column carrying the partition value, and whether a
// run may cover several partitions at once (allow_window).
class PartitionConfig {
 public:
  // How a text given on a command line (or to serve, the queue, Python) names partitions: a
  // window ("A..B" or a bare key, the window of one), or exactly one key that is never split at
  // ".." (--partition).
  enum class TextForm : std::uint8_t { window, key };

  // Builds a config from its to_definition() JSON text; throws PartitionError when malformed.
  using Factory = std::function<std::unique_ptr<PartitionConfig>(std::string_view definition_json)>;

  virtual ~PartitionConfig() = default;

  virtual std::string_view kind() const = 0;
  const std::string& column() const { return column_; }
  bool allow_window() const { return allow_window_; }

  // Validates the window of a run. Throws PartitionError when this config cannot serve it: a
  // window of another kind or granularity, several partitions without allow_window, or (time)
  // a window reaching before the configured start. Messages do not name the asset.
  virtual void check(const PartitionWindow& window) const = 0;
  // Validates a single partition, as the window of one.
  void check(const Partition& partition) const;

  // The partition a persisted key names. Throws PartitionError for a key this config does not
  // know (list), std::invalid_argument for a malformed key (time).
  std::unique_ptr<Partition> partition(std::string_view key) const { return make_partition(key); }
  // The window from start_key to end_key, both inclusive. Throws as partition() does, and for
  // a window that runs backwards.
  std::unique_ptr<PartitionWindow> window(std::string_view start_key,
                                          std::string_view end_key) const {
    return make_window(start_key, end_key);
  }
  // A window from text: "start..end" or a bare key (the window of one), both ends keys of this
  // partitioning.
  std::unique_ptr<PartitionWindow> parse_window(std::string_view text) const;

  // The window `text` names, read the way this partitioning reads it: the partitioning decides,
  // never the shape of the text. A time partitioning reads a time window of any granularity
  // ("2026" is the year 2026 for a daily asset too), a list partitioning its own values ("2026"
  // is the value 2026, "emea..us" a range of the declared order). The default parses keys of
  // this partitioning (parse_window, or partition() for TextForm::key). Throws PartitionError
  // or std::invalid_argument naming the text when this partitioning cannot read it. Every entry
  // point that takes a window text (the CLI, serve, the queue, Python) reads it here.
  virtual std::unique_ptr<PartitionWindow> read_window(std::string_view text,
                                                       TextForm form = TextForm::window) const;
  // This partitioning's own partitions that `text` selects: share(*read_window(text, form)), so
  // a day names its month to a monthly partitioning and its 24 hours to an hourly one. Throws
  // as read_window and share do.
  std::unique_ptr<PartitionWindow> select_window(std::string_view text,
                                                 TextForm form = TextForm::window) const;
  // This partitioning's partitions that a request window covers (partitioning/mapping): a time
  // partitioning's periods overlapping a time window's bounds, clamped to its start; for any
  // other pair, the request itself (check() then says whether it is servable). Throws
  // PartitionError ("window 2026-10 lies entirely before start 2026-11-20T00:00:00") when the
  // clamp leaves nothing.
  std::unique_ptr<PartitionWindow> share(const PartitionWindow& request) const;

  // The time axis when this partitioning's partitions are periods of time (the time kind);
  // nullopt by default.
  virtual std::optional<TimeAxis> time_axis() const;
  // Every partition, when the kind declares a finite set of them (list: every value, in the
  // declared order); nullptr by default (time: open-ended).
  virtual std::unique_ptr<PartitionWindow> declared_window() const;

  // The window to show when a caller (a status display) names none, as of `now`. A kind with a
  // declared set of partitions (list) gives all of them; an open-ended kind (time) gives the
  // periods from its start through the one holding `now`, or the last `recent` of them when it
  // has no start. The default gives nullptr: the kind has no natural extent, and callers must
  // ask for a window.
  virtual std::unique_ptr<PartitionWindow> default_window(TimePoint now, std::size_t recent) const;

  // The partition's place in this kind's order, when the kind numbers its partitions so that
  // every window's partitions are consecutive numbers: time gives the periods of the partition's
  // granularity since 1970-01-01T00:00Z, list the position in the declared list. The default
  // gives nullopt: the kind has no such numbering, and callers (the stores' range arithmetic)
  // handle its partitions by key. Throws PartitionError for a list value the config does not
  // declare.
  virtual std::optional<std::int64_t> ordinal(const Partition& partition) const;
  // The key of the partition holding the rows whose partition column is `value`: how storage
  // that keeps one object per partition files the rows of a write without a window. Time gives
  // the key of the period of its granularity holding the date or timestamp, list the value
  // itself when it is declared. nullopt for a value no partition holds (a null, a list value
  // not declared, text that is no time) and, by default, for a kind that cannot say.
  virtual std::optional<std::string> key_holding(const Value& value) const;

  // Whether both ends of a DAG edge accept the same windows (same kind and same shape).
  virtual bool compatible(const PartitionConfig& other) const = 0;

  // The catalog entry: compact JSON with "kind" first, for instance
  // {"kind":"time","column":"date","granularity":"day","allow_window":false,"start":null}.
  virtual std::string to_definition() const = 0;
  // Rebuilds a config of any registered kind from to_definition() text; the round trip is
  // exact. Throws PartitionError naming an unknown kind or what is malformed.
  static std::unique_ptr<PartitionConfig> from_definition(std::string_view json);

  virtual std::unique_ptr<PartitionConfig> clone() const = 0;

  // Makes from_definition() build configs of `kind` with `factory` (replacing any earlier
  // factory of that name; "time" and "list" are registered from the start). Thread-safe.
  // Throws std::invalid_argument for an empty kind or factory.
  static void register_kind(std::string kind, Factory factory);

 protected:
  PartitionConfig(std::string column, bool allow_window)
      : column_(std::move(column)), allow_window_(allow_window) {}
  PartitionConfig(const PartitionConfig&) = default;
  PartitionConfig& operator=(const PartitionConfig&) = default;

  virtual std::unique_ptr<Partition> make_partition(std::string_view key) const = 0;
  virtual std::unique_ptr<PartitionWindow> make_window(std::string_view start_key,
                                                       std::string_view end_key) const = 0;

 private:
  std::string column_;
  bool allow_window_ = false;
};

// ---------------------------------------------------------------------------------------------
// Time partitioning

class TimePartitionWindow;

// The period of a time granularity that holds a given time point.
class TimePartition final : public Partition {
 public:
  // The partition holding t; value() is normalized to the period start.
  explicit TimePartition(TimePoint t, TimeGranularity granularity = TimeGranularity::DAY)
      : value_(granularity.truncate(t)), granularity_(granularity) {}

  // Rebuilds a partition from a key of any shape, inferring the granularity ("2026-08" is a
  // month). Throws std::invalid_argument naming a malformed key.
  static TimePartition from_key(std::string_view key);

  TimePoint value() const { return value_; }
  TimeGranularity granularity() const { return granularity_; }
  Bounds bounds() const { return {value_, granularity_.advance(value_, 1)}; }
  TimePartitionWindow window() const;

  std::string key() const override { return granularity_.format(value_); }
  Filter filter(std::string column) const override;
  std::string_view kind() const override { return "time"; }
  std::unique_ptr<PartitionWindow> as_window() const override;
  std::unique_ptr<Partition> clone() const override;

  // The rows of `table` whose `column` lies in bounds().
  Table slice(const Table& table, std::string_view column) const;

  friend bool operator==(const TimePartition& a, const TimePartition& b) {
    return a.value_ == b.value_ && a.granularity_ == b.granularity_;
  }

 private:
  TimePoint value_;
  TimeGranularity granularity_;
};

// Consecutive periods of one granularity, both ends inclusive.
//
// Iteration: `for (il::TimePartition p : window)` visits the partitions oldest first. Because
// the contract's end() is the last partition's start (a TimePoint), the window has no member
// begin(); range-for finds the hidden-friend begin(window)/end(window) by argument-dependent
// lookup instead. For standard algorithms use partitions(), a range with ordinary member
// begin()/end(). The iterator is a forward iterator yielding TimePartition by value.
class TimePartitionWindow final : public PartitionWindow {
 public:
  class Iterator {
   public:
    using iterator_concept = std::forward_iterator_tag;
    using iterator_category = std::input_iterator_tag;  // yields values, not references
    using value_type = TimePartition;
    using difference_type = std::ptrdiff_t;
    using reference = TimePartition;
    using pointer = void;

    Iterator() = default;
    TimePartition operator*() const { return TimePartition(current_, granularity_); }
    Iterator& operator++() {
      // Fixed-length periods step inline; calendar periods go through the granularity.
      switch (granularity_.unit()) {
        case TimeGranularity::Unit::hour:
          step(3600);
          break;
        case TimeGranularity::Unit::day:
          step(86400);
          break;
        case TimeGranularity::Unit::week:
          step(7 * 86400);
          break;
        default:
          current_ = granularity_.advance(current_, 1);
          break;
      }
      ++index_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const Iterator& a, const Iterator& b) { return a.index_ == b.index_; }

   private:
    friend class TimePartitionWindow;
    Iterator(TimePoint current, TimeGranularity g, std::size_t index)
        : current_(current), granularity_(g), index_(index) {}
    void step(std::int64_t seconds) {
      current_ = TimePoint::from_epoch_seconds(current_.epoch_seconds() + seconds);
    }
    TimePoint current_;
    TimeGranularity granularity_;
    std::size_t index_ = 0;
  };

  // The window's partitions as a standard range.
  class Range {
   public:
    Iterator begin() const { return begin_; }
    Iterator end() const { return end_; }
    std::size_t size() const { return size_; }

   private:
    friend class TimePartitionWindow;
    Range(Iterator b, Iterator e, std::size_t n) : begin_(b), end_(e), size_(n) {}
    Iterator begin_;
    Iterator end_;
    std::size_t size_;
  };

  // The periods from the one holding `start` to the one holding `end`, inclusive. Throws
  // std::invalid_argument when end's period is before start's.
  TimePartitionWindow(TimePoint start, TimePoint end,
                      TimeGranularity granularity = TimeGranularity::DAY);

  // Parses "start..end" (both keys of the same shape) or a bare key (the window of one); the
  // granularity is inferred from the keys. Throws std::invalid_argument naming the text.
  static TimePartitionWindow parse(std::string_view text);

  // The window a schedule should cover at the UTC instant `now`: it ends `offset` partitions
  // before the current one (offset 0 includes the current partition) and is `lookback`
  // partitions long, clamped so it starts no earlier than the partition holding `start`.
  // The current partition is, for day and longer, the calendar period of `time_zone` (an IANA
  // name) holding `now`; for hours, the UTC hour. Returns nullopt when clamping leaves nothing.
  // Throws std::invalid_argument when lookback < 1, offset < 0 or the zone is unknown.
  static std::optional<TimePartitionWindow> lookback(TimePoint now, std::int64_t lookback,
                                                     std::int64_t offset,
                                                     TimeGranularity granularity,
                                                     std::optional<TimePoint> start = std::nullopt,
                                                     std::string_view time_zone = "UTC");

  // The first and last partition starts.
  TimePoint start() const { return start_; }
  TimePoint end() const { return end_; }
  TimeGranularity granularity() const { return granularity_; }
  // [start of the first partition, end of the last).
  Bounds bounds() const { return {start_, granularity_.advance(end_, 1)}; }
  TimePartition first() const { return TimePartition(start_, granularity_); }
  TimePartition last() const { return TimePartition(end_, granularity_); }
  // The partition at `index` (0 = oldest), O(1). Throws std::out_of_range past the end.
  TimePartition at(std::size_t index) const;
  // Whether `partition` (same granularity) lies in the window.
  bool contains(const TimePartition& partition) const {
    return partition.granularity() == granularity_ && start_ <= partition.value() &&
           partition.value() <= end_;
  }

  Range partitions() const { return Range(first_iterator(), past_last_iterator(), size_); }
  friend Iterator begin(const TimePartitionWindow& w) { return w.first_iterator(); }
  friend Iterator end(const TimePartitionWindow& w) { return w.past_last_iterator(); }

  std::size_t size() const override { return size_; }
  std::vector<std::string> keys() const override;
  std::string to_string() const override;
  bool contains(const Partition& partition) const override;
  std::string_view kind() const override { return "time"; }
  std::unique_ptr<Partition> partition_at(std::size_t index) const override;
  Filter filter(std::string column) const override;
  std::unique_ptr<PartitionWindow> clone() const override;
  bool same_partitions(const PartitionWindow& other) const override;
  std::optional<TimePartitionWindow> as_time_window() const override { return *this; }

  friend bool operator==(const TimePartitionWindow& a, const TimePartitionWindow& b) {
    return a.start_ == b.start_ && a.end_ == b.end_ && a.granularity_ == b.granularity_;
  }

 private:
  Iterator first_iterator() const { return Iterator(start_, granularity_, 0); }
  Iterator past_last_iterator() const { return Iterator(end_, granularity_, size_); }

  TimePoint start_;
  TimePoint end_;
  TimeGranularity granularity_;
  std::size_t size_ = 1;
};

// Options of a TimePartitionConfig, in this order so designated initializers read naturally:
// `{.granularity = il::TimeGranularity::MONTH, .allow_window = true}`.
struct TimePartitionOptions {
  TimeGranularity granularity = TimeGranularity::DAY;
  bool allow_window = false;
  // The earliest data: windows may not begin before the partition holding it. (Every member
  // has an initializer so GCC 12's -Wmissing-field-initializers accepts `{.allow_window = true}`.)
  std::optional<TimePoint> start = std::nullopt;
};

class TimePartitionConfig final : public PartitionConfig {
 public:
  TimePartitionConfig(std::string column, TimePartitionOptions options = {})
      : PartitionConfig(std::move(column), options.allow_window),
        granularity_(options.granularity),
        start_(options.start) {}

  TimeGranularity granularity() const { return granularity_; }
  const std::optional<TimePoint>& start() const { return start_; }

  std::string_view kind() const override { return "time"; }
  using PartitionConfig::check;
  void check(const PartitionWindow& window) const override;
  // The partition with key `key` of this granularity; std::invalid_argument when malformed.
  TimePartition partition(std::string_view key) const;
  // The window between two keys of this granularity; std::invalid_argument when malformed or
  // backwards.
  TimePartitionWindow window(std::string_view start_key, std::string_view end_key) const;
  std::unique_ptr<PartitionWindow> default_window(TimePoint now, std::size_t recent) const override;
  // A time window of any granularity ("2026", "2026-11-01..2026-11-30"); keys of another shape
  // are read as keys of this granularity, so the error names what this one expects.
  std::unique_ptr<PartitionWindow> read_window(std::string_view text,
                                               TextForm form = TextForm::window) const override;
  std::optional<TimeAxis> time_axis() const override;
  // Periods since 1970-01-01T00:00Z; nullopt for a partition of another kind.
  std::optional<std::int64_t> ordinal(const Partition& partition) const override;
  std::optional<std::string> key_holding(const Value& value) const override;
  bool compatible(const PartitionConfig& other) const override;
  std::string to_definition() const override;
  std::unique_ptr<PartitionConfig> clone() const override;

 protected:
  std::unique_ptr<Partition> make_partition(std::string_view key) const override;
  std::unique_ptr<PartitionWindow> make_window(std::string_view start_key,
                                               std::string_view end_key) const override;

 private:
  TimeGranularity granularity_;
  std::optional<TimePoint> start_;
};

// ---------------------------------------------------------------------------------------------
// List partitioning (the reference extension)

class ListPartitionWindow;

// One declared value.
class ListPartition final : public Partition {
 public:
  explicit ListPartition(std::string value) : value_(std::move(value)) {}

  const std::string& value() const { return value_; }
  std::string key() const override { return value_; }
  Filter filter(std::string column) const override;
  std::string_view kind() const override { return "list"; }
  std::unique_ptr<PartitionWindow> as_window() const override;
  std::unique_ptr<Partition> clone() const override;

  friend bool operator==(const ListPartition& a, const ListPartition& b) {
    return a.value_ == b.value_;
  }

 private:
  std::string value_;
};

// A contiguous range [first, last] of a declared list of values. Copies share the list.
class ListPartitionWindow final : public PartitionWindow {
 public:
  using Values = std::shared_ptr<const std::vector<std::string>>;

  // Positions first..last (inclusive) of `values`. Throws PartitionError when last < first or
  // last is past the end of the list.
  ListPartitionWindow(Values values, std::size_t first, std::size_t last);

  // The window's values, in declared order.
  std::vector<std::string> values() const;
  const std::string& first() const { return (*values_)[first_]; }
  const std::string& last() const { return (*values_)[last_]; }

  std::size_t size() const override { return last_ - first_ + 1; }
  std::vector<std::string> keys() const override { return values(); }
  std::string to_string() const override;
  bool contains(const Partition& partition) const override;
  std::string_view kind() const override { return "list"; }
  std::unique_ptr<Partition> partition_at(std::size_t index) const override;
  Filter filter(std::string column) const override;
  std::unique_ptr<PartitionWindow> clone() const override;

 private:
  Values values_;
  std::size_t first_;
  std::size_t last_;
};

class ListPartitionConfig final : public PartitionConfig {
 public:
  // Throws PartitionError for an empty list, a duplicate, or a value check_value() refuses
  // (naming the column and the value).
  ListPartitionConfig(std::string column, std::vector<std::string> values,
                      bool allow_window = false);

  // The rules of a list value, which is a key: commands receive values one per line, a window
  // names two of them as "a..b", and storage escapes them. A value must be non-empty, hold no
  // control character (NUL, newline, DEL...), no "..", and neither begin nor end with '.'
  // ("a." and "b" would make "a...b"). Throws PartitionError naming the value and the rule.
  static void check_value(std::string_view value);

  // The declared values, in order.
  const std::vector<std::string>& values() const { return *values_; }
  // The position of `key` in values(). Throws PartitionError naming an unknown key.
  std::size_t index_of(std::string_view key) const;

  std::string_view kind() const override { return "list"; }
  using PartitionConfig::check;
  void check(const PartitionWindow& window) const override;
  // Throws PartitionError for an unknown key.
  ListPartition partition(std::string_view key) const;
  // Throws PartitionError for an unknown key or a range that runs backwards.
  ListPartitionWindow window(std::string_view start_key, std::string_view end_key) const;
  // Every declared value.
  std::unique_ptr<PartitionWindow> default_window(TimePoint now, std::size_t recent) const override;
  std::unique_ptr<PartitionWindow> declared_window() const override;
  // The position of the partition's key in values(); throws PartitionError for an unknown key.
  std::optional<std::int64_t> ordinal(const Partition& partition) const override;
  std::optional<std::string> key_holding(const Value& value) const override;
  bool compatible(const PartitionConfig& other) const override;
  std::string to_definition() const override;
  std::unique_ptr<PartitionConfig> clone() const override;

 protected:
  std::unique_ptr<Partition> make_partition(std::string_view key) const override;
  std::unique_ptr<PartitionWindow> make_window(std::string_view start_key,
                                               std::string_view end_key) const override;

 private:
  ListPartitionWindow::Values values_;
};

}  // namespace interloper
