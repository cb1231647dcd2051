#include "tuner/counters/l2_metric_set.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace swr {
namespace {

constexpr double kSectorBytes = 32;

std::vector<L2FigureFormula> l2_formulas() {
  return {{L2Figure::sectors_from_tex, {"lts__t_sectors_srcunit_tex.sum"}},
          {L2Figure::sector_misses_from_tex, {"lts__t_sectors_srcunit_tex_lookup_miss.sum"}},
          {L2Figure::hit_rate_percent, {"lts__t_sector_hit_rate.pct"}}};
}

L2MetricSet l2_only_set() {
  return {"l2_only", l2_formulas(), ""};
}

L2MetricSet dram_bytes_set() {
  L2MetricSet set{"dram_bytes", l2_formulas(), "dram__bytes"};
  set.formulas.push_back({L2Figure::dram_bytes_read, {"dram__bytes_read.sum"}});
  set.formulas.push_back({L2Figure::dram_bytes_written, {"dram__bytes_write.sum"}});
  return set;
}

// GB202-style names (sm_120 parts).
L2MetricSet dram_op_bytes_set() {
  L2MetricSet set{"dram_op_bytes", l2_formulas(), "dram__bytes"};
  set.formulas.push_back({L2Figure::dram_bytes_read, {"dram__bytes_op_read.sum"}});
  set.formulas.push_back({L2Figure::dram_bytes_written, {"dram__bytes_op_write.sum"}});
  return set;
}

// Integrated parts (GB10) have no DRAM counters: what L2 filled from memory, in sectors, is the
// read traffic; writes have no proxy and stay missing.
L2MetricSet l2_fill_sectors_set() {
  L2MetricSet set{"l2_fill_sectors", l2_formulas(), "l2_fill_sectors"};
  set.formulas.push_back({L2Figure::dram_bytes_read,
                          {"lts__d_sectors_fill_sysmem.sum", "lts__d_sectors_fill_device.sum"},
                          kSectorBytes});
  return set;
}

void set_figure(L2Counters& counters, L2Figure figure, double value) {
  switch (figure) {
    case L2Figure::sectors_from_tex:
      counters.l2_sectors_from_tex = value;
      break;
    case L2Figure::sector_misses_from_tex:
      counters.l2_sector_misses_from_tex = value;
      break;
    case L2Figure::hit_rate_percent:
      counters.l2_hit_rate_percent = value;
      break;
    case L2Figure::dram_bytes_read:
      counters.dram_bytes_read = value;
      break;
    case L2Figure::dram_bytes_written:
      counters.dram_bytes_written = value;
      break;
  }
}

}  // namespace

std::vector<std::string> L2MetricSet::metric_names() const {
  std::vector<std::string> names;
  for (const L2FigureFormula& formula : formulas) {
    for (const std::string& metric : formula.metrics) {
      if (std::find(names.begin(), names.end(), metric) == names.end()) names.push_back(metric);
    }
  }
  return names;
}

L2Counters L2MetricSet::evaluate(const std::vector<double>& values) const {
  const std::vector<std::string> names = metric_names();
  if (values.size() != names.size()) {
    throw std::invalid_argument("L2MetricSet::evaluate: " + std::to_string(values.size()) +
                                " values for " + std::to_string(names.size()) + " metrics");
  }
  L2Counters counters;
  counters.dram_source = dram_source;
  for (const L2FigureFormula& formula : formulas) {
    double sum = 0;
    for (const std::string& metric : formula.metrics) {
      sum += values[std::find(names.begin(), names.end(), metric) - names.begin()];
    }
    // A ratio over nothing (a hit rate of zero sectors) evaluates to NaN: no figure, not a value.
    if (std::isfinite(sum)) set_figure(counters, formula.figure, sum * formula.scale);
  }
  return counters;
}

std::vector<L2MetricSet> l2_metric_sets_for_chip(std::string_view chip) {
  if (chip == "GB20B") return {l2_fill_sectors_set(), l2_only_set()};
  return {dram_bytes_set(), dram_op_bytes_set(), l2_fill_sectors_set(), l2_only_set()};
}

MetricConfiguration::MetricConfiguration(const CuptiLibrary& cupti, const std::string& chip,
                                         const std::vector<std::string>& metric_names,
                                         const std::vector<std::uint8_t>& counter_availability)
    : cupti_(cupti), chip_(chip), metric_names_(metric_names) {
  auto initialize = SWR_CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  initialize.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  initialize.pChipName = chip_.c_str();
  initialize.pCounterAvailabilityImage =
      counter_availability.empty() ? nullptr : counter_availability.data();
  SWR_CUPTI(cupti_, cuptiProfilerHostInitialize(&initialize));
  host_ = initialize.pHostObject;
  try {
    std::vector<const char*> names = metric_name_pointers();
    auto add = SWR_CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    add.pHostObject = host_;
    add.ppMetricNames = names.data();
    add.numMetrics = names.size();
    SWR_CUPTI(cupti_, cuptiProfilerHostConfigAddMetrics(&add));

    auto size = SWR_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    size.pHostObject = host_;
    SWR_CUPTI(cupti_, cuptiProfilerHostGetConfigImageSize(&size));
    config_image_.resize(size.configImageSize);
    auto image = SWR_CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    image.pHostObject = host_;
    image.configImageSize = config_image_.size();
    image.pConfigImage = config_image_.data();
    SWR_CUPTI(cupti_, cuptiProfilerHostGetConfigImage(&image));

    auto passes = SWR_CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
    passes.configImageSize = config_image_.size();
    passes.pConfigImage = config_image_.data();
    SWR_CUPTI(cupti_, cuptiProfilerHostGetNumOfPasses(&passes));
    passes_ = passes.numOfPasses;
  } catch (...) {
    auto deinitialize = SWR_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    deinitialize.pHostObject = host_;
    cupti_.cuptiProfilerHostDeinitialize(&deinitialize);
    throw;
  }
}

MetricConfiguration::~MetricConfiguration() {
  auto deinitialize = SWR_CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  deinitialize.pHostObject = host_;
  cupti_.cuptiProfilerHostDeinitialize(&deinitialize);
}

std::vector<const char*> MetricConfiguration::metric_name_pointers() const {
  std::vector<const char*> names;
  for (const std::string& name : metric_names_) names.push_back(name.c_str());
  return names;
}

std::vector<double> MetricConfiguration::evaluate(const std::vector<std::uint8_t>& counter_data,
                                                  std::size_t range_index) const {
  std::vector<const char*> names = metric_name_pointers();
  std::vector<double> values(names.size(), 0.0);
  auto evaluate = SWR_CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  evaluate.pHostObject = host_;
  evaluate.pCounterDataImage = counter_data.data();
  evaluate.counterDataImageSize = counter_data.size();
  evaluate.rangeIndex = range_index;
  evaluate.ppMetricNames = names.data();
  evaluate.numMetrics = names.size();
  evaluate.pMetricValues = values.data();
  SWR_CUPTI(cupti_, cuptiProfilerHostEvaluateToGpuValues(&evaluate));
  return values;
}

L2MetricConfiguration configure_l2_metrics(const CuptiLibrary& cupti, const std::string& chip,
                                           const std::vector<std::uint8_t>& counter_availability) {
  std::string rejected;
  for (const L2MetricSet& set : l2_metric_sets_for_chip(chip)) {
    try {
      return {set, std::make_unique<MetricConfiguration>(cupti, chip, set.metric_names(),
                                                         counter_availability)};
    } catch (const CuptiError& error) {
      if (error.result() == CUPTI_ERROR_INVALID_CHIP_NAME) throw;
      rejected += (rejected.empty() ? "" : "; ") + set.name + ": " + error.what();
    }
  }
  throw std::runtime_error("no L2 metric set is accepted for chip " + chip + " (" + rejected + ")");
}

std::vector<std::string> cupti_supported_chips(const CuptiLibrary& cupti) {
  auto params = SWR_CUPTI_PARAMS(CUpti_Profiler_Host_GetSupportedChips_Params);
  SWR_CUPTI(cupti, cuptiProfilerHostGetSupportedChips(&params));
  std::vector<std::string> chips;
  for (std::size_t i = 0; i < params.numChips; ++i) chips.emplace_back(params.ppChipNames[i]);
  return chips;
}

}  // namespace swr
