#include "console/progress_line.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace safs::console {

namespace {
constexpr auto kRedrawEvery = std::chrono::milliseconds(200);
constexpr int kBarWidth = 24;
}  // namespace

ProgressLine::ProgressLine(bool wanted) : active_(wanted && isatty(STDERR_FILENO) == 1) {}

void ProgressLine::show(double fraction, const std::string& text) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < kRedrawEvery) return;
  last_draw_ = now;
  drawn_ = true;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(fraction * kBarWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kBarWidth, '.');
  // \r and erase-to-end-of-line: redraw over the previous line.
  std::fprintf(stderr, "\r[%s] %3.0f%% %s\033[K", bar.c_str(), fraction * 100, text.c_str());
  std::fflush(stderr);
}

void ProgressLine::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

std::string duration_text(double seconds) {
  char buf[48];
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, s % 3600 / 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  } else if (seconds >= 10 || seconds == 0) {
    std::snprintf(buf, sizeof buf, "%ld s", s);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  }
  return buf;
}

}  // namespace safs::console
