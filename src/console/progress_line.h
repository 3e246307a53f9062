// A progress bar on stderr, redrawn in place at most five times a second, and
// only when stderr is a terminal: logs and CI see nothing of it.
#pragma once

#include <chrono>
#include <string>

namespace safs::console {

class ProgressLine {
 public:
  // Shown only if `wanted` and stderr is a terminal.
  explicit ProgressLine(bool wanted);
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool active() const { return active_; }
  // `fraction` in [0, 1] fills the bar; `text` follows it.
  void show(double fraction, const std::string& text);
  // Removes the line, so the final message starts on a clean one.
  void clear();

 private:
  bool active_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

// "1 h 02 min", "3 min 05 s", "12 s": a duration for people.
std::string duration_text(double seconds);

}  // namespace safs::console
