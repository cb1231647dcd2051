#include "tuner/tuning/worker_client.hpp"

#include <signal.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "support/child_process.hpp"
#include "tuner/tuning/variant_record.hpp"
#include "tuner/tuning/worker_protocol.hpp"

namespace swr {
namespace {

using Clock = ChildProcess::Clock;

std::chrono::milliseconds seconds(double value) {
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(value * 1000.0)));
}

VariantOutcome failed(db::MeasurementStatus status, std::string error) {
  VariantOutcome outcome;
  outcome.status = status;
  outcome.error = std::move(error);
  return outcome;
}

}  // namespace

double expected_measurement_seconds(const AttentionProblem& problem, const GpuProfile& gpu) {
  const ProblemWork work = problem_work(problem);
  const double roofline = roofline_seconds(work.flops, work.compulsory_bytes, gpu);
  // ~1 s of timed runs, plus some 40 kernel runs at the roofline (check, warm-up, counter passes,
  // and room for a variant several times slower than the roofline).
  return 2.0 + 40.0 * roofline;
}

double variant_timeout_seconds(const AttentionProblem& problem, const GpuProfile& gpu,
                               const WorkerTimeouts& timeouts) {
  return std::max(timeouts.minimum_variant_seconds,
                  timeouts.expected_time_multiple * expected_measurement_seconds(problem, gpu));
}

double expected_measurement_seconds(const AttentionBackwardProblem& problem,
                                    const GpuProfile& gpu) {
  const ProblemWork work = problem_work(problem);
  const double roofline = roofline_seconds(work.flops, work.compulsory_bytes, gpu);
  return 2.0 + 40.0 * roofline + 4.0 * problem.shape.flops() / 1e12;
}

double variant_timeout_seconds(const AttentionBackwardProblem& problem, const GpuProfile& gpu,
                               const WorkerTimeouts& timeouts) {
  return std::max(timeouts.minimum_variant_seconds,
                  timeouts.expected_time_multiple * expected_measurement_seconds(problem, gpu));
}

std::vector<std::string> measurement_worker_command(const char* subcommand) {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) self = "/proc/self/exe";
  return {self.string(), subcommand};
}

WorkerClient::WorkerClient(std::vector<std::string> command, WorkerTimeouts timeouts,
                           const InterruptFlag* interrupt,
                           std::map<std::string, std::string> environment)
    : command_(std::move(command)),
      environment_(std::move(environment)),
      timeouts_(timeouts),
      interrupt_(interrupt) {
  signal(SIGPIPE, SIG_IGN);
}

WorkerClient::~WorkerClient() {
  stop_worker();
}

void WorkerClient::start_worker() {
  worker_ = std::make_unique<ChildProcess>(command_, environment_);
  ++workers_started_;
  const ChildProcess::ReadResult ready = worker_->read_line(Clock::now() + timeouts_.startup);
  std::string problem;
  if (ready.status == ChildProcess::ReadStatus::line) {
    nlohmann::json message;
    try {
      message = nlohmann::json::parse(ready.line);
    } catch (const nlohmann::json::exception&) {
      problem = "it wrote '" + ready.line.substr(0, 200) + "' instead of its ready message";
    }
    if (problem.empty() && message_type(message) == "ready") {
      device_name_ = message.value("device", std::string());
      return;
    }
    if (problem.empty() && message_type(message) == "startup_error") {
      problem = message.value("error", std::string("no reason given"));
    } else if (problem.empty()) {
      problem = "unexpected first message " + message.dump();
    }
  } else if (ready.status == ChildProcess::ReadStatus::timed_out) {
    problem = "no ready message within " +
              std::to_string(
                  std::chrono::duration_cast<std::chrono::seconds>(timeouts_.startup).count()) +
              " s";
  } else {
    problem = "it ended before it was ready";
  }
  const std::string ending = end_worker_and_describe(true);
  throw std::runtime_error("the measurement worker could not start: " + problem + " (" + ending +
                           ")");
}

void WorkerClient::stop_worker() {
  if (!worker_) return;
  worker_->write_line(quit_message().dump(), Clock::now() + std::chrono::seconds(1));
  worker_->close_stdin();
  worker_->wait_for_exit(std::chrono::seconds(5));
  worker_.reset();
}

std::string WorkerClient::end_worker_and_describe(bool kill_now) {
  const ChildExit exit =
      kill_now ? worker_->kill_and_reap() : worker_->wait_for_exit(std::chrono::seconds(5));
  std::string text = "worker " + exit.describe();
  const std::string stderr_text = worker_->recent_stderr();
  if (!stderr_text.empty()) text += "; its last stderr: " + stderr_text;
  worker_.reset();
  return text;
}

VariantOutcome GemmWorkerClient::measure(const GemmVariantJob& job) {
  return worker_.measure_message(gemm_measure_request(job),
                                 gemm_measurement_timeout_seconds(job.problem, job.gpu));
}

VariantOutcome BackwardWorkerClient::measure(const BackwardVariantJob& job) {
  return worker_.measure_message(measure_request(job),
                                 variant_timeout_seconds(job.problem, job.gpu, WorkerTimeouts{}));
}

VariantOutcome WorkerClient::measure(const VariantJob& job) {
  return measure_message(measure_request(job),
                         variant_timeout_seconds(job.problem, job.gpu, timeouts_));
}

void WorkerClient::send_request(const std::string& request) {
  // A worker found dead before it took the request (it ended between variants) is replaced once.
  for (int attempt = 0;; ++attempt) {
    if (!worker_) start_worker();
    if (worker_->write_line(request, Clock::now() + std::chrono::seconds(60))) break;
    const std::string ending = end_worker_and_describe(true);
    if (attempt > 0) {
      throw std::runtime_error("the measurement worker does not take requests: " + ending);
    }
  }
}

std::vector<VariantOutcome> WorkerClient::measure_batch(const std::vector<VariantJob>& jobs) {
  if (jobs.size() == 1) return {measure(jobs.front())};
  return measure_isolating_faults(
      jobs.size(), [&](const std::vector<std::size_t>& positions, bool one_session_each) {
        return request_batch(jobs, positions, one_session_each);
      });
}

BatchAttempt WorkerClient::request_batch(const std::vector<VariantJob>& jobs,
                                         const std::vector<std::size_t>& positions,
                                         bool one_session_each) {
  const auto sent = std::chrono::steady_clock::now();
  std::vector<VariantJob> asked;
  double timeout = 0;
  for (std::size_t position : positions) {
    asked.push_back(jobs.at(position));
    timeout += variant_timeout_seconds(asked.back().problem, asked.back().gpu, timeouts_);
  }
  send_request(measure_batch_request(asked, one_session_each).dump());

  BatchAttempt attempt;
  std::optional<std::size_t> started;  // the variant the worker said it began last
  bool counting = false;               // it said it counts the batch
  const auto abandon = [this] { return interrupt_ != nullptr && interrupt_->drop_requested(); };
  const Clock::time_point deadline = Clock::now() + seconds(timeout);
  const auto died = [&](db::MeasurementStatus status, const std::string& error) {
    attempt.death = failed(status, error);
    if (!counting) attempt.culprit = started;
    return attempt;
  };
  while (true) {
    const ChildProcess::ReadResult read = worker_->read_line(deadline, abandon);
    switch (read.status) {
      case ChildProcess::ReadStatus::line: {
        nlohmann::json message;
        std::vector<WorkerReply> replies;
        try {
          message = nlohmann::json::parse(read.line);
          if (message_type(message) == "started") {
            started = message.at("index").get<std::size_t>();
            counting = false;
            continue;
          }
          if (message_type(message) == "counting") {
            counting = true;
            continue;
          }
          replies = replies_from_batch_result(message);
        } catch (const std::exception& error) {
          const std::string ending = end_worker_and_describe(true);
          return died(db::MeasurementStatus::fault,
                      std::string("unreadable reply from the measurement worker (") + error.what() +
                          "); " + ending);
        }
        const double round_trip_ms = host_ms_since(sent);
        for (WorkerReply& reply : replies) {
          if (reply.outcome.method.is_object()) {
            reply.outcome.method["host_ms"]["round_trip_batch"] = round_trip_ms;
          }
        }
        if (!replies.empty() && replies.back().context_lost) {
          // The worker exits by itself; the variants before it are measured again without it.
          end_worker_and_describe(false);
          attempt.culprit = replies.size() - 1;
          attempt.death = std::move(replies.back().outcome);
          return attempt;
        }
        if (replies.size() != positions.size()) {
          const std::string ending = end_worker_and_describe(true);
          return died(db::MeasurementStatus::fault,
                      "the measurement worker answered " + std::to_string(replies.size()) + " of " +
                          std::to_string(positions.size()) + " variants; " + ending);
        }
        for (WorkerReply& reply : replies) attempt.outcomes.push_back(std::move(reply.outcome));
        attempt.complete = true;
        return attempt;
      }
      case ChildProcess::ReadStatus::end_of_file:
        return died(db::MeasurementStatus::fault,
                    std::string("the measurement worker died while ") +
                        (counting ? "counting a batch" : "measuring") + ": " +
                        end_worker_and_describe(false));
      case ChildProcess::ReadStatus::timed_out: {
        char limit[32];
        std::snprintf(limit, sizeof(limit), "%.0f", timeout);
        return died(db::MeasurementStatus::timeout, std::string("no result of the batch within ") +
                                                        limit + " s; " +
                                                        end_worker_and_describe(true));
      }
      case ChildProcess::ReadStatus::abandoned: {
        end_worker_and_describe(true);
        attempt.death = failed(db::MeasurementStatus::timeout, "dropped on request");
        attempt.death.dropped = true;
        return attempt;
      }
    }
  }
}

VariantOutcome WorkerClient::measure_message(const nlohmann::json& message, double timeout) {
  const auto sent = std::chrono::steady_clock::now();
  send_request(message.dump());

  const auto abandon = [this] { return interrupt_ != nullptr && interrupt_->drop_requested(); };
  const ChildProcess::ReadResult read =
      worker_->read_line(Clock::now() + seconds(timeout), abandon);
  switch (read.status) {
    case ChildProcess::ReadStatus::line: {
      WorkerReply reply;
      try {
        reply = reply_from_result_message(nlohmann::json::parse(read.line));
      } catch (const std::exception& error) {
        const std::string ending = end_worker_and_describe(true);
        return failed(db::MeasurementStatus::fault,
                      std::string("unreadable reply from the measurement worker (") + error.what() +
                          "); " + ending);
      }
      // The worker exits by itself after a lost context; the next variant starts a new one.
      if (reply.context_lost) end_worker_and_describe(false);
      // The whole request as the tuner saw it (the worker's own phases are beside it).
      if (reply.outcome.method.is_object())
        reply.outcome.method["host_ms"]["round_trip"] = host_ms_since(sent);
      return reply.outcome;
    }
    case ChildProcess::ReadStatus::end_of_file:
      return failed(db::MeasurementStatus::fault, "the measurement worker died while measuring: " +
                                                      end_worker_and_describe(false));
    case ChildProcess::ReadStatus::timed_out: {
      char limit[32];
      std::snprintf(limit, sizeof(limit), "%.0f", timeout);
      return failed(db::MeasurementStatus::timeout, std::string("no result within ") + limit +
                                                        " s; " + end_worker_and_describe(true));
    }
    case ChildProcess::ReadStatus::abandoned: {
      end_worker_and_describe(true);
      VariantOutcome outcome = failed(db::MeasurementStatus::timeout, "dropped on request");
      outcome.dropped = true;
      return outcome;
    }
  }
  throw std::logic_error("unhandled read status");
}

}  // namespace swr
