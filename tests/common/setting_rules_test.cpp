#include "setting_rules.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace {

using namespace commlens::settings;

TEST(SettingRules, NamesAreSplitAtCommasTrimmedAndEmptyOnesDropped) {
  EXPECT_EQ(commlens::split_names(" a, b ,,c\t"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(commlens::split_names("").empty());
  EXPECT_TRUE(commlens::split_names(" , ").empty());
}

TEST(SettingRules, BooleansAcceptTheFourSpellingsOfEach) {
  for (const char* yes : {"1", "yes", "true", "on"}) {
    EXPECT_EQ(parse_bool(yes), true) << yes;
  }
  for (const char* no : {"0", "no", "false", "off"}) {
    EXPECT_EQ(parse_bool(no), false) << no;
  }
  for (const char* neither : {"", "2", "Yes", " on", "maybe"}) {
    EXPECT_EQ(parse_bool(neither), std::nullopt) << neither;
  }
  EXPECT_EQ(bool_text(true), "1");
  EXPECT_EQ(bool_text(false), "0");
}

TEST(SettingRules, NumbersAreWholeDecimalsWithinTheirRange) {
  EXPECT_EQ(parse_in_range("0", 0, 5), 0u);
  EXPECT_EQ(parse_in_range("5", 0, 5), 5u);
  for (const char* bad : {"6", "-1", "", " 3", "3 ", "3x", "0x3", "+3", "99999999999999999999999"}) {
    EXPECT_EQ(parse_in_range(bad, 0, 5), std::nullopt) << bad;
  }
  EXPECT_EQ(parse_in_range("1", 2, 5), std::nullopt);
}

TEST(SettingRules, NameListsTakeIdentifiersAndPatternsOnlyWhereAllowed) {
  EXPECT_EQ(parse_name_list("MPI_Barrier, a.b_2", false), (std::vector<std::string>{"MPI_Barrier", "a.b_2"}));
  EXPECT_EQ(parse_name_list("pml_*,*", true), (std::vector<std::string>{"pml_*", "*"}));
  EXPECT_EQ(parse_name_list("pml_*", false), std::nullopt);
  EXPECT_EQ(parse_name_list("queue length", false), std::nullopt);
  EXPECT_EQ(parse_name_list("a-b", true), std::nullopt);
  EXPECT_EQ(parse_name_list("", false),
            std::vector<std::string>{}); // the caller says whether empty is allowed
}

TEST(SettingRules, KnownNamesComeFromACommaList) {
  EXPECT_TRUE(is_known("two_shot", "auto, one_shot,two_shot"));
  EXPECT_FALSE(is_known("two", "auto,one_shot,two_shot"));
  EXPECT_FALSE(is_known("", "auto,one_shot"));
}

enum class Colour { Red, Green };
const char* colour_name(Colour colour) noexcept {
  return colour == Colour::Red ? "red" : "green";
}

TEST(SettingRules, EnumsAreParsedByTheirNames) {
  constexpr Colour kColours[] = {Colour::Red, Colour::Green};
  EXPECT_EQ(parse_named("green", kColours, colour_name), Colour::Green);
  EXPECT_EQ(parse_named("blue", kColours, colour_name), std::nullopt);
}

// A struct read by a table of rules, as Config and the runtime's settings are.
struct Sample {
  std::uint32_t count = 4;
  std::optional<std::uint32_t> share; // unset: someone else decides
  std::string path;
  std::string choice = "a";
  bool flag = false;
};

const std::vector<SettingRule<Sample>>& sample_rules() {
  static const std::vector<SettingRule<Sample>> rules = {
      {"COMMLENS_COUNT", "an integer from 1 to 9",
       [](Sample& s, const std::string& v) { return store_in_range(v, 1, 9, s.count); },
       [](const Sample& s) { return std::to_string(s.count); }},
      {"COMMLENS_SHARE", "an integer from 0 to 50",
       [](Sample& s, const std::string& v) { return store_in_range(v, 0, 50, s.share); },
       [](const Sample&) { return std::string("the table's"); }},
      {"COMMLENS_PATH", "a path", [](Sample& s, const std::string& v) { return store_path(v, s.path); },
       [](const Sample&) { return std::string("none"); }},
      {"COMMLENS_CHOICE", "a, b",
       [](Sample& s, const std::string& v) { return store_known(v, "a,b", s.choice); },
       [](const Sample& s) { return s.choice; }},
      {"COMMLENS_FLAG", std::string(kBoolValues),
       [](Sample& s, const std::string& v) { return store(parse_bool(v), s.flag); },
       [](const Sample& s) { return bool_text(s.flag); }},
  };
  return rules;
}

struct Read {
  Sample sample;
  std::vector<std::string> warnings;
};

Read read(const std::map<std::string, std::string>& values) {
  Read result;
  apply_rules(std::span(sample_rules()), values, result.sample,
              [&](const std::string& message) { result.warnings.push_back(message); });
  return result;
}

TEST(SettingRules, AcceptedValuesAreStoredAndKeysOfOtherTablesLeftAlone) {
  const Read result = read({{"COMMLENS_COUNT", "7"},
                            {"COMMLENS_SHARE", "0"},
                            {"COMMLENS_PATH", "/tmp/x"},
                            {"COMMLENS_CHOICE", "b"},
                            {"COMMLENS_FLAG", "yes"},
                            {"COMMLENS_SOMETHING_ELSE", "whatever"}});
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_EQ(result.sample.count, 7u);
  EXPECT_EQ(result.sample.share, 0u);
  EXPECT_EQ(result.sample.path, "/tmp/x");
  EXPECT_EQ(result.sample.choice, "b");
  EXPECT_TRUE(result.sample.flag);
}

TEST(SettingRules, EachRejectedValueWarnsOnceInKeyOrderAndKeepsTheDefault) {
  const Read result = read({{"COMMLENS_COUNT", "10"},
                            {"COMMLENS_SHARE", "51"},
                            {"COMMLENS_PATH", ""},
                            {"COMMLENS_CHOICE", "c"},
                            {"COMMLENS_FLAG", "maybe"}});
  EXPECT_EQ(result.sample.count, 4u);
  EXPECT_EQ(result.sample.share, std::nullopt);
  EXPECT_EQ(result.sample.path, "");
  EXPECT_EQ(result.sample.choice, "a");
  EXPECT_FALSE(result.sample.flag);
  EXPECT_EQ(
      result.warnings,
      (std::vector<std::string>{
          "commlens: COMMLENS_CHOICE=c is not valid (accepted: a, b); using a",
          "commlens: COMMLENS_COUNT=10 is not valid (accepted: an integer from 1 to 9); using 4",
          "commlens: COMMLENS_FLAG=maybe is not valid (accepted: 1, 0, yes, no, true, false, on, off); using "
          "0",
          "commlens: COMMLENS_PATH= is not valid (accepted: a path); using none",
          "commlens: COMMLENS_SHARE=51 is not valid (accepted: an integer from 0 to 50); using the table's",
      }));
}

TEST(SettingRules, DescriptionsGiveEachRulesDefault) {
  const std::vector<commlens::SettingDescription> descriptions = describe_rules(std::span(sample_rules()));
  ASSERT_EQ(descriptions.size(), 5u);
  EXPECT_EQ(descriptions[0].key, "COMMLENS_COUNT");
  EXPECT_EQ(descriptions[0].accepted, "an integer from 1 to 9");
  EXPECT_EQ(descriptions[0].default_value, "4");
  EXPECT_EQ(descriptions[1].default_value, "the table's");
  EXPECT_EQ(descriptions[4].default_value, "0");
}

} // namespace
