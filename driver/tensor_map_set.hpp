// The encoded tensor maps of the N tensors one kernel launch takes by value, kept between
// launches: encoded when the descriptions change, retargeted (cuTensorMapReplaceAddress) when only
// the base addresses move, returned as they are otherwise, so that a launch at the shape, strides
// and pointers of the last one calls no driver entry point. The attention forward, the attention
// backward and the GEMM launchers each keep one.
#pragma once

#include <array>
#include <cstddef>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "driver/tensor_map.hpp"

namespace swr {

template <std::size_t N>
class TensorMapSet {
 public:
  using Maps = std::array<TensorMap, N>;
  using Descriptions = std::array<TensorMapDescription, N>;
  using Addresses = std::array<CUdeviceptr, N>;

  // Thread-safe. On any change every tensor is checked first (tensor_map_problem()): the first
  // problem throws std::invalid_argument with its line and the stored maps stay as they were.
  Maps maps_for(const CudaDriver& driver, const Descriptions& descriptions,
                const Addresses& addresses) {
    std::lock_guard lock(mutex_);
    if (descriptions_ == descriptions && addresses_ == addresses) return maps_;
    if (std::string why = first_problem(descriptions, addresses); !why.empty()) {
      throw std::invalid_argument(why);
    }
    if (descriptions_ == descriptions) {
      for (std::size_t i = 0; i < N; ++i) {
        if (addresses[i] != addresses_[i]) {
          retarget_tensor_map(driver, maps_[i], descriptions[i].name, addresses[i]);
          addresses_[i] = addresses[i];
        }
      }
      return maps_;
    }
    descriptions_.reset();  // stays unset if an encoding throws
    for (std::size_t i = 0; i < N; ++i) {
      maps_[i] = encode_tensor_map(driver, descriptions[i], addresses[i]);
    }
    ++encodings_;
    descriptions_ = descriptions;
    addresses_ = addresses;
    return maps_;
  }

  // Empty when TMA can describe every tensor at its address, else the first tensor's problem
  // (tensor_map_problem()): what maps_for throws, asked without a driver.
  static std::string first_problem(const Descriptions& descriptions, const Addresses& addresses) {
    for (std::size_t i = 0; i < N; ++i) {
      if (std::string why = tensor_map_problem(descriptions[i], addresses[i]); !why.empty()) {
        return why;
      }
    }
    return {};
  }

  // How many times the maps were encoded (tests: never per launch).
  int encodings() const {
    std::lock_guard lock(mutex_);
    return encodings_;
  }

 private:
  mutable std::mutex mutex_;
  std::optional<Descriptions> descriptions_;
  Addresses addresses_{};
  Maps maps_{};
  int encodings_ = 0;
};

}  // namespace swr
