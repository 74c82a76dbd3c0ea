#pragma once
// Every setting Config reads (config.hpp): its variable, the values it accepts and its default, as
// the warnings say them. docs/user-guide.md's settings table lists the same variables (a test keeps
// the two in step).
#include <string>
#include <vector>

namespace commlens {

struct SettingDescription {
  std::string key;
  std::string accepted;
  std::string default_value;
};
std::vector<SettingDescription> setting_descriptions();

} // namespace commlens
