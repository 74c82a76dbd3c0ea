#pragma once
// Every setting Config reads (config.hpp): its variable, the values it accepts and its default, as
// the warnings say them. docs/user-guide.md's settings table lists these variables and the GPU
// runtime's (contract/runtime_settings.hpp); a test keeps the table in step with both lists.
#include "setting_rules.hpp" // SettingDescription

#include <vector>

namespace commlens {

std::vector<SettingDescription> setting_descriptions();

} // namespace commlens
