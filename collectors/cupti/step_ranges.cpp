#include "step_ranges.hpp"

#include <algorithm>
#include <cctype>

namespace commlens::cuda {

namespace {
bool same_letters(char a, char b) {
  return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
}
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
} // namespace

bool is_step_range(std::string_view name, std::string_view configured) noexcept {
  if (configured.empty() || name.size() < configured.size() ||
      !std::equal(configured.begin(), configured.end(), name.begin(), same_letters)) {
    return false;
  }
  std::string_view number = name.substr(configured.size());
  if (number.empty()) {
    return true;
  }
  if (number.find_first_of(" #_-:") == 0) {
    number.remove_prefix(1);
  }
  return !number.empty() && std::all_of(number.begin(), number.end(), is_digit);
}

bool StepRangeNesting::pushed(std::string_view name, std::string_view configured) {
  const bool opens_step = open_steps_ == 0 && is_step_range(name, configured);
  open_is_step_.push_back(opens_step);
  open_steps_ += opens_step ? 1 : 0;
  return opens_step;
}

bool StepRangeNesting::popped() {
  if (open_is_step_.empty()) {
    return false; // a pop without its push (the push came before the collector started)
  }
  const bool ends_step = open_is_step_.back();
  open_is_step_.pop_back();
  open_steps_ -= ends_step ? 1 : 0;
  return ends_step;
}

} // namespace commlens::cuda
