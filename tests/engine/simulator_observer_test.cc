// Progress hooks and samplers observe the run loop without adding events, so
// the events run, and the order they run in, are the same with and without.
#include <gtest/gtest.h>

#include <vector>

#include "engine/simulator.h"

namespace safs {
namespace {

// Reschedules itself a few times at awkward intervals, logging each run.
class Ticker final : public EventHandler {
 public:
  Ticker(Simulator& sim, int name, TimePs step, std::vector<std::pair<TimePs, int>>& log)
      : sim_(sim), name_(name), step_(step), log_(log) {}
  void handle_event(EventId) override {
    log_.emplace_back(sim_.now(), name_);
    if (++runs_ < 20) sim_.schedule_in(step_, this);
  }

 private:
  Simulator& sim_;
  int name_;
  TimePs step_;
  std::vector<std::pair<TimePs, int>>& log_;
  int runs_ = 0;
};

std::vector<std::pair<TimePs, int>> run(bool observed, std::vector<TimePs>* samples = nullptr,
                                        int* progress_calls = nullptr) {
  Simulator sim;
  std::vector<std::pair<TimePs, int>> log;
  Ticker a(sim, 1, 7, log), b(sim, 2, 10, log), c(sim, 3, 10, log);
  sim.schedule_at(0, &a);
  sim.schedule_at(0, &b);
  sim.schedule_at(5, &c);
  if (observed) {
    sim.set_progress_hook(3, [progress_calls] { ++*progress_calls; });
    sim.set_sampler(25, [samples, &sim](TimePs t) {
      EXPECT_LE(sim.now(), t);  // the state seen is the one at t
      samples->push_back(t);
    });
  }
  sim.run();
  return log;
}

TEST(SimulatorObservers, LeaveTheEventOrderUnchanged) {
  std::vector<TimePs> samples;
  int progress_calls = 0;
  EXPECT_EQ(run(false), run(true, &samples, &progress_calls));
  EXPECT_EQ(progress_calls, 60 / 3);  // 60 events, a call after every third
  ASSERT_FALSE(samples.empty());
  EXPECT_EQ(samples.front(), 25);
  for (std::size_t i = 1; i < samples.size(); ++i) EXPECT_EQ(samples[i] - samples[i - 1], 25);
  EXPECT_LE(samples.back(), 195);  // none beyond the last event (at 195)
}

}  // namespace
}  // namespace safs
