// Spreads a session's measurements over the devices of a run: one thread per device takes the
// next item from a shared queue (a faster device takes more), measures it there, and hands the
// outcome on under one lock, so that the database, the progress lines and the session's state
// see one thread at a time.
//
// Faults. A worker that cannot start on a device is tried once more there; a device where it
// fails twice in a row is dropped from the run. While another device is active, a variant whose
// worker died on a device (fault, timeout) is held back: if the device then measures another
// variant, it works and the fault was the variant's (the held one is recorded as measured); if
// kFaultStreakLimit variants in a row die on it, the device is dropped and they go back to the
// queue for the others. Each drop is said with its reason. The last device is never dropped for
// faults (they are recorded, as on a one-GPU run); when it cannot start, the run ends with why.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tuner/tuning/variant_measurer.hpp"

namespace swr {

inline constexpr int kFaultStreakLimit = 3;
inline constexpr int kWorkerStartAttempts = 2;

class DevicePool {
 public:
  struct Work {
    // On the device's thread, without the lock: measure item `item` on device `device`. Throws
    // std::runtime_error when the device cannot measure at all (its worker does not start).
    std::function<VariantOutcome(std::size_t device, std::size_t item)> measure;
    // When set: a device takes up to `batch_size` queued items at once (what is queued, without
    // waiting for more) and measures them in one call, outcomes in the order of `items`; each is
    // then recorded as if measured alone. Throws as `measure` does.
    std::function<std::vector<VariantOutcome>(std::size_t device,
                                              const std::vector<std::size_t>& items)>
        measure_batch;
    std::size_t batch_size = 1;
    // Under the lock, on the device's thread: keep the outcome (commit, print). False stops the
    // run (the outcome was dropped: a second Ctrl-C).
    std::function<bool(std::size_t device, std::size_t item, const VariantOutcome&)> record;
    // Under the lock, before each item: whether to start nothing new.
    std::function<bool()> should_stop;
    // Under the lock: a line of its own (a device dropped).
    std::function<void(const std::string&)> say;
  };

  // Starts one thread per device; `device_names` ("device 1") name them in messages.
  DevicePool(std::vector<std::string> device_names, Work work);
  // Stops taking items and waits for the threads (what is in flight finishes).
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  void push(std::size_t item);
  // No more items: the threads end once everything pushed is measured (or the run stops).
  void close();
  // close(), then waits for the threads; rethrows the first error a thread met (a failing
  // database, every device gone).
  void finish();
  // Runs `body` under the lock, from any thread but a device thread inside record.
  void locked(const std::function<void()>& body);
  bool stopped() const;
  std::size_t device_count() const { return devices_.size(); }

 private:
  struct Held {
    std::size_t item;
    VariantOutcome outcome;
  };
  struct Device {
    std::string name;
    bool active = true;
    int start_failures = 0;
    std::vector<Held> held;  // worker deaths not yet judged
  };

  void serve(std::size_t device);
  // Under the lock. Each returns false when the run must stop.
  bool take_outcome(std::size_t device, std::size_t item, VariantOutcome outcome);
  bool record_held(std::size_t device);
  void drop(std::size_t device, const std::string& why);
  std::size_t active_devices() const;
  void fail(std::exception_ptr error);

  Work work_;
  std::vector<Device> devices_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::size_t> queue_;  // guarded by mutex_, as is everything below
  std::size_t in_flight_ = 0;
  bool closed_ = false;
  bool stopped_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

// Whether an outcome means the worker died with the variant (fault, timeout), the kind of failure a
// broken device gives too.
bool worker_died(const VariantOutcome& outcome);

}  // namespace swr
