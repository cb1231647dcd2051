// The one gate of every test that needs a GPU: it skips only where the machine has no NVIDIA
// device; where one is present and the CUDA driver cannot use it, the test fails with the
// driver's reason (a broken driver must not pass as "no GPU").
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "driver/device_presence.hpp"

#define SWR_REQUIRE_GPU()                                                                          \
  do {                                                                                             \
    if (!::swr::nvidia_hardware_present()) {                                                       \
      GTEST_SKIP() << "no NVIDIA device on this machine";                                          \
    }                                                                                              \
    if (const std::string swr_unusable = ::swr::driver_unusable_reason(); !swr_unusable.empty()) { \
      FAIL() << "an NVIDIA device is present but the CUDA driver cannot use it: " << swr_unusable; \
    }                                                                                              \
  } while (false)
