#include "sweep/sweep.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "console/bad_input.h"
#include "console/progress_line.h"
#include "experiment/report.h"
#include "scenario/scenario.h"
#include "scenario/sweep_spec.h"
#include "sweep/point_processes.h"
#include "sweep/ranks.h"
#include "sweep/sweep_csv.h"
#include "sweep/sweep_grid.h"

namespace safs::sweep {

namespace {

namespace fs = std::filesystem;

struct Plan {
  std::vector<GridAxis> axes;
  std::vector<SweepPoint> points;
  std::vector<std::string> metrics;
  std::string out_dir;
};

std::vector<std::string> point_overrides(const SweepOptions& o, const SweepPoint& p) {
  std::vector<std::string> overrides = o.overrides;
  for (const Assignment& a : p.assignments) overrides.push_back(a.override_text());
  return overrides;
}

// Every point is checked before any runs, so a typo fails fast (exit 2).
Plan make_plan(const SweepOptions& o) {
  const SweepSpec spec = load_sweep_spec(o.file);
  std::vector<GridAxis> file_axes, cli_axes;
  for (const std::string& text : spec.grid) file_axes.push_back(parse_axis(text));
  for (const std::string& text : o.grid) cli_axes.push_back(parse_axis(text));
  Plan plan;
  plan.axes = merge_axes(file_axes, cli_axes);
  plan.points = expand_grid(plan.axes);
  plan.metrics = o.metrics.empty() ? spec.metrics : o.metrics;
  plan.out_dir = o.out_dir.empty() ? "out/sweep-" + fs::path(o.file).stem().string() : o.out_dir;
  for (const SweepPoint& p : plan.points) {
    try {
      load_scenario(o.file, point_overrides(o, p));
    } catch (const ScenarioError& e) {
      throw ScenarioError("point " + p.name + ": " + e.what());
    }
  }
  return plan;
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
};

nlohmann::json encode(const RankResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const PointRow& row : r.rows)
    rows.push_back({{"point", row.point}, {"metrics", row.metrics}});
  return {{"ran", r.ran}, {"skipped", r.skipped}, {"failed", r.failed}, {"rows", rows}};
}

void add_decoded(const std::string& text, RankResult& total) {
  const nlohmann::json j = nlohmann::json::parse(text);
  total.ran += j["ran"].get<std::size_t>();
  total.skipped += j["skipped"].get<std::size_t>();
  for (const auto& f : j["failed"]) total.failed.push_back(f.get<std::string>());
  for (const auto& row : j["rows"]) {
    total.rows.push_back({row["point"].get<std::size_t>(),
                          row["metrics"].get<std::vector<std::pair<std::string, std::string>>>()});
  }
}

// Runs this rank's share of the points that have no summary.json yet.
RankResult run_share(const SweepOptions& o, const Plan& plan, const RankInfo& ranks) {
  RankResult result;
  std::vector<std::size_t> to_run;
  for (std::size_t i = static_cast<std::size_t>(ranks.rank); i < plan.points.size();
       i += static_cast<std::size_t>(ranks.size)) {
    const fs::path dir = fs::path(plan.out_dir) / plan.points[i].name;
    if (fs::exists(dir / "summary.json")) {
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

  const std::string self = own_executable();
  std::vector<PointJob> jobs;
  for (const std::size_t i : to_run) {
    const std::string dir = (fs::path(plan.out_dir) / plan.points[i].name).string();
    PointJob job{{self, "run", o.file, "--out", dir, "--quiet"}, dir + "/run.log"};
    for (const std::string& s : point_overrides(o, plan.points[i])) {
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

  for (std::size_t i = static_cast<std::size_t>(ranks.rank); i < plan.points.size();
       i += static_cast<std::size_t>(ranks.size)) {
    const fs::path summary = fs::path(plan.out_dir) / plan.points[i].name / "summary.json";
    if (fs::exists(summary))
      result.rows.push_back(read_point_row(i, summary.string(), plan.metrics));
  }
  return result;
}

}  // namespace

int run_sweep(const SweepOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const Plan plan = make_plan(o);  // before joining MPI: a bad file ends every rank alike
  const RankInfo ranks = join_ranks();
  struct Leave {
    ~Leave() { leave_ranks(); }
  } leave;

  const RankResult mine = run_share(o, plan, ranks);
  const std::vector<std::string> gathered = gather_at_rank0(encode(mine).dump());
  if (ranks.rank != 0) return mine.failed.empty() ? 0 : 1;

  RankResult total;
  for (const std::string& text : gathered) add_decoded(text, total);
  const std::string csv_path = (fs::path(plan.out_dir) / "sweep.csv").string();
  write_file_atomically(csv_path, combined_csv(plan.axes, plan.points, total.rows));
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

}  // namespace safs::sweep
