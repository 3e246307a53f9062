// The sender's SACK scoreboard (RFC 6675, as Linux keeps it per segment):
// for each segment between snd_una and snd_nxt, whether the receiver has
// reported it (SACKed), whether it is deemed lost, and whether it has been
// retransmitted since. From it: the pipe (Linux tcp_packets_in_flight) and
// the next hole to retransmit.
//
// The receiver here ACKs every segment, and each ACK reports the segment that
// triggered it (RFC 2018 §4: the first SACK block holds that segment), so one
// block per ACK tells the sender every segment that arrived.
//
// A ring over the segments from snd_una: it grows to the largest window the
// flow has had, never with the flow's size, and not at all in steady state.
#pragma once

#include <cstdint>
#include <vector>

namespace safs {

class SackScoreboard {
 public:
  // A flow of flow_bytes in segments of segment_bytes (the last may be shorter).
  explicit SackScoreboard(std::uint32_t segment_bytes = 1, std::uint64_t flow_bytes = 0)
      : segment_bytes_(segment_bytes), flow_bytes_(flow_bytes) {}

  // Everything below una is acknowledged.
  void advance(std::uint64_t una);
  // Room for the segment at seq before it is sent.
  void reserve(std::uint64_t seq);
  // The receiver has the segment at seq; returns the bytes newly SACKed.
  // Then marks lost each hole with dupthresh SACKed segments above it
  // (RFC 6675 IsLost()).
  std::uint64_t sack(std::uint64_t seq, std::uint32_t dupthresh);
  // Marks the segment at seq lost unless SACKed (a partial ACK: the next hole).
  void mark_lost(std::uint64_t seq);
  // The lowest lost segment not yet retransmitted, or none.
  bool has_hole_to_resend() const { return resend_ != kNone; }
  std::uint64_t hole_to_resend() const { return resend_ * segment_bytes_; }
  void retransmitted(std::uint64_t seq);
  // After a timeout: every segment not SACKed is lost and none counts as
  // retransmitted, so each is resent once more from the lowest (Linux
  // tcp_timeout_mark_lost, which keeps what was SACKed).
  void mark_outstanding_lost();
  // The highest segment out not SACKed (what a tail loss probe resends,
  // RFC 8985 section 7.3), or kNoSegment if every one was.
  std::uint64_t last_unsacked() const;
  // The probe's segment arrived: each segment below `seq` not SACKed was
  // sent before it and is lost (RACK's inference, RFC 8985 section 6.2:
  // the probe went out last).
  void mark_unsacked_lost_below(std::uint64_t seq);
  // Forgets every mark (after a timeout without SACK the sender goes back N).
  void clear();

  std::uint64_t sacked_bytes() const { return sacked_bytes_; }
  std::uint64_t lost_bytes() const { return lost_bytes_; }
  std::uint64_t retransmitted_bytes() const { return retrans_bytes_; }

  static constexpr std::uint64_t kNoSegment = UINT64_MAX;

 private:
  static constexpr std::uint8_t kSacked = 1, kLost = 2, kRetransmitted = 4;
  static constexpr std::uint64_t kNone = UINT64_MAX;

  std::uint8_t& flags(std::uint64_t segment) { return ring_[segment & (ring_.size() - 1)]; }
  std::uint8_t flags(std::uint64_t segment) const { return ring_[segment & (ring_.size() - 1)]; }
  std::uint64_t length(std::uint64_t segment) const;
  void set_lost(std::uint64_t segment);
  void find_next_resend(std::uint64_t from);

  std::uint32_t segment_bytes_ = 1;
  std::uint64_t flow_bytes_ = 0;
  std::vector<std::uint8_t> ring_;  // power-of-two size; segment i at i mod size
  std::uint64_t base_ = 0;          // first segment not acknowledged
  std::uint64_t end_ = 0;           // one past the last segment reserved
  std::uint64_t high_sacked_ = kNone;
  std::uint64_t lost_frontier_ = 0;  // below it, every hole is already marked lost
  std::uint64_t resend_ = kNone;
  std::uint64_t sacked_bytes_ = 0, lost_bytes_ = 0, retrans_bytes_ = 0;
};

}  // namespace safs
