// The buffered WindowWriter every destination gets unless it streams on its own.
#include <memory>
#include <utility>

#include "interloper/dataset.hpp"

namespace interloper {
namespace {

class BufferedWindowWriter final : public WindowWriter {
 public:
  BufferedWindowWriter(Destination& destination, DatasetRef dataset, const PartitionWindow* window)
      : destination_(destination), dataset_(std::move(dataset)), window_(window) {}

  void append(const Table& batch) override {
    if (rows_.num_columns() == 0 && rows_.empty()) {
      rows_ = batch;
    } else {
      rows_.append_table(batch);
    }
  }

  std::int64_t commit() override { return destination_.write(dataset_, window_, rows_); }

 private:
  Destination& destination_;
  DatasetRef dataset_;
  const PartitionWindow* window_;
  Table rows_;
};

}  // namespace

std::unique_ptr<WindowWriter> Destination::open_writer(const DatasetRef& dataset,
                                                       const PartitionWindow* window) {
  return std::make_unique<BufferedWindowWriter>(*this, dataset, window);
}

}  // namespace interloper
