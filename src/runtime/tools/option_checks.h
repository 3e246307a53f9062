// What safs-rt accepts on its command line: each check names the option and
// what was expected (CLI11 prefixes the option's name), and safs-rt exits 2.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace safs::rt {

inline constexpr int kExitFailed = 1;    // a transfer or connection failed
inline constexpr int kExitBadInput = 2;  // an option, a key file or an address is wrong

// Bad input found after parsing (an address that cannot be listened on, a
// combination of options): exit 2 with its message.
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A finite number in [lowest, highest] (lowest excluded unless `inclusive`).
CLI::Validator number_in(double lowest, bool inclusive, double highest, const std::string& unit);
// An integer in [lowest, highest] written in decimal digits (a sign only for
// a negative lowest): "-5" is not read as 2^64 - 5.
CLI::Validator integer_in(std::int64_t lowest, std::uint64_t highest, const std::string& what);
// A numeric host:port (IPv4 or [IPv6]); with `port_required`, port 0 is refused.
CLI::Validator host_port(bool port_required);

}  // namespace safs::rt
