// An attention variant's database row: the shared record (variant_record.hpp) of a variant the
// parallel compiler produced, plus which bytes its roofline counted.
#pragma once

#include "generator/parallel_compiler.hpp"
#include "tuner/tuning/variant_record.hpp"

namespace swr {

db::MeasurementRecord measured_variant_record(const VariantRecordContext& context,
                                              const AttentionProblem& problem,
                                              const GpuProfile& gpu, const CompileResult& compiled,
                                              const VariantOutcome& outcome);

// Its compile error, the log cut at kMaximumStoredLogBytes.
db::MeasurementRecord compile_failure_record(const VariantRecordContext& context,
                                             const CompileResult& compiled);

}  // namespace swr
