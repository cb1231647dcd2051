// The subcommands of swr-tune: each one's options (kept as text, so that every bad value gets the
// same one-line message), how they are added to the command line, and what runs them. A run
// checks every value before anything is touched (UsageError, exit 2), calls the library, and
// prints what it returns.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/job_options.hpp"
#include "cli/problem_options.hpp"

namespace swr::cli {

// `swr-tune gpus`: the built-in GPU profiles and the device present on this machine, if any.
struct GpusOptions {
  bool json = false;
};

CLI::App* add_gpus_command(CLI::App& app, GpusOptions& options);
int run_gpus_command(const GpusOptions& options);

// `swr-tune space`: the variants of the space that the target can run, with their resources, and
// why the others were dropped; --family gemm lists the GEMM space of a GEMM shape.
struct SpaceOptions {
  ProblemOptions problem;
  bool json = false;
  bool show_pruned = false;
};

CLI::App* add_space_command(CLI::App& app, SpaceOptions& options);
int run_space_command(const SpaceOptions& options);

// `swr-tune compile`: compile the pruned space for the target with NVRTC, on several threads,
// through the cubin cache; report cubin size, registers, spills and shared memory per variant (per
// kernel binary for --family gemm, whose swizzle is a launch argument); --out writes the cubins and
// kernels.json.
struct CompileCommandOptions {
  ProblemOptions problem;
  CompileOptions compile;
};

CLI::App* add_compile_command(CLI::App& app, CompileCommandOptions& options);
// 0 when every variant compiled, 1 when any failed.
int run_compile_command(const CompileCommandOptions& options);

// The main job, `swr-tune --gpu G --seq S` (or `swr-tune tune ...`): compile the variant space for
// the target, then time it on the device. Timing needs the named GPU; without it the compiled
// space is what this command delivers, and it says so.
struct TuneOptions {
  ProblemOptions problem;
  CompileOptions compile;
  TuningOptions tuning;  // --db, --time-budget, --both, --retune
  // problem.gemm: --family gemm, --m, --n, --k, --size, --sweep, --sweep-out
};

// Adds the options to `command` (the root app or the `tune` subcommand).
void add_tune_options(CLI::App& command, TuneOptions& options);
CLI::App* add_tune_command(CLI::App& app, TuneOptions& options);
int run_tune_command(const TuneOptions& options);

// `swr-tune model`: what the L2 model predicts for each variant on a GPU profile, present or not:
// L2 misses, hit rate, DRAM bytes and a roofline time, cyclic and sawtooth twins side by side.
// --family gemm takes the GEMM shape options and says that GEMM prediction is not implemented.
struct ModelOptions {
  ProblemOptions problem;
  bool json = false;
  bool estimate_registers = false;  // skip compiling; CTAs per SM from estimated registers
  std::string jobs;                 // compile threads, empty: hardware threads
  std::string cache_dir;            // cubin cache, empty: CubinCache::default_directory()
};

CLI::App* add_model_command(CLI::App& app, ModelOptions& options);
int run_model_command(const ModelOptions& options);

// `swr-tune show`: what the results database holds. Without a shape, one line per (GPU, problem):
// the best variant with its time and L2 figures, how many variants were measured and failed
// (--gpu and the other problem options filter; --family gemm: GEMM problems only). With --seq,
// every variant of that attention shape (the other options default as in `tune`), fastest first,
// failed ones last with their status; with --family gemm and --m/--n/--k or --size, every variant
// of that GEMM shape (show_views.hpp). The database is opened read-only.
struct ShowOptions {
  std::string gpu;
  std::string seq;
  std::string seq_kv;
  std::string batch;
  std::string heads;
  std::string head_dim;
  std::string dtype;
  bool causal = false;
  AttentionHeadOptions head_options;  // --kv-heads, --causal-align
  std::string database;
  bool database_given = false;
  bool json = false;
  GemmOptions gemm;           // --family, --m, --n, --k, --size
  bool family_given = false;  // the summary lists every family unless --family names one
};

CLI::App* add_show_command(CLI::App& app, ShowOptions& options);
int run_show_command(const ShowOptions& options);

// `swr-tune query`: what the runtime would choose for a shape on a GPU, from a results database
// (--db, default as for `show`) or an export (--export DIR): the variant with its measured
// figures, and whether it was tuned for this very shape (exact) or for the nearest tuned one
// (which one, at what distance), or that nothing can serve it (none, with why; exit code 0).
// --family gemm asks for a GEMM shape (--m --n --k, or --size) instead of an attention one.
struct QueryOptions : AttentionProblemOptions {
  std::string gpu;
  GemmOptions gemm;                                  // --family, --m, --n, --k, --size
  std::vector<std::string> attention_options_given;  // to refuse them with --family gemm
  std::string database;
  bool database_given = false;
  std::string export_dir;
  bool json = false;
};

CLI::App* add_query_command(CLI::App& app, QueryOptions& options);
int run_query_command(const QueryOptions& options);

// `swr-tune export`: the best variant of every shape tuned on a GPU, attention and GEMM, compiled
// for its arch, as DIR/<cubin>.cubin plus DIR/manifest.json, from which swr::Attention and
// swr::Gemm run without the database or NVRTC; --family attention|gemm exports one family only.
// Bad input (exit 2) and failed compiles (exit 1) write nothing.
struct ExportCommandOptions {
  std::string gpu;
  std::string family;  // --family, empty: both
  std::string database;
  bool database_given = false;
  std::string out_dir;
  std::string cache_dir;
  bool allow_changed_source = false;
  bool force = false;  // replace an export of another GPU in --out
  bool json = false;
};

CLI::App* add_export_command(CLI::App& app, ExportCommandOptions& options);
int run_export_command(const ExportCommandOptions& options);

// `swr-tune import`: merges other results databases and exports (their manifest.json) into a
// results database, so that what several machines tuned ends up in one file (attention and GEMM).
// Every measurement is kept: rows the target lacks are added, identical ones are skipped, none is
// changed; a shape measured on several machines is then answered by its best valid build (see
// docs/runtime.md). Every source is read and checked before anything is written.
struct ImportCommandOptions {
  std::vector<std::string> sources;
  std::string database;
  bool database_given = false;
  bool json = false;
};

CLI::App* add_import_command(CLI::App& app, ImportCommandOptions& options);
int run_import_command(const ImportCommandOptions& options);

// `swr-tune report`: a report a person can look at, from the results database and/or
// `show --json` dumps (read into a temporary copy), and optionally a bench/peer_grid.py result: L2
// misses vs S (cyclic vs sawtooth, with the cold-miss line), throughput vs S for swr and each peer,
// the GEMM size x swizzle-stride heatmap, the roofline, and index.html with the tables (report/).
// PNGs are drawn by gnuplot when it is on PATH; without it the data and scripts are written and it
// says how to render. Every input is read and checked before anything is written.
struct ReportOptions {
  std::string gpu;
  std::string database;
  bool database_given = false;
  std::vector<std::string> show_json;
  std::string bench;
  std::string out;
};

CLI::App* add_report_command(CLI::App& app, ReportOptions& options);
int run_report_command(const ReportOptions& options);

}  // namespace swr::cli
