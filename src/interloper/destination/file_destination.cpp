// FileDestination: one file per partition under ROOT/SOURCE/ASSET/COLUMN=KEY/.
//
// A partition file is replaced by writing a temporary file beside it, fsyncing it, renaming it
// over the old one and fsyncing the directory, so a reader (or a crash) sees the old or the new
// file, never a mix.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_set>

#include "interloper/data/format.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"

namespace interloper {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t max_component = 200;
constexpr std::size_t kept_prefix = 160;
constexpr const char* key_file = "_key";
constexpr const char* schema_file = "_schema.json";

bool plain(char c, bool first) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || (c == '.' && !first);
}

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

[[noreturn]] void fail_errno(std::string_view what, const fs::path& path) {
  throw DestinationError(
      fmt::format("file destination: {} '{}': {}", what, path.string(), std::strerror(errno)));
}

void fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_errno("cannot open directory", dir);
  if (::fsync(fd) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    fail_errno("cannot fsync directory", dir);
  }
  ::close(fd);
}

void make_dirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw DestinationError(fmt::format("file destination: cannot create directory '{}': {}",
                                       dir.string(), ec.message()));
  }
}

// Writes `bytes` to `path` and fsyncs it (the caller renames it into place).
void write_synced(const fs::path& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno("cannot create", path);
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      errno = saved;
      fail_errno("cannot write", path);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    fail_errno("cannot fsync", path);
  }
  if (::close(fd) != 0) fail_errno("cannot close", path);
}

void rename_over(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) fail_errno("cannot rename into", to);
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (!fs::exists(path)) return std::nullopt;
    fail_errno("cannot read", path);
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) fail_errno("cannot read", path);
  return std::move(buffer).str();
}

std::atomic<std::uint64_t> temp_counter{0};

fs::path temp_beside(const fs::path& target) {
  return target.parent_path() /
         fmt::format(".{}.tmp-{}-{}", target.filename().string(), ::getpid(), ++temp_counter);
}

// The writer PID in a temporary file name ".NAME.tmp-PID-N", or 0 when `name` is not one.
pid_t temp_owner(std::string_view name) {
  if (name.empty() || name[0] != '.') return 0;
  auto at = name.rfind(".tmp-");
  if (at == std::string_view::npos || at == 0) return 0;
  std::string_view rest = name.substr(at + 5);
  auto dash = rest.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == rest.size()) return 0;
  std::string_view counter = rest.substr(dash + 1);
  if (counter.find_first_not_of("0123456789") != std::string_view::npos) return 0;
  long pid = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + dash, pid);
  if (ec != std::errc() || end != rest.data() + dash || pid <= 0 || pid > INT_MAX) return 0;
  return static_cast<pid_t>(pid);
}

// Removes the temporary files in `dir` left by writers that died before renaming them. A file
// whose writer is this process or any live process may still be renamed, so it stays.
void remove_stale_temps(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return;  // nothing to clean is not an error of the write
  const pid_t self = ::getpid();
  for (const auto& entry : it) {
    pid_t pid = temp_owner(entry.path().filename().native());
    if (pid == 0 || pid == self) continue;
    if (::kill(pid, 0) == -1 && errno == ESRCH) ::unlink(entry.path().c_str());
  }
}

// Replaces `target` atomically with `bytes` (directory fsync left to the caller).
void replace_file(const fs::path& target, std::string_view bytes) {
  fs::path temp = temp_beside(target);
  try {
    write_synced(temp, bytes);
    rename_over(temp, target);
  } catch (...) {
    ::unlink(temp.c_str());  // a full disk must not keep the half-written file
    throw;
  }
}

}  // namespace

std::string FileDestination::escape_key(std::string_view key) {
  if (key.empty()) return "%";
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(key.size());
  for (std::size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    if (plain(c, i == 0)) {
      out += c;
    } else {
      auto u = static_cast<unsigned char>(c);
      out += '%';
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  if (out.size() <= max_component) return out;
  // Too long for one directory name: keep a readable prefix (never cutting an escape) and a
  // hash of the whole key after '~', which escaping never produces; the key itself is kept in
  // the directory's _key file.
  std::size_t cut = 0;
  while (cut < out.size()) {
    std::size_t step = out[cut] == '%' ? 3 : 1;
    if (cut + step > kept_prefix) break;
    cut += step;
  }
  return fmt::format("{}~{:016x}", out.substr(0, cut), fnv1a(key));
}

std::string FileDestination::unescape_key(std::string_view component) {
  if (component == "%") return "";
  if (component.find('~') != std::string_view::npos) {
    throw DestinationError(fmt::format(
        "file destination: '{}' names a long key by its hash; the key is in its _key file",
        component));
  }
  std::string out;
  out.reserve(component.size());
  for (std::size_t i = 0; i < component.size(); ++i) {
    char c = component[i];
    if (c != '%') {
      if (!plain(c, i == 0)) {
        throw DestinationError(
            fmt::format("file destination: '{}' is not an escaped key", component));
      }
      out += c;
      continue;
    }
    int hi = i + 2 < component.size() ? hex_digit(component[i + 1]) : -1;
    int lo = hi >= 0 ? hex_digit(component[i + 2]) : -1;
    if (lo < 0) {
      throw DestinationError(
          fmt::format("file destination: '{}' is not an escaped key", component));
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

struct FileDestination::State {
  fs::path root;
  Format format;
  std::mutex mutex;

  const char* data_name() const { return format == Format::csv ? "data.csv" : "data.jsonl"; }

  fs::path dataset_dir(const DatasetRef& dataset) const {
    fs::path dir = root;
    if (!dataset.source.empty()) dir /= escape_key(dataset.source);
    return dir / escape_key(dataset.asset);
  }

  std::optional<Schema> stored_schema(const fs::path& dir) const {
    auto text = read_file(dir / schema_file);
    if (!text) return std::nullopt;
    try {
      return schema_from_json(*text);
    } catch (const DataError& e) {
      throw DestinationError(
          fmt::format("file destination: '{}': {}", (dir / schema_file).string(), e.what()));
    }
  }

  std::string encode(const Table& table) const {
    if (table.num_rows() == 0) return {};  // an empty partition is an empty file
    try {
      return format == Format::csv ? to_csv(table) : to_json_lines(table);
    } catch (const DataError& e) {
      throw DestinationError(fmt::format("file destination: {}", e.what()));
    }
  }

  Table decode(const fs::path& file, const std::string& text, const Schema* schema) const {
    if (text.empty()) return schema ? Table(*schema) : Table();
    try {
      return format == Format::csv ? parse_csv(text, schema) : parse_json_lines(text, schema);
    } catch (const DataError& e) {
      throw DestinationError(fmt::format("file destination: '{}': {}", file.string(), e.what()));
    }
  }

  // Every partition directory of `dir` for `column`: (key, path).
  std::vector<std::pair<std::string, fs::path>> partition_dirs(const fs::path& dir,
                                                               const std::string& column) const {
    std::vector<std::pair<std::string, fs::path>> out;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) {
      if (ec == std::errc::no_such_file_or_directory) return out;
      throw DestinationError(
          fmt::format("file destination: cannot list '{}': {}", dir.string(), ec.message()));
    }
    const std::string prefix = escape_key(column) + "=";
    for (const auto& entry : it) {
      std::string name = entry.path().filename().string();
      if (name.rfind(prefix, 0) != 0 || !entry.is_directory()) continue;
      std::string component = name.substr(prefix.size());
      std::string key;
      if (component.find('~') != std::string::npos) {
        auto stored = read_file(entry.path() / key_file);
        if (!stored) continue;  // a crash before the key file landed: nothing was written
        key = *stored;
      } else {
        try {
          key = unescape_key(component);
        } catch (const DestinationError&) {
          continue;  // not ours
        }
      }
      out.emplace_back(std::move(key), entry.path());
    }
    return out;
  }

  fs::path partition_dir(const fs::path& dir, const std::string& column,
                         const std::string& key) const {
    return dir / (escape_key(column) + "=" + escape_key(key));
  }

  // Rows of the window, bucketed per partition in window order; `written[i]` tells whether the
  // partition's own file exists.
  struct Collected {
    Table rows;
    std::vector<std::size_t> counts;
    std::vector<bool> written;
  };

  Collected collect(const DatasetRef& dataset, const PartitionWindow& window) const {
    const fs::path dir = dataset_dir(dataset);
    const std::string& column = dataset.partitioning->column();
    auto schema = stored_schema(dir);
    const Schema* declared = schema ? &*schema : nullptr;
    detail::WindowIndex index(window, column);
    Collected out;
    out.counts.assign(index.size(), 0);
    out.written.assign(index.size(), false);

    // Choose the directories that may hold rows of the window.
    struct Candidate {
      TimePoint start;
      std::string key;
      fs::path path;
    };
    std::vector<Candidate> candidates;
    if (index.is_list()) {
      for (const auto& key : index.keys()) {
        fs::path p = partition_dir(dir, column, key);
        if (escape_key(key).find('~') == std::string::npos || read_file(p / key_file) == key) {
          candidates.push_back({TimePoint(), key, p});
        }
      }
    } else {
      for (auto& [key, path] : partition_dirs(dir, column)) {
        TimePoint start;
        if (index.is_time()) {
          // Any granularity: a monthly directory may hold rows of a daily window.
          auto granularity = TimeGranularity::infer(key);
          if (!granularity) continue;
          Bounds b;
          try {
            b = granularity->bounds(granularity->parse(key));
          } catch (const std::exception&) {
            continue;
          }
          if (!(b.start < index.bounds()->end) || !(index.bounds()->start < b.end)) continue;
          start = b.start;
        }
        candidates.push_back({start, std::move(key), std::move(path)});
      }
      std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
        return a.start < b.start || (a.start == b.start && a.key < b.key);
      });
    }
    std::unordered_map<std::string, std::size_t> key_slot;
    std::vector<std::string> keys = window.keys();
    for (std::size_t i = 0; i < keys.size(); ++i) key_slot.emplace(keys[i], i);

    std::vector<Table> pieces;
    std::vector<std::vector<std::pair<std::size_t, std::size_t>>> buckets(index.size());
    for (const auto& candidate : candidates) {
      fs::path file = candidate.path / data_name();
      auto text = read_file(file);
      if (!text) continue;
      if (auto it = key_slot.find(candidate.key); it != key_slot.end()) {
        out.written[it->second] = true;
      }
      Table piece = decode(file, *text, declared);
      if (piece.num_rows() == 0) continue;
      auto c = piece.column_index(column);
      if (!c) continue;
      const auto& cells = piece.column(*c);
      for (std::size_t r = 0; r < cells.size(); ++r) {
        std::size_t i = cells[r].is_null() ? detail::WindowIndex::npos : index.locate(cells[r]);
        if (i != detail::WindowIndex::npos) buckets[i].emplace_back(pieces.size(), r);
      }
      pieces.push_back(std::move(piece));
    }
    for (std::size_t i = 0; i < buckets.size(); ++i) out.counts[i] = buckets[i].size();

    // One piece read in order: hand it back as it is.
    if (pieces.size() == 1) {
      std::vector<std::size_t> order;
      bool in_order = true;
      for (const auto& bucket : buckets) {
        for (const auto& [p, r] : bucket) {
          in_order = in_order && r == order.size();
          order.push_back(r);
        }
      }
      out.rows = in_order && order.size() == pieces[0].num_rows() ? std::move(pieces[0])
                                                                  : pieces[0].select_rows(order);
      return out;
    }
    out.rows = declared ? Table(*declared) : Table();
    if (pieces.empty()) return out;
    if (!declared) {
      for (const auto& piece : pieces) out.rows.append_table(Table(piece.schema()));
    }
    const Schema& result_schema = out.rows.schema();
    for (const auto& bucket : buckets) {
      for (const auto& [p, r] : bucket) {
        const Table& piece = pieces[p];
        std::vector<Value> row;
        row.reserve(result_schema.size());
        for (const Field& f : result_schema.fields()) {
          auto c = piece.column_index(f.name);
          row.push_back(c ? piece.column(*c)[r] : Value());
        }
        out.rows.append_row(std::move(row));
      }
    }
    return out;
  }

  Table read_unpartitioned(const fs::path& dir) const {
    auto schema = stored_schema(dir);
    fs::path file = dir / data_name();
    auto text = read_file(file);
    if (!text) return schema ? Table(*schema) : Table();
    return decode(file, *text, schema ? &*schema : nullptr);
  }
};

FileDestination::FileDestination(std::string root, Format format)
    : state_(std::make_unique<State>()) {
  state_->root = fs::path(std::move(root));
  state_->format = format;
}

FileDestination::~FileDestination() = default;

std::string FileDestination::url() const {
  std::string root = fs::absolute(state_->root).lexically_normal().string();
  return fmt::format("file://{}?format={}", root, state_->format == Format::csv ? "csv" : "jsonl");
}

namespace {

// Appends `bytes` to `path` (creating it), opening and closing it each time so that a window of
// thousands of partitions never holds thousands of descriptors.
void append_to(const fs::path& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno("cannot create", path);
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      errno = saved;
      fail_errno("cannot write", path);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::close(fd) != 0) fail_errno("cannot close", path);
}

void fsync_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail_errno("cannot open", path);
  if (::fsync(fd) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    fail_errno("cannot fsync", path);
  }
  if (::close(fd) != 0) fail_errno("cannot close", path);
}

// Copies a CSV file this destination wrote, replacing its header with `names` and giving every
// record names.size() fields (the missing trailing ones empty, that is null). Records of a file
// whose columns grew while it was written are shorter than the final header. Every quote in our
// own output is part of a quoted field, so toggling on quotes finds the separators.
void widen_csv(const fs::path& from, const fs::path& to, const std::vector<std::string>& names) {
  std::string header;
  detail::append_csv_header(header, names);
  append_to(to, header);
  std::ifstream in(from, std::ios::binary);
  if (!in) fail_errno("cannot read", from);
  std::string chunk(1 << 16, '\0'), out;
  bool in_quotes = false, in_header = true;
  std::size_t fields = 1;
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    for (std::size_t i = 0; i < got; ++i) {
      const char c = chunk[i];
      if (c == '"') in_quotes = !in_quotes;
      if (in_header) {
        in_header = in_quotes || c != '\n';  // the old header is dropped
        continue;
      }
      if (!in_quotes && c == ',') ++fields;
      if (!in_quotes && c == '\n') {
        out.append(names.size() - std::min(fields, names.size()), ',');
        fields = 1;
      }
      out.push_back(c);
    }
    if (out.size() >= (std::size_t{1} << 20)) {
      append_to(to, out);
      out.clear();
    }
  }
  if (in.bad()) fail_errno("cannot read", from);
  append_to(to, out);
}

}  // namespace

// Batches are validated as they arrive, encoded, and appended to a temporary file beside each
// partition's file (through a small buffer per partition, flushed when it alone or all buffers
// together pass a bound). commit() makes every temporary file durable, records the schema, and renames
// them into place. Whatever fails, and when the writer is dropped uncommitted, the temporary
// files are removed.
class FileDestination::Writer final : public WindowWriter {
 public:
  Writer(State& state, DatasetRef dataset, const PartitionWindow* window)
      : state_(state), dataset_(std::move(dataset)), dir_(state.dataset_dir(dataset_)) {
    if (window != nullptr && dataset_.partitioning != nullptr) {
      index_.emplace(*window, dataset_.partitioning->column());
      keys_ = window->keys();
      for (const std::string& key : keys_) {
        targets_.push_back(
            {state_.partition_dir(dir_, dataset_.partitioning->column(), key), {}, {}, {}});
      }
    } else {
      targets_.push_back({dir_, {}, {}, {}});
    }
  }

  ~Writer() override { remove_temps(); }

  void append(const Table& batch) override {
    usable();
    unusable_ = true;  // until this batch is in
    std::vector<std::vector<std::size_t>> parts;
    if (index_) parts = index_->split(dataset_, batch);  // throws before anything is staged
    try {
      schema_ = started_ ? Schema::unify(schema_, batch.schema()) : batch.schema();
    } catch (const DataError& e) {
      throw DestinationError(fmt::format("file destination: '{}': {}", dir_.string(), e.what()));
    }
    started_ = true;
    for (std::size_t i = 0; i < targets_.size(); ++i) {
      const std::size_t rows = index_ ? parts[i].size() : batch.num_rows();
      if (rows == 0) continue;
      encode(targets_[i], batch, rows == batch.num_rows() ? nullptr : &parts[i]);
      rows_ += static_cast<std::int64_t>(rows);
    }
    if (buffered_ >= kFlushBytes) flush();
    unusable_ = false;
  }

  std::int64_t commit() override {
    usable();
    unusable_ = true;
    try {
      std::lock_guard lock(state_.mutex);
      make_dirs(dir_);
      remove_stale_temps(dir_);
      const Schema schema = merged_schema();
      flush();
      stage_all();
      if (!(stored_ && schema == *stored_))
        replace_file(dir_ / schema_file, schema_to_json(schema));
      if (!index_ && dataset_.partitioning) {
        // The whole dataset is replaced: drop its partitions first.
        for (auto& [key, path] : state_.partition_dirs(dir_, dataset_.partitioning->column())) {
          std::error_code ec;
          fs::remove_all(path, ec);
        }
      }
      // Every new file is durable; now swap them in. A crash from here on leaves each partition
      // whole, either old or new.
      for (Target& target : targets_) {
        rename_over(*target.temp, target.dir / state_.data_name());
        target.temp.reset();
      }
      for (std::size_t i = 0; index_ && i < targets_.size(); ++i) fsync_dir(targets_[i].dir);
      fsync_dir(dir_);
    } catch (...) {
      remove_temps();
      throw;
    }
    return rows_;
  }

 private:
  static constexpr std::size_t kFlushBytes = std::size_t{8} << 20;
  static constexpr std::size_t kWriteBytes = std::size_t{1} << 20;

  struct Target {
    fs::path dir;                     // the partition's directory (the dataset's when whole)
    std::optional<fs::path> temp;     // the temporary file, once created
    std::string buffer;               // encoded rows not yet in the temporary file
    std::vector<std::string> header;  // csv: the columns of the header written
  };

  void usable() const {
    if (unusable_) {
      throw DestinationError(
          fmt::format("file destination: '{}': the writer failed or was committed", dir_.string()));
    }
  }

  // Encodes `rows` of `batch` (all of them when null) for the target. A CSV file's header is the
  // columns known when its first rows arrive; later rows carry every column known by then (a
  // header's prefix or more). The text is encoded into one buffer reused from partition to
  // partition: enough of it to fill a buffer goes to the file at once, less waits in the
  // target's buffer.
  void encode(Target& target, const Table& batch, const std::vector<std::size_t>* rows) {
    scratch_.clear();
    try {
      if (state_.format != Format::csv) {
        detail::append_json_lines(scratch_, batch, rows);
      } else {
        std::vector<std::string> names;
        std::vector<std::size_t> columns;
        for (const Field& f : schema_.fields()) {
          names.push_back(f.name);
          columns.push_back(batch.column_index(f.name).value_or(Schema::npos));
        }
        if (target.header.empty()) {
          detail::append_csv_header(scratch_, names);
          target.header = names;
        }
        detail::append_csv_records(scratch_, batch, columns, rows);
      }
    } catch (const DataError& e) {
      throw DestinationError(fmt::format("file destination: {}", e.what()));
    }
    if (target.buffer.empty() && scratch_.size() >= kWriteBytes) {
      append_to(temp_of(target), scratch_);
      return;
    }
    target.buffer += scratch_;
    buffered_ += scratch_.size();
    if (target.buffer.size() >= kWriteBytes) write_out(target);
  }

  fs::path& temp_of(Target& target) {
    if (!target.temp) {
      make_dirs(target.dir);
      target.temp = temp_beside(target.dir / state_.data_name());
    }
    return *target.temp;
  }

  void flush() {
    for (Target& target : targets_) write_out(target);
  }

  void write_out(Target& target) {
    if (target.buffer.empty()) return;
    append_to(temp_of(target), target.buffer);
    buffered_ -= target.buffer.size();
    target.buffer = std::string();
  }

  // The schema the dataset has after this write (see evolve_schema). Throws before anything is
  // replaced.
  Schema merged_schema() {
    stored_ = state_.stored_schema(dir_);
    try {
      return detail::evolve_schema(dataset_, stored_, schema_);
    } catch (const DestinationError& e) {
      throw DestinationError(fmt::format("file destination: '{}': {}", dir_.string(), e.what()));
    }
  }

  // Gives every target a complete, durable temporary file (an empty one for a partition without
  // rows) and writes the key files of long keys.
  void stage_all() {
    std::vector<std::string> names;
    for (const Field& f : schema_.fields()) names.push_back(f.name);
    for (std::size_t i = 0; i < targets_.size(); ++i) {
      Target& target = targets_[i];
      fs::path& temp = temp_of(target);
      if (index_) {
        remove_stale_temps(target.dir);
        if (escape_key(keys_[i]).find('~') != std::string::npos &&
            read_file(target.dir / key_file) != keys_[i]) {
          replace_file(target.dir / key_file, keys_[i]);
        }
      }
      if (!fs::exists(temp)) append_to(temp, {});
      if (state_.format == Format::csv && !target.header.empty() && target.header != names) {
        fs::path wide = temp_beside(target.dir / state_.data_name());
        std::optional<fs::path> narrow = std::move(target.temp);
        target.temp = wide;
        widen_csv(*narrow, wide, names);
        ::unlink(narrow->c_str());
      }
      fsync_file(*target.temp);
    }
  }

  void remove_temps() {
    for (Target& target : targets_) {
      if (target.temp) ::unlink(target.temp->c_str());
      target.temp.reset();
    }
  }

  State& state_;
  DatasetRef dataset_;
  const fs::path dir_;
  std::optional<detail::WindowIndex> index_;
  std::vector<std::string> keys_;
  std::vector<Target> targets_;
  std::optional<Schema> stored_;
  Schema schema_;
  std::size_t buffered_ = 0;
  std::string scratch_;  // a batch's text for one partition
  std::int64_t rows_ = 0;
  bool started_ = false;
  bool unusable_ = false;
};

std::unique_ptr<WindowWriter> FileDestination::open_writer(const DatasetRef& dataset,
                                                           const PartitionWindow* window) {
  return std::make_unique<Writer>(*state_, dataset, window);
}

Table FileDestination::read(const DatasetRef& dataset, const PartitionWindow* window) {
  std::lock_guard lock(state_->mutex);
  if (!dataset.partitioning) return state_->read_unpartitioned(state_->dataset_dir(dataset));
  if (!window) {
    // Everything: the partition directories in key order, then an unpartitioned file if any.
    const fs::path dir = state_->dataset_dir(dataset);
    auto schema = state_->stored_schema(dir);
    Table out = schema ? Table(*schema) : Table();
    auto dirs = state_->partition_dirs(dir, dataset.partitioning->column());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& [key, path] : dirs) {
      fs::path file = path / state_->data_name();
      if (auto text = read_file(file)) {
        out.append_table(state_->decode(file, *text, schema ? &*schema : nullptr));
      }
    }
    fs::path file = dir / state_->data_name();
    if (auto text = read_file(file)) {
      out.append_table(state_->decode(file, *text, schema ? &*schema : nullptr));
    }
    return out;
  }
  return state_->collect(dataset, *window).rows;
}

std::int64_t FileDestination::row_count(const DatasetRef& dataset, const Partition* partition) {
  if (!partition || !dataset.partitioning) {
    return static_cast<std::int64_t>(read(dataset, nullptr).num_rows());
  }
  auto window = partition->as_window();
  std::lock_guard lock(state_->mutex);
  auto collected = state_->collect(dataset, *window);
  return static_cast<std::int64_t>(collected.counts.empty() ? 0 : collected.counts[0]);
}

std::vector<PartitionCount> FileDestination::partition_counts(const DatasetRef& dataset,
                                                              const PartitionWindow& window) {
  std::vector<std::string> keys = window.keys();
  std::vector<PartitionCount> out(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) out[i].key = keys[i];
  if (!dataset.partitioning) return out;
  std::lock_guard lock(state_->mutex);
  auto collected = state_->collect(dataset, window);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].rows = static_cast<std::int64_t>(collected.counts[i]);
    out[i].written = collected.written[i] || collected.counts[i] > 0;
  }
  return out;
}

std::optional<Schema> FileDestination::schema(const DatasetRef& dataset) {
  std::lock_guard lock(state_->mutex);
  return state_->stored_schema(state_->dataset_dir(dataset));
}

void FileDestination::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  std::lock_guard lock(state_->mutex);
  const fs::path dir = state_->dataset_dir(dataset);
  std::error_code ec;
  if (window == nullptr || dataset.partitioning == nullptr) {
    fs::remove_all(dir, ec);
    if (ec) {
      throw DestinationError(
          fmt::format("file destination: cannot remove '{}': {}", dir.string(), ec.message()));
    }
    if (dir.has_parent_path() && fs::exists(dir.parent_path())) fsync_dir(dir.parent_path());
    return;
  }
  bool removed = false;
  for (const auto& [key, path] : state_->partition_dirs(dir, dataset.partitioning->column())) {
    if (!detail::drop_covers(*window, key)) continue;
    fs::remove_all(path, ec);
    if (ec) {
      throw DestinationError(
          fmt::format("file destination: cannot remove '{}': {}", path.string(), ec.message()));
    }
    removed = true;
  }
  if (removed) fsync_dir(dir);
}

}  // namespace interloper
