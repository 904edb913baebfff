// TableStreamParser: the format-independent shell around the JSON lines and CSV streams.
#include "interloper/data/stream.hpp"

namespace interloper {

struct TableStreamParser::State {
  State(std::function<void(Table&&)> on_batch, Limits limits) : sink(std::move(on_batch), limits) {}
  detail::BatchSink sink;
  std::unique_ptr<detail::StreamFormat> format;
};

TableStreamParser::TableStreamParser(Format format, std::function<void(Table&&)> on_batch,
                                     Limits limits, const ReadOptions& options)
    : state_(std::make_unique<State>(std::move(on_batch), limits)) {
  state_->format = format == Format::csv ? detail::csv_stream(options, state_->sink)
                                         : detail::json_lines_stream(options, state_->sink);
}

TableStreamParser::TableStreamParser(Format format, std::function<void(Table&&)> on_batch,
                                     Limits limits, const Schema* declared)
    : TableStreamParser(format, std::move(on_batch), limits,
                        declared != nullptr ? ReadOptions{*declared, true} : ReadOptions{}) {}

TableStreamParser::~TableStreamParser() = default;

void TableStreamParser::feed(std::string_view bytes) { state_->format->feed(bytes); }

void TableStreamParser::finish() { state_->format->finish(); }

std::uint64_t TableStreamParser::rows() const { return state_->sink.rows(); }

}  // namespace interloper
