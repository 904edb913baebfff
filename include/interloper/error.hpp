// interloper/error.hpp — the exception hierarchy.
//
// Every error the library raises on purpose derives from il::Error, so callers that only want to
// report a failure catch one type. The subclasses say which layer refused the operation. Malformed
// values (a bad key, an unknown granularity or time zone) are std::invalid_argument instead, as
// for any standard parsing function.
//
//   try {
//     config.check(window);
//   } catch (const il::PartitionError& e) {
//     std::cerr << "asset 'ads_stats': " << e.what() << '\n';
//   }
//
// Messages name the offending value; they never name the asset, which the caller prefixes.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace interloper {

// Base of every interloper error. Thread-safe to copy and throw like any std::runtime_error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A window or partition that a partitioning cannot serve, or a bad partitioning definition.
class PartitionError : public Error {
 public:
  using Error::Error;
};

// Rows that cannot be decoded, typed or placed in a partition.
class DataError : public Error {
 public:
  using Error::Error;
};

// A destination that failed to read, write or count.
class DestinationError : public Error {
 public:
  using Error::Error;
};

// A DAG that cannot be built: cycles, unknown dependencies, incompatible edges. When the error
// is about one asset (and one of its dependencies), it names them, so that a caller holding
// the asset's declaration (a pipeline file) can point at it.
class DagError : public Error {
 public:
  using Error::Error;
  DagError(const std::string& message, std::string asset, std::string dependency = {})
      : Error(message), asset_(std::move(asset)), dependency_(std::move(dependency)) {}
  // The asset the error is about: the one with the unknown or incompatible dependency, the
  // second declaration of a duplicate name, the first asset of a cycle. "" when none.
  const std::string& asset() const noexcept { return asset_; }
  // The dependency of asset() at fault (unknown, incompatible, or the next asset of a cycle).
  const std::string& dependency() const noexcept { return dependency_; }

 private:
  std::string asset_;
  std::string dependency_;
};

// A run that failed or could not start.
class RunError : public Error {
 public:
  using Error::Error;
};

// A pipeline file that cannot be loaded or executed.
class PipelineError : public Error {
 public:
  using Error::Error;
};

}  // namespace interloper
