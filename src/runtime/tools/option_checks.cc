#include "runtime/tools/option_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "runtime/socket_ops.h"

namespace safs::rt {
namespace {

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

}  // namespace

CLI::Validator number_in(double lowest, bool inclusive, double highest, const std::string& unit) {
  const std::string wanted = "a number of " + unit + " " + (inclusive ? ">= " : "> ") +
                             number_text(lowest) + " and <= " + number_text(highest);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool above = inclusive ? value >= lowest : value > lowest;
        if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || !above ||
            value > highest) {
          return "expected " + wanted + ", got " + text;
        }
        return "";
      },
      "NUMBER");
}

CLI::Validator integer_in(std::int64_t lowest, std::uint64_t highest, const std::string& what) {
  const std::string wanted = "an integer from " + std::to_string(lowest) + " to " +
                             std::to_string(highest) + (what.empty() ? "" : " (" + what + ")");
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const bool negative = !text.empty() && text.front() == '-';
        const std::string digits = negative ? text.substr(1) : text;
        const bool all_digits = !digits.empty() && digits.size() <= 20 &&
                                digits.find_first_not_of("0123456789") == std::string::npos;
        errno = 0;
        const unsigned long long magnitude =
            all_digits ? std::strtoull(digits.c_str(), nullptr, 10) : 0;
        const bool in_range =
            all_digits && errno == 0 &&
            (negative ? lowest < 0 && magnitude <= static_cast<std::uint64_t>(-lowest)
                      : (lowest <= 0 || magnitude >= static_cast<std::uint64_t>(lowest)) &&
                            magnitude <= highest);
        return in_range ? "" : "expected " + wanted + ", got " + text;
      },
      "INTEGER");
}

CLI::Validator host_port(bool port_required) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const auto address = runtime::PeerAddress::parse(text);
        if (!address)
          return "expected a numeric host:port (127.0.0.1:7000, [::1]:7000), got " + text;
        if (port_required && address->port == 0) return "expected a port from 1 to 65535, got 0";
        return "";
      },
      "HOST:PORT");
}

}  // namespace safs::rt
