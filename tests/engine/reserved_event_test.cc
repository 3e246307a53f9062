// A reserved event runs where it would have run had it been scheduled when
// its id was reserved, and ran_before_now tells whether that place has passed.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/simulator.h"

namespace safs {
namespace {

class Logger final : public EventHandler {
 public:
  Logger(Simulator& sim, std::string name, std::vector<std::string>& log,
         std::function<void()> then = {})
      : sim_(sim), name_(std::move(name)), log_(log), then_(std::move(then)) {}
  void handle_event(EventId) override {
    log_.push_back(name_ + "@" + std::to_string(sim_.now()));
    if (then_) then_();
  }

 private:
  Simulator& sim_;
  std::string name_;
  std::vector<std::string>& log_;
  std::function<void()> then_;
};

TEST(ReservedEvent, RunsWhereItWouldHaveRunWhenReserved) {
  Simulator sim;
  std::vector<std::string> log;
  EventId reserved = 0;
  Logger late(sim, "late", log);        // scheduled after the reservation, same time
  Logger claimed(sim, "claimed", log);  // the reserved event
  Logger claimer(sim, "claimer", log, [&] {
    EXPECT_FALSE(sim.ran_before_now(10, reserved));
    sim.schedule_reserved(10, reserved, &claimed, nullptr);
  });
  Logger start(sim, "start", log, [&] {
    reserved = sim.reserve_id(10);
    sim.schedule_at(10, &late);
    sim.schedule_at(5, &claimer);
  });
  sim.schedule_at(0, &start);
  sim.run();
  // Scheduled at 5 with the id reserved at 0: ahead of `late`, which was
  // scheduled for the same time in between.
  EXPECT_EQ(log, (std::vector<std::string>{"start@0", "claimer@5", "claimed@10", "late@10"}));
  EXPECT_EQ(sim.events_processed(), 4u);
}

TEST(ReservedEvent, RanBeforeNowComparesTimeThenOrder) {
  Simulator sim;
  std::vector<std::string> log;
  EventId early_id = 0, late_id = 0;
  Logger check(sim, "check", log, [&] {
    EXPECT_TRUE(sim.ran_before_now(9, late_id));     // an earlier time
    EXPECT_TRUE(sim.ran_before_now(10, early_id));   // now, reserved before this event
    EXPECT_FALSE(sim.ran_before_now(10, late_id));   // now, reserved after it
    EXPECT_FALSE(sim.ran_before_now(11, early_id));  // later
  });
  Logger start(sim, "start", log, [&] {
    early_id = sim.reserve_id(10);
    sim.schedule_at(10, &check);
    late_id = sim.reserve_id(10);
  });
  sim.schedule_at(0, &start);
  sim.run();
  EXPECT_EQ(log, (std::vector<std::string>{"start@0", "check@10"}));
}

TEST(ReservedEvent, AnUnclaimedReservationCostsNoEventAndKeepsTheOrder) {
  // The same run with an id reserved and never used: the other events keep
  // their order, and nothing runs for the reservation.
  const auto run = [](bool reserve) {
    Simulator sim;
    std::vector<std::string> log;
    Logger a(sim, "a", log), b(sim, "b", log);
    Logger start(sim, "start", log, [&] {
      sim.schedule_at(3, &a);
      if (reserve) sim.reserve_id(3);
      sim.schedule_at(3, &b);
    });
    sim.schedule_at(0, &start);
    sim.run();
    EXPECT_EQ(sim.events_processed(), 3u);
    return log;
  };
  EXPECT_EQ(run(false), run(true));
}

}  // namespace
}  // namespace safs
