#include "trace/time_ordered_batch.h"

#include <algorithm>

namespace safs::trace {

namespace {

bool earlier(const auto& a, const auto& b) {
  return a.start_ps != b.start_ps ? a.start_ps < b.start_ps : a.order < b.order;
}

}  // namespace

TimeOrderedBatch::TimeOrderedBatch(ChromeTraceWriter& writer)
    : writer_(writer), budget_(static_cast<std::size_t>(writer.events_left())) {}

void TimeOrderedBatch::slice(Track track, std::string name, std::string category, TimePs start_ps,
                             TimePs end_ps, TraceArgs args) {
  if (!writer_.window().overlaps(start_ps, end_ps)) return;
  add({start_ps, end_ps, next_order_++, false, track, std::move(name), std::move(category),
       std::move(args)});
}

void TimeOrderedBatch::instant(Track track, std::string name, std::string category, TimePs at_ps,
                               TraceArgs args) {
  if (!writer_.window().contains(at_ps)) return;
  add({at_ps, at_ps, next_order_++, true, track, std::move(name), std::move(category),
       std::move(args)});
}

void TimeOrderedBatch::add(Event event) {
  events_.push_back(std::move(event));
  // Pruning only now and then keeps adding linear on average.
  if (events_.size() >= 2 * budget_ + 1024) keep_earliest(budget_);
}

void TimeOrderedBatch::keep_earliest(std::size_t count) {
  if (events_.size() <= count) return;
  std::nth_element(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(count),
                   events_.end(), [](const Event& a, const Event& b) { return earlier(a, b); });
  TimePs from_ps = kTimeNever;
  for (std::size_t i = count; i < events_.size(); ++i) {
    from_ps = std::min(from_ps, events_[i].start_ps);
  }
  writer_.note_dropped(events_.size() - count, from_ps);
  events_.resize(count);
}

void TimeOrderedBatch::write() {
  keep_earliest(budget_);
  std::sort(events_.begin(), events_.end(),
            [](const Event& a, const Event& b) { return earlier(a, b); });
  for (const Event& e : events_) {
    if (e.instant) {
      writer_.instant(e.track, e.name, e.category, e.start_ps, e.args);
    } else {
      writer_.slice(e.track, e.name, e.category, e.start_ps, e.end_ps, e.args);
    }
  }
  events_.clear();
}

}  // namespace safs::trace
