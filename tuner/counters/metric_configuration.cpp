#include "tuner/counters/metric_configuration.hpp"

#include <stdexcept>

namespace swr {

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
