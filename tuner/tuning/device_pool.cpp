#include "tuner/tuning/device_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace swr {

bool worker_died(const VariantOutcome& outcome) {
  return !outcome.dropped && (outcome.status == db::MeasurementStatus::fault ||
                              outcome.status == db::MeasurementStatus::timeout);
}

DevicePool::DevicePool(std::vector<std::string> device_names, Work work) : work_(std::move(work)) {
  for (std::string& name : device_names) devices_.push_back(Device{std::move(name), true, 0, {}});
  for (std::size_t device = 0; device < devices_.size(); ++device) {
    threads_.emplace_back([this, device] { serve(device); });
  }
}

DevicePool::~DevicePool() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    closed_ = true;
  }
  changed_.notify_all();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void DevicePool::push(std::size_t item) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(item);
  }
  changed_.notify_all();
}

void DevicePool::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

void DevicePool::finish() {
  close();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  std::lock_guard lock(mutex_);
  if (error_) std::rethrow_exception(error_);
}

void DevicePool::locked(const std::function<void()>& body) {
  std::lock_guard lock(mutex_);
  body();
}

bool DevicePool::stopped() const {
  std::lock_guard lock(mutex_);
  return stopped_;
}

std::size_t DevicePool::active_devices() const {
  std::size_t active = 0;
  for (const Device& device : devices_) active += device.active ? 1 : 0;
  return active;
}

void DevicePool::fail(std::exception_ptr error) {
  if (!error_) error_ = error;
  stopped_ = true;
  changed_.notify_all();
}

void DevicePool::drop(std::size_t device, const std::string& why) {
  Device& dropped = devices_[device];
  dropped.active = false;
  // Back to the front, in their order: the other devices measure them next.
  for (auto held = dropped.held.rbegin(); held != dropped.held.rend(); ++held) {
    queue_.push_front(held->item);
  }
  dropped.held.clear();
  work_.say("swr-tune: " + dropped.name + " is dropped from this run: " + why +
            "; the other devices measure its variants");
  changed_.notify_all();
}

bool DevicePool::record_held(std::size_t device) {
  std::vector<Held> held = std::move(devices_[device].held);
  devices_[device].held.clear();
  for (const Held& entry : held) {
    if (!work_.record(device, entry.item, entry.outcome)) return false;
  }
  return true;
}

bool DevicePool::take_outcome(std::size_t device, std::size_t item, VariantOutcome outcome) {
  Device& current = devices_[device];
  if (worker_died(outcome) && active_devices() > 1) {
    current.held.push_back({item, std::move(outcome)});
    if (current.held.size() >= static_cast<std::size_t>(kFaultStreakLimit)) {
      const std::string error = current.held.back().outcome.error;
      drop(device, std::to_string(current.held.size()) +
                       " variants in a row ended with its measurement worker dead (the last: " +
                       error.substr(0, error.find('\n')) + ")");
    }
    return true;
  }
  // The device measured something without dying: what died on it before was the variant's doing.
  if (!worker_died(outcome) && !record_held(device)) return false;
  return work_.record(device, item, outcome);
}

void DevicePool::serve(std::size_t device) {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] {
      return stopped_ || !devices_[device].active || !queue_.empty() ||
             (closed_ && in_flight_ == 0);
    });
    if (stopped_ || !devices_[device].active || queue_.empty()) break;
    try {
      if (work_.should_stop()) {
        stopped_ = true;
        changed_.notify_all();
        break;
      }
    } catch (...) {
      fail(std::current_exception());
      break;
    }
    std::vector<std::size_t> items;
    const std::size_t take = work_.measure_batch ? std::max<std::size_t>(work_.batch_size, 1) : 1;
    while (!queue_.empty() && items.size() < take) {
      items.push_back(queue_.front());
      queue_.pop_front();
    }
    in_flight_ += items.size();
    lock.unlock();

    std::vector<VariantOutcome> outcomes;
    std::exception_ptr error;
    std::string cannot_start;
    try {
      if (work_.measure_batch) {
        outcomes = work_.measure_batch(device, items);
        if (outcomes.size() != items.size()) {
          throw std::logic_error("a batch of " + std::to_string(items.size()) + " gave " +
                                 std::to_string(outcomes.size()) + " outcomes");
        }
      } else {
        outcomes.push_back(work_.measure(device, items.front()));
      }
    } catch (const std::runtime_error& failure) {
      error = std::current_exception();
      cannot_start = failure.what();
    } catch (...) {
      error = std::current_exception();
    }

    lock.lock();
    in_flight_ -= items.size();
    if (error && cannot_start.empty()) {
      fail(error);
      break;
    }
    if (error) {
      for (auto item = items.rbegin(); item != items.rend(); ++item) queue_.push_front(*item);
      Device& current = devices_[device];
      // The last device ends the run with why at once, as a one-GPU run always has.
      if (active_devices() == 1) {
        fail(error);
        break;
      }
      if (++current.start_failures >= kWorkerStartAttempts) {
        drop(device, cannot_start);
        break;
      }
      changed_.notify_all();
      continue;
    }
    devices_[device].start_failures = 0;
    try {
      for (std::size_t i = 0; i < items.size() && !stopped_; ++i) {
        if (!take_outcome(device, items[i], std::move(outcomes[i]))) stopped_ = true;
      }
    } catch (...) {
      fail(std::current_exception());
    }
    changed_.notify_all();
  }
  // What this device still holds died on it with nothing after to tell: recorded as it came.
  if (!error_ && devices_[device].active && !devices_[device].held.empty()) {
    try {
      record_held(device);
    } catch (...) {
      fail(std::current_exception());
    }
  }
  changed_.notify_all();
}

}  // namespace swr
