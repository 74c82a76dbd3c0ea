// docs/user-guide.md's settings table lists every COMMLENS_* variable: the profiler's (Config,
// libprofiler) and the GPU runtime's (contract/runtime_settings.hpp). Each row's default column says
// the default a rejected value falls back to.
#include "runtime_settings.hpp"

#include "commlens/profiler/settings.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

TEST(Settings, EverySettingIsDocumentedInTheUserGuideWithItsDefault) {
  std::ifstream guide(COMMLENS_USER_GUIDE);
  ASSERT_TRUE(guide) << COMMLENS_USER_GUIDE;
  std::map<std::string, std::string> documented_defaults; // key -> last cell, backticks removed
  for (std::string line; std::getline(guide, line);) {
    if (!line.starts_with("| `COMMLENS_")) {
      continue;
    }
    const std::string key = line.substr(3, line.find('`', 3) - 3);
    const auto last_bar = line.find_last_of('|');
    std::string last_cell = line.substr(line.find_last_of('|', last_bar - 1) + 1);
    std::erase(last_cell, '`');
    documented_defaults[key] = last_cell;
  }
  std::vector<commlens::SettingDescription> read = commlens::setting_descriptions();
  const std::vector<commlens::SettingDescription> runtime =
      commlens::contract::runtime_setting_descriptions();
  ASSERT_FALSE(runtime.empty());
  read.insert(read.end(), runtime.begin(), runtime.end());
  std::vector<std::string> read_keys;
  for (const auto& [key, accepted, default_value] : read) {
    EXPECT_EQ(std::count(read_keys.begin(), read_keys.end(), key), 0) << key << " is read by both lists";
    read_keys.push_back(key);
    const auto row = documented_defaults.find(key);
    ASSERT_NE(row, documented_defaults.end()) << key << " has no row in docs/user-guide.md's settings table";
    EXPECT_NE(row->second.find(default_value), std::string::npos)
        << key << ": the guide's default column (" << row->second << ") does not say " << default_value;
  }
  for (const auto& [key, cell] : documented_defaults) {
    EXPECT_NE(std::find(read_keys.begin(), read_keys.end(), key), read_keys.end())
        << key << " is documented but read neither by Config nor by the runtime's settings";
  }
}

} // namespace
