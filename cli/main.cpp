// swr-tune: the command line of swr. Bad input is one line on stderr and exit code 2, before
// anything is written; any other failure is one line and exit code 1.
#include <signal.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/option_values.hpp"
#include "swr/usage_error.hpp"
#include "tuner/tuning/measurement_worker.hpp"
#include "tuner/tuning/worker_client.hpp"

namespace {

int report_error(const std::string& message, int exit_code) {
  std::string line = message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::fprintf(stderr, "swr-tune: error: %s\n", line.c_str());
  return exit_code;
}

// Arguments no option or subcommand took, in command-line order: CLI11 keeps them (allow_extras)
// in the app and the subcommand that met them, and remaining(true) lists the app's first.
std::string unexpected_arguments_message(const std::vector<std::string>& arguments) {
  std::string joined;
  for (const std::string& argument : arguments) joined += (joined.empty() ? "" : " ") + argument;
  return "unknown option or argument '" + joined +
         "': allowed the options `swr-tune [SUBCOMMAND] --help` lists";
}

// Output that could not be written (a reader that closed the pipe, a full disk) is a failure:
// exit code 1 with the reason, after the command has stored what it stores.
int checked_output(int exit_code) {
  errno = 0;
  std::cout.flush();
  const int stream_errno = errno;
  if (std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good()) return exit_code;
  int error = errno != 0 ? errno : stream_errno;
  if (error == 0) {
    // The failed write was earlier (its errno is gone): one more byte says why, EPIPE or ENOSPC.
    errno = 0;
    if (::write(STDOUT_FILENO, "\n", 1) < 0) error = errno;
  }
  std::cout.clear();
  return report_error(std::string("cannot write the output to stdout: ") +
                          (error != 0 ? std::strerror(error) : "write failed") +
                          " (anything the command stores was stored before)",
                      exit_code != 0 ? exit_code : 1);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace swr::cli;
  // The tuner's measurement worker (this executable again): hidden, never parsed as options.
  // A closed pipe is an error to report (checked_output), not a signal that kills the command
  // before it stores its results. The measurement workers keep the default.
  if (argc != 2 || (std::string(argv[1]) != swr::kMeasureWorkerSubcommand &&
                    std::string(argv[1]) != swr::kMeasureGemmWorkerSubcommand &&
                    std::string(argv[1]) != swr::kMeasureAttentionBackwardWorkerSubcommand)) {
    signal(SIGPIPE, SIG_IGN);
  } else {
    signal(SIGPIPE, SIG_DFL);
  }
  if (argc == 2 && std::string(argv[1]) == swr::kMeasureWorkerSubcommand) {
    return swr::run_measurement_worker();
  }
  if (argc == 2 && std::string(argv[1]) == swr::kMeasureGemmWorkerSubcommand) {
    return swr::run_gemm_measurement_worker();
  }
  if (argc == 2 && std::string(argv[1]) == swr::kMeasureAttentionBackwardWorkerSubcommand) {
    return swr::run_attention_backward_measurement_worker();
  }

  CLI::App app(
      "Generates FlashAttention-style CUDA kernels for a target GPU, compiles every variant with "
      "NVRTC, and tunes them.\n"
      "Without a subcommand it runs the main job: swr-tune --gpu G --seq S [options] "
      "(same as `swr-tune tune`).",
      "swr-tune");
  app.set_version_flag("--version", std::string("swr-tune ") + SWR_VERSION);
  app.require_subcommand(0, 1);
  app.footer(
      "Examples:\n"
      "  swr-tune gpus\n"
      "  swr-tune space --gpu gb10 --seq 131072\n"
      "  swr-tune space --family gemm --gpu h200 --size 4096\n"
      "  swr-tune compile --gpu h200 --seq 16384 --head-dim 128 --jobs 8\n"
      "  swr-tune compile --family gemm --gpu h200 --m 8192 --n 4096 --k 1024 --out gemm/\n"
      "  swr-tune --gpu gb10 --seq 131072\n"
      "  swr-tune --family gemm --gpu h200 --size 4096\n"
      "  swr-tune show --gpu h200\n"
      "  swr-tune model --gpu gb10 --seq 131072\n"
      "  swr-tune query --gpu h200 --seq 65536 --head-dim 128\n"
      "  swr-tune query --family gemm --gpu h200 --size 4096\n"
      "  swr-tune export --gpu h200 --out kernels-h200/\n"
      "  swr-tune import --db all.db machine-a.db kernels-h100/\n"
      "  swr-tune report --gpu h200 --out report/\n"
      "Run `swr-tune SUBCOMMAND --help` for the options of each.");

  TuneOptions main_job;
  add_tune_options(app, main_job);
  GpusOptions gpus;
  CLI::App* gpus_command = add_gpus_command(app, gpus);
  SpaceOptions space;
  CLI::App* space_command = add_space_command(app, space);
  CompileCommandOptions compile;
  CLI::App* compile_command = add_compile_command(app, compile);
  TuneOptions tune;
  CLI::App* tune_command = add_tune_command(app, tune);
  ShowOptions show;
  CLI::App* show_command = add_show_command(app, show);
  ModelOptions model;
  CLI::App* model_command = add_model_command(app, model);
  QueryOptions query;
  CLI::App* query_command = add_query_command(app, query);
  ExportCommandOptions export_options;
  CLI::App* export_command = add_export_command(app, export_options);
  ImportCommandOptions import_options;
  CLI::App* import_command = add_import_command(app, import_options);
  ReportOptions report;
  CLI::App* report_command = add_report_command(app, report);

  refuse_empty_option_values(app);
  app.allow_extras();
  for (CLI::App* subcommand : app.get_subcommands({})) subcommand->allow_extras();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version arrive as "errors" with exit code 0; CLI11 prints them.
    if (error.get_exit_code() == 0) return app.exit(error);
    return report_error(error.what(), 2);
  }
  if (const std::vector<std::string> extras = app.remaining(true); !extras.empty()) {
    return report_error(unexpected_arguments_message(extras), 2);
  }

  const auto run = [&]() -> int {
    if (gpus_command->parsed()) return run_gpus_command(gpus);
    if (space_command->parsed()) return run_space_command(space);
    if (compile_command->parsed()) return run_compile_command(compile);
    if (tune_command->parsed()) return run_tune_command(tune);
    if (show_command->parsed()) return run_show_command(show);
    if (model_command->parsed()) return run_model_command(model);
    if (query_command->parsed()) return run_query_command(query);
    if (export_command->parsed()) return run_export_command(export_options);
    if (import_command->parsed()) return run_import_command(import_options);
    if (report_command->parsed()) return run_report_command(report);
    return run_tune_command(main_job);
  };
  try {
    return checked_output(run());
  } catch (const swr::UsageError& error) {
    return report_error(error.what(), 2);
  } catch (const std::exception& error) {
    return report_error(error.what(), 1);
  }
}
