#include "transport/params.h"

#include <stdexcept>

namespace safs {

double TransportParams::get(std::string_view key) const {
  if (auto it = values_.find(key); it != values_.end()) return it->second;
  for (const ParamSpec& spec : *specs_) {
    if (spec.key == key) return spec.default_value;
  }
  throw std::logic_error("transport parameter '" + std::string(key) + "' is not in its table");
}

}  // namespace safs
