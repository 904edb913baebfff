// Reading JSON lines from a stream fed in chunks: the JSON-lines half of TableStreamParser.
#include <memory>
#include <string>
#include <string_view>

#include "interloper/data/json_line_adder.hpp"
#include "interloper/data/stream.hpp"

namespace interloper::detail {

// The JSON lines half of TableStreamParser: complete lines go straight into the batch; a line
// cut by the end of a chunk waits in `partial_`.
class JsonLinesStream final : public StreamFormat {
 public:
  JsonLinesStream(ReadOptions options, BatchSink& sink)
      : options_(std::move(options)), adder_(options_), sink_(sink) {
    batch_ = options_.only_declared ? Table(options_.schema) : Table();
  }

  void feed(std::string_view bytes) override {
    while (!bytes.empty()) {
      const std::size_t nl = bytes.find('\n');
      if (nl == std::string_view::npos) {
        partial_.append(bytes);
        return;
      }
      if (partial_.empty()) {
        line(bytes.substr(0, nl));
      } else {
        partial_.append(bytes.substr(0, nl));
        line(partial_);
        partial_.clear();
      }
      bytes.remove_prefix(nl + 1);
    }
  }

  void finish() override {
    if (!partial_.empty()) {
      line(partial_);
      partial_.clear();
    }
    if (batch_.num_rows() > 0) emit();
  }

 private:
  void line(std::string_view text) {
    adder_.add(batch_, text, ++line_no_);
    batch_bytes_ += text.size() + 1;
    if (sink_.full(batch_.num_rows(), batch_bytes_)) emit();
  }

  void emit() {
    // Declared columns the batch lacks are added as nulls of their type (values were converted
    // as they were read).
    if (!options_.only_declared) batch_.conform(options_.schema);
    // The next batch starts with every column seen so far, so that a value clashing with an
    // earlier batch's type is reported with its own line number.
    Table next(batch_.schema());
    sink_.emit(std::move(batch_));
    batch_ = std::move(next);
    batch_bytes_ = 0;
  }

  ReadOptions options_;
  LineAdder adder_;
  BatchSink& sink_;
  Table batch_;
  std::size_t batch_bytes_ = 0;
  std::size_t line_no_ = 0;
  std::string partial_;
};

std::unique_ptr<StreamFormat> json_lines_stream(const ReadOptions& options, BatchSink& sink) {
  return std::make_unique<JsonLinesStream>(options, sink);
}

}  // namespace interloper::detail
