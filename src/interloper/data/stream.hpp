#pragma once
// Private: the pieces of TableStreamParser that each text format implements.

#include <interloper/data.hpp>
#include <memory>
#include <optional>
#include <string_view>

namespace interloper::detail {

// Where a format hands its batches, and when a batch is big enough to hand on.
class BatchSink {
 public:
  BatchSink(std::function<void(Table&&)> on_batch, TableStreamParser::Limits limits)
      : on_batch_(std::move(on_batch)), limits_(limits) {}
  bool full(std::size_t rows, std::size_t bytes) const {
    return rows >= limits_.rows || bytes >= limits_.bytes;
  }
  void emit(Table&& batch) {
    rows_ += batch.num_rows();
    ++batches_;
    on_batch_(std::move(batch));
  }
  std::uint64_t rows() const { return rows_; }
  std::uint64_t batches() const { return batches_; }
  std::size_t batch_rows() const { return limits_.rows; }

 private:
  std::function<void(Table&&)> on_batch_;
  TableStreamParser::Limits limits_;
  std::uint64_t rows_ = 0;
  std::uint64_t batches_ = 0;
};

class StreamFormat {
 public:
  virtual ~StreamFormat() = default;
  virtual void feed(std::string_view bytes) = 0;
  virtual void finish() = 0;
};

std::unique_ptr<StreamFormat> json_lines_stream(const ReadOptions& options, BatchSink& sink);
std::unique_ptr<StreamFormat> csv_stream(const ReadOptions& options, BatchSink& sink);

}  // namespace interloper::detail
