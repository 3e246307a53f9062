#include "cli/fct_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "console/bad_input.h"
#include "metrics/summary.h"

namespace safs::cli {

namespace {

std::string size_text(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= 1'000'000) {
    std::snprintf(buf, sizeof buf, "%g MB", static_cast<double>(bytes) / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%g KB", static_cast<double>(bytes) / 1e3);
  }
  return buf;
}

// Completed flows' (size, slowdown) from a flows.csv.
std::vector<std::pair<std::uint64_t, double>> read_flows(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw console::BadInput(path + ": cannot open; expected a run's output directory");
  std::string line;
  std::getline(in, line);
  if (line.rfind("id,src,dst,size_bytes,start_s,finish_s,fct_s,ideal_fct_s,slowdown,", 0) != 0) {
    throw console::BadInput(path + ":1: not a safs-sim flows.csv header");
  }
  std::vector<std::pair<std::uint64_t, double>> flows;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    std::vector<std::string> f;
    std::stringstream fields(line);
    std::string field;
    while (std::getline(fields, field, ',')) f.push_back(field);
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    if (f.size() < 9) throw console::BadInput(where + "short row");
    if (f[8].empty()) continue;  // did not complete
    // size_bytes a whole number (stoull would take "-100" as 2^64 - 100),
    // slowdown a finite number.
    std::uint64_t size = 0;
    const auto [size_end, size_error] =
        std::from_chars(f[3].data(), f[3].data() + f[3].size(), size);
    if (f[3].empty() || size_error != std::errc() || size_end != f[3].data() + f[3].size()) {
      throw console::BadInput(where + "size_bytes '" + f[3] +
                              "': expected a whole number of bytes");
    }
    double slowdown = 0;
    const auto [slow_end, slow_error] =
        std::from_chars(f[8].data(), f[8].data() + f[8].size(), slowdown);
    if (slow_error != std::errc() || slow_end != f[8].data() + f[8].size() ||
        !std::isfinite(slowdown)) {
      throw console::BadInput(where + "slowdown '" + f[8] + "': expected a number");
    }
    flows.emplace_back(size, slowdown);
  }
  return flows;
}

}  // namespace

int fct_table(const std::vector<std::string>& dirs, const std::vector<std::uint64_t>& edges) {
  if (edges.empty() || !std::is_sorted(edges.begin(), edges.end()) ||
      std::adjacent_find(edges.begin(), edges.end()) != edges.end()) {
    throw console::BadInput("--buckets: give one or more increasing sizes in bytes");
  }
  // Every input read before the table starts: a bad one prints no half table.
  std::vector<std::vector<std::pair<std::uint64_t, double>>> runs;
  for (const std::string& dir : dirs) runs.push_back(read_flows(dir + "/flows.csv"));
  std::printf("| run |");
  for (std::size_t b = 0; b <= edges.size(); ++b) {
    std::string label;
    if (b == 0) {
      label = "< " + size_text(edges[0]);
    } else if (b == edges.size()) {
      label = ">= " + size_text(edges[b - 1]);
    } else {
      label = size_text(edges[b - 1]) + " to " + size_text(edges[b]);
    }
    std::printf(" %s: n, mean, p99 |", label.c_str());
  }
  std::printf(" all: mean, p99 |\n|---|");
  for (std::size_t b = 0; b <= edges.size() + 1; ++b) std::printf("---:|");
  std::printf("\n");
  for (std::size_t r = 0; r < dirs.size(); ++r) {
    const std::string& dir = dirs[r];
    const auto& flows = runs[r];
    std::vector<std::vector<double>> buckets(edges.size() + 1);
    std::vector<double> all;
    for (const auto& [size, slowdown] : flows) {
      std::size_t b = 0;
      while (b < edges.size() && size >= edges[b]) ++b;
      buckets[b].push_back(slowdown);
      all.push_back(slowdown);
    }
    std::printf("| %s |", dir.c_str());
    auto cell = [](const std::vector<double>& v, bool with_count) {
      double sum = 0;
      for (const double x : v) sum += x;
      if (v.empty()) {
        std::printf(" - |");
      } else if (with_count) {
        std::printf(" %zu, %.2f, %.2f |", v.size(), sum / static_cast<double>(v.size()),
                    percentile(v, 99));
      } else {
        std::printf(" %.2f, %.2f |", sum / static_cast<double>(v.size()), percentile(v, 99));
      }
    };
    for (const auto& bucket : buckets) cell(bucket, true);
    cell(all, false);
    std::printf("\n");
  }
  return 0;
}

}  // namespace safs::cli
