#pragma once
#include <stdexcept>
namespace interloper {
class Error : public std::runtime_error { public: using std::runtime_error::runtime_error; };
class PartitionError : public Error { public: using Error::Error; };
class DataError : public Error { public: using Error::Error; };
class DestinationError : public Error { public: using Error::Error; };
class DagError : public Error { public: using Error::Error; };
class RunError : public Error { public: using Error::Error; };
class PipelineError : public Error { public: using Error::Error; };
}  // namespace interloper
