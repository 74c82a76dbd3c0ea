#pragma once
// A mistyped subcommand (`commlens reprot`) gets the nearest one suggested instead of CLI11's "A
// subcommand is required".
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace commlens::cli {

// "commlens: 'reprot' is not a commlens subcommand; did you mean 'report'? ..." when the first
// argument is neither an option nor a subcommand of `app`; empty otherwise.
std::optional<std::string> unknown_subcommand_message(const CLI::App& app, int argc, char** argv);

} // namespace commlens::cli
