#include "sweep/sweep.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "console/bad_input.h"
#include "console/effective_scenario.h"
#include "console/progress_line.h"
#include "console/scenario_file.h"
#include "experiment/report.h"
#include "scenario/scenario.h"
#include "scenario/suggest.h"
#include "scenario/sweep_spec.h"
#include "sweep/point_processes.h"
#include "sweep/ranks.h"
#include "sweep/summary_file.h"
#include "sweep/sweep_csv.h"
#include "sweep/sweep_grid.h"

namespace safs::sweep {

namespace {

namespace fs = std::filesystem;

// One task's part of the grid: the points i with i % count == index.
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
};

Shard parse_shard(const std::string& text) {
  if (text.empty()) return {};
  const std::string expected =
      "--shard " + text + ": expected I/N, shard I of N counted from 0 (0/4 .. 3/4)";
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() ||
      text.find_first_not_of("0123456789/") != std::string::npos ||
      text.find('/', slash + 1) != std::string::npos || slash > 9 || text.size() - slash > 10) {
    throw console::BadInput(expected);
  }
  const Shard shard{std::stoul(text.substr(0, slash)), std::stoul(text.substr(slash + 1))};
  if (shard.count == 0 || shard.index >= shard.count) throw console::BadInput(expected);
  return shard;
}

struct Plan {
  std::vector<GridAxis> axes;
  std::vector<SweepPoint> points;
  std::vector<std::string> metrics;
  std::string out_dir;
};

std::vector<std::string> point_overrides(const std::vector<std::string>& every_point,
                                         const SweepPoint& p) {
  std::vector<std::string> overrides = every_point;
  for (const Assignment& a : p.assignments) overrides.push_back(a.override_text());
  return overrides;
}

std::vector<GridAxis> plan_axes(const std::string& file, const std::vector<std::string>& grid) {
  const SweepSpec spec = load_sweep_spec(file);
  std::vector<GridAxis> file_axes, cli_axes;
  for (const std::string& text : spec.grid) file_axes.push_back(parse_axis(text));
  for (const std::string& text : grid) cli_axes.push_back(parse_axis(text));
  check_distinct_keys(file_axes, file + ": [sweep] grid");
  check_distinct_keys(cli_axes, "--grid");
  return merge_axes(file_axes, cli_axes);
}

void check_points(const std::string& file, const std::vector<std::string>& overrides,
                  const std::vector<SweepPoint>& points) {
  for (const SweepPoint& p : points) {
    try {
      load_scenario(file, point_overrides(overrides, p));
    } catch (const ScenarioError& e) {
      throw ScenarioError("point " + p.name + ": " + e.what());
    }
  }
}

// --out is a sweep's directory or a new one: never a file, and a sweep.csv
// already there is a sweep's (its header starts with "point"), since the
// sweep writes over it; the points' directories are checked as they run.
void check_sweep_out(const std::string& out_dir) {
  const std::string option = "--out " + out_dir + ": ";
  std::error_code error;
  if (fs::exists(out_dir, error) && !fs::is_directory(out_dir, error)) {
    throw console::BadInput(option + "exists and is not a directory");
  }
  fs::create_directories(out_dir, error);
  if (!fs::is_directory(out_dir, error)) {
    throw console::BadInput(option + "cannot create it (" + error.message() + ")");
  }
  const fs::path csv = fs::path(out_dir) / "sweep.csv";
  if (!fs::exists(csv, error)) return;
  std::ifstream in(csv);
  std::string header;
  std::getline(in, header);
  if (header != "point" && header.rfind("point,", 0) != 0) {
    throw console::BadInput(option + csv.filename().string() +
                            " there is not a sweep's (its first line is not point,...); not "
                            "overwriting it: choose another directory");
  }
}

// Every point is checked before any runs, so a typo fails fast (exit 2).
Plan make_plan(const SweepOptions& o) {
  console::check_scenario_file(o.file);
  Plan plan;
  plan.axes = plan_axes(o.file, o.grid);
  plan.points = expand_grid(plan.axes);
  plan.metrics = o.metrics.empty() ? load_sweep_spec(o.file).metrics : o.metrics;
  plan.out_dir = o.out_dir.empty() ? "out/sweep-" + fs::path(o.file).stem().string() : o.out_dir;
  check_points(o.file, o.overrides, plan.points);
  check_sweep_out(plan.out_dir);
  return plan;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A finished point is reused only if it ran the scenario this sweep would
// run: same file text, same overrides (in summary.json's provenance).
bool reusable(const fs::path& summary_path, const SweepPoint& point,
              const console::EffectiveScenario& wanted) {
  if (!fs::exists(summary_path)) return false;
  const nlohmann::ordered_json summary = read_summary(summary_path.string());
  const nlohmann::ordered_json* text_hash = lookup(summary, "provenance.scenario_text_hash");
  const nlohmann::ordered_json* overrides = lookup(summary, "provenance.overrides");
  const std::string redo =
      "; delete " + summary_path.parent_path().string() + " or sweep into another --out";
  if (text_hash == nullptr || overrides == nullptr || !text_hash->is_string() ||
      !overrides->is_array()) {
    throw console::BadInput("point " + point.name + ": finished, but " + summary_path.string() +
                            " does not record its scenario (an older safs-sim?)" + redo);
  }
  console::EffectiveScenario was;
  was.text_hash = text_hash->get<std::string>();
  was.overrides = overrides->get<std::vector<std::string>>();
  const std::string difference = console::first_difference(was, wanted);
  if (!difference.empty()) {
    throw console::BadInput("point " + point.name + ": finished with another scenario (" +
                            difference + ")" + redo);
  }
  return true;
}

// A --metric or sweep.metrics path that no finished point's summary.json has.
void check_metrics(const std::vector<std::string>& metrics, const std::vector<PointRow>& rows,
                   const std::string& some_summary) {
  if (rows.empty()) return;
  for (const std::string& metric : metrics) {
    bool found = false;
    for (const PointRow& row : rows) {
      for (const auto& [column, value] : row.metrics)
        found = found || (column == metric && !value.empty());
    }
    if (found) continue;
    std::vector<std::string> known;
    for (const auto& [path, value] : numeric_leaves(read_summary(some_summary)))
      known.push_back(path);
    throw console::BadInput("--metric " + metric + ": no value at that path in summary.json" +
                            did_you_mean(metric, known) +
                            " (the points are kept: rerun with the right metric)");
  }
}

int default_jobs(const RankInfo& ranks) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores / std::max(1, ranks.on_this_host));
}

std::string last_lines(const std::string& path, std::size_t count) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string text;
  for (std::size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i) {
    text += "    " + lines[i] + "\n";
  }
  return text;
}

// What one rank did, sent to rank 0 as JSON.
struct RankResult {
  std::size_t ran = 0, skipped = 0;
  std::vector<std::string> failed;
  std::vector<PointRow> rows;
  int stop_signal = 0;
};

nlohmann::json encode(const RankResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const PointRow& row : r.rows)
    rows.push_back({{"point", row.point}, {"metrics", row.metrics}});
  return {{"ran", r.ran},
          {"skipped", r.skipped},
          {"failed", r.failed},
          {"rows", rows},
          {"stop_signal", r.stop_signal}};
}

void add_decoded(const std::string& text, RankResult& total) {
  const nlohmann::json j = nlohmann::json::parse(text);
  total.ran += j["ran"].get<std::size_t>();
  total.skipped += j["skipped"].get<std::size_t>();
  for (const auto& f : j["failed"]) total.failed.push_back(f.get<std::string>());
  total.stop_signal = std::max(total.stop_signal, j["stop_signal"].get<int>());
  for (const auto& row : j["rows"]) {
    total.rows.push_back({row["point"].get<std::size_t>(),
                          row["metrics"].get<std::vector<std::pair<std::string, std::string>>>()});
  }
}

// This rank's points: those of the shard, dealt out among the ranks.
std::vector<std::size_t> share_of(std::size_t points, const Shard& shard, const RankInfo& ranks) {
  std::vector<std::size_t> share;
  std::size_t nth = 0;
  for (std::size_t i = shard.index; i < points; i += shard.count, ++nth) {
    if (nth % static_cast<std::size_t>(ranks.size) == static_cast<std::size_t>(ranks.rank)) {
      share.push_back(i);
    }
  }
  return share;
}

// Runs this rank's share of the points that have no summary.json yet.
RankResult run_share(const SweepOptions& o, const Plan& plan, const std::vector<std::size_t>& share,
                     const RankInfo& ranks) {
  RankResult result;
  const std::string scenario_text = read_text(o.file);
  std::vector<std::size_t> to_run;
  for (const std::size_t i : share) {
    const fs::path dir = fs::path(plan.out_dir) / plan.points[i].name;
    if (reusable(dir / "summary.json", plan.points[i],
                 console::EffectiveScenario(scenario_text,
                                            point_overrides(o.overrides, plan.points[i])))) {
      ++result.skipped;
      if (o.verbosity == console::Verbosity::kVerbose) {
        std::fprintf(stderr, "%s: done before, skipped\n", plan.points[i].name.c_str());
      }
      continue;
    }
    fs::create_directories(dir);
    write_point_file(dir.string(), plan.points[i]);
    to_run.push_back(i);
  }

  const std::string self = o.executable.empty() ? own_executable() : o.executable;
  std::vector<PointJob> jobs;
  for (const std::size_t i : to_run) {
    const std::string dir = (fs::path(plan.out_dir) / plan.points[i].name).string();
    // --force: the directory holds point.txt and run.log, and maybe an
    // unfinished run's files, which the new run replaces.
    PointJob job{{self, "run", o.file, "--out", dir, "--force", "--quiet"}, dir + "/run.log"};
    for (const std::string& s : point_overrides(o.overrides, plan.points[i])) {
      job.argv.push_back("--set");
      job.argv.push_back(s);
    }
    jobs.push_back(std::move(job));
  }
  const int parallel = o.jobs > 0 ? o.jobs : default_jobs(ranks);
  console::ProgressLine progress(o.verbosity != console::Verbosity::kQuiet && ranks.rank == 0);
  const auto start = std::chrono::steady_clock::now();
  std::size_t done = 0;
  progress.show(0, "0/" + std::to_string(jobs.size()) + " points");
  result.stop_signal =
      run_point_processes(jobs, parallel, [&](std::size_t j, const PointOutcome& outcome) {
        const SweepPoint& point = plan.points[to_run[j]];
        ++done;
        if (outcome.ok) {
          ++result.ran;
        } else {
          result.failed.push_back(point.name);
          progress.clear();
          std::fprintf(stderr, "%s: failed (%s); its log, %s, ends:\n%s", point.name.c_str(),
                       outcome.status.c_str(), jobs[j].log_path.c_str(),
                       last_lines(jobs[j].log_path, 5).c_str());
        }
        if (o.verbosity == console::Verbosity::kVerbose && outcome.ok) {
          progress.clear();
          std::fprintf(stderr, "%s: done\n", point.name.c_str());
        }
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double eta =
            elapsed / static_cast<double>(done) * static_cast<double>(jobs.size() - done);
        progress.show(static_cast<double>(done) / static_cast<double>(jobs.size()),
                      std::to_string(done) + "/" + std::to_string(jobs.size()) + " points, ETA " +
                          console::duration_text(eta));
      });
  progress.clear();
  if (result.stop_signal != 0) return result;

  for (const std::size_t i : share) {
    const fs::path summary = fs::path(plan.out_dir) / plan.points[i].name / "summary.json";
    if (fs::exists(summary))
      result.rows.push_back(read_point_row(i, summary.string(), plan.metrics));
  }
  return result;
}

void write_csv(const Plan& plan, const std::vector<PointRow>& rows, const std::string& csv_path) {
  if (!rows.empty()) {
    check_metrics(
        plan.metrics, rows,
        (fs::path(plan.out_dir) / plan.points[rows.front().point].name / "summary.json").string());
  }
  write_file_atomically(csv_path, combined_csv(plan.axes, plan.points, rows));
}

// --collect: every point must have finished with the scenario this sweep
// would run (the shards ran the same command); then the CSV one sweep writes.
int collect(const SweepOptions& o, const Plan& plan) {
  const std::string scenario_text = read_text(o.file);
  std::vector<PointRow> rows;
  std::vector<std::string> missing;
  for (std::size_t i = 0; i < plan.points.size(); ++i) {
    const fs::path summary = fs::path(plan.out_dir) / plan.points[i].name / "summary.json";
    if (!reusable(summary, plan.points[i],
                  console::EffectiveScenario(scenario_text,
                                             point_overrides(o.overrides, plan.points[i])))) {
      missing.push_back(plan.points[i].name);
      continue;
    }
    rows.push_back(read_point_row(i, summary.string(), plan.metrics));
  }
  if (!missing.empty()) {
    std::string names;
    for (std::size_t i = 0; i < missing.size() && i < 5; ++i) names += "\n  " + missing[i];
    if (missing.size() > 5) names += "\n  ...";
    std::fprintf(stderr,
                 "sweep --collect: %zu of %zu points have not finished in %s (run their shards "
                 "again); no sweep.csv written:%s\n",
                 missing.size(), plan.points.size(), plan.out_dir.c_str(), names.c_str());
    return 1;
  }
  const std::string csv_path = (fs::path(plan.out_dir) / "sweep.csv").string();
  write_csv(plan, rows, csv_path);
  if (o.verbosity != console::Verbosity::kQuiet) {
    std::printf("sweep: %zu points collected -> %s\n", plan.points.size(), csv_path.c_str());
  }
  return 0;
}

}  // namespace

int run_sweep(const SweepOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const Shard shard = parse_shard(o.shard);
  const Plan plan = make_plan(o);  // before joining MPI: a bad file ends every rank alike
  if (o.collect) return collect(o, plan);
  const RankInfo ranks = join_ranks();
  struct Leave {
    ~Leave() { leave_ranks(); }
  } leave;

  const RankResult mine = run_share(o, plan, share_of(plan.points.size(), shard, ranks), ranks);
  const std::vector<std::string> gathered = gather_at_rank0(encode(mine).dump());
  if (ranks.rank != 0) return mine.failed.empty() ? 0 : 1;

  RankResult total;
  for (const std::string& text : gathered) add_decoded(text, total);
  if (total.stop_signal != 0) {
    std::fprintf(stderr,
                 "sweep: stopped by signal %d; its running points were stopped, the %zu finished "
                 "are kept (rerun the same command to go on)\n",
                 total.stop_signal, total.skipped + total.ran);
    return 128 + total.stop_signal;
  }
  if (shard.count > 1) {
    if (o.verbosity != console::Verbosity::kQuiet) {
      std::printf(
          "sweep: shard %zu/%zu: %zu points (%zu run, %zu done before, %zu failed) in %s; "
          "when every shard is done, the same command with --collect instead of --shard "
          "writes %s/sweep.csv\n",
          shard.index, shard.count, total.ran + total.skipped + total.failed.size(), total.ran,
          total.skipped, total.failed.size(),
          console::duration_text(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count())
              .c_str(),
          plan.out_dir.c_str());
    }
    return total.failed.empty() ? 0 : 1;
  }
  const std::string csv_path = (fs::path(plan.out_dir) / "sweep.csv").string();
  write_csv(plan, total.rows, csv_path);
  if (o.verbosity != console::Verbosity::kQuiet) {
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string on_ranks =
        ranks.size > 1 ? " on " + std::to_string(ranks.size) + " ranks" : "";
    std::printf("sweep: %zu points (%zu run, %zu done before, %zu failed)%s in %s -> %s\n",
                plan.points.size(), total.ran, total.skipped, total.failed.size(), on_ranks.c_str(),
                console::duration_text(wall).c_str(), csv_path.c_str());
  }
  return total.failed.empty() ? 0 : 1;
}

std::size_t check_sweep_points(const std::string& file, const std::vector<std::string>& overrides) {
  const std::vector<SweepPoint> points = expand_grid(plan_axes(file, {}));
  check_points(file, overrides, points);
  return points.size();
}

}  // namespace safs::sweep
