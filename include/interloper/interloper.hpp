// interloper/interloper.hpp — everything public, and the short namespace alias `il`.
//
//   #include <interloper/interloper.hpp>
//   il::TimePartition p = il::TimePartition::from_key("2026-08");
#pragma once

#include "interloper/asset.hpp"
#include "interloper/cli.hpp"
#include "interloper/cron.hpp"
#include "interloper/dag.hpp"
#include "interloper/data.hpp"
#include "interloper/dataset.hpp"
#include "interloper/destination.hpp"
#include "interloper/error.hpp"
#include "interloper/locator.hpp"
#include "interloper/mapping.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/pipeline.hpp"
#include "interloper/plan.hpp"
#include "interloper/run.hpp"
#include "interloper/schedule.hpp"
#include "interloper/store.hpp"
#include "interloper/time.hpp"

namespace il = interloper;
