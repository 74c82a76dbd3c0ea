#include "commlens/analysis/kernel_names.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace commlens::analysis {
namespace {

constexpr std::string_view kAnonymousNamespace = "(anonymous namespace)::";

// The position of the first `wanted` character outside <>, () and {} groups, from `from`.
std::size_t find_top_level(std::string_view text, char wanted, std::size_t from = 0) {
  int depth = 0;
  for (std::size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (depth == 0 && c == wanted)
      return i;
    if (c == '<' || c == '(' || c == '{')
      ++depth;
    else if ((c == '>' || c == ')' || c == '}') && depth > 0)
      --depth;
  }
  return std::string_view::npos;
}

// The part after the last top-level "::" (the name without its namespaces and classes).
std::string_view unqualified(std::string_view name) {
  std::size_t start = 0;
  for (std::size_t colon = find_top_level(name, ':'); colon != std::string_view::npos;
       colon = find_top_level(name, ':', colon + 2)) {
    if (colon + 1 < name.size() && name[colon + 1] == ':')
      start = colon + 2;
    else
      break;
  }
  return name.substr(start);
}

// Names that tell nothing without their first template argument: Kernel, Kernel2, kernel.
bool generic(std::string_view base) {
  if (base.size() < 6 || (base.substr(0, 6) != "Kernel" && base.substr(0, 6) != "kernel"))
    return false;
  for (const char c : base.substr(6))
    if (c < '0' || c > '9')
      return false;
  return true;
}

// The last <length><identifier> of a mangled nested name starting at `at` ("N17cutlass__5x_cudnn6Kernel"
// gives Kernel), skipping substitutions (S_, S0_, St); `at` moves past it.
std::string_view last_source_name(std::string_view mangled, std::size_t& at) {
  std::string_view last;
  if (at < mangled.size() && mangled[at] == 'N')
    ++at;
  while (at < mangled.size()) {
    if (mangled[at] == 'S') {
      const auto end = mangled.find_first_of("_t", at + 1);
      if (end == std::string_view::npos)
        break;
      at = end + 1;
      continue;
    }
    std::size_t length = 0, digits = at;
    while (digits < mangled.size() && mangled[digits] >= '0' && mangled[digits] <= '9')
      length = length * 10 + static_cast<std::size_t>(mangled[digits++] - '0');
    if (digits == at || digits + length > mangled.size())
      break;
    last = mangled.substr(digits, length);
    at = digits + length;
  }
  return last;
}

// What a symbol too deep for the demangler still says: its name, and for a generic one the first
// template argument's name ("Kernel<ImplicitGemmConvolution>").
std::string short_name_of_mangled(std::string_view mangled) {
  std::size_t at = 2; // past "_Z"
  const auto name = last_source_name(mangled, at);
  if (name.empty())
    return std::string(mangled);
  if (!generic(name) || at >= mangled.size() || mangled[at] != 'I')
    return std::string(name);
  ++at;
  const auto argument = last_source_name(mangled, at);
  return argument.empty() ? std::string(name) : std::string(name) + "<" + std::string(argument) + ">";
}

std::string without_anonymous_namespaces(std::string text) {
  for (auto found = text.find(kAnonymousNamespace); found != std::string::npos;
       found = text.find(kAnonymousNamespace, found))
    text.erase(found, kAnonymousNamespace.size());
  return text;
}

} // namespace

std::string demangled_kernel_name(const std::string& name) {
  if (!name.starts_with("_Z"))
    return name;
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : name;
}

std::string short_kernel_name(const std::string& name) {
  const std::string demangled = demangled_kernel_name(name);
  if (demangled == name && name.starts_with("_Z"))
    return short_name_of_mangled(name);
  const std::string signature = without_anonymous_namespaces(demangled);
  std::string_view text = signature;
  // The function name ends where its parameter list opens; the return type ends at the last
  // top-level space before that ("void at::native::f<4, std::array<char*, 3ul> >(int)").
  text = text.substr(0, find_top_level(text, '('));
  // A space inside the template arguments is no separator: the top-level search never sees it.
  for (auto space = find_top_level(text, ' '); space != std::string_view::npos;
       space = find_top_level(text, ' '))
    text.remove_prefix(space + 1);
  text = unqualified(text);
  const auto open = find_top_level(text, '<');
  const std::string_view base = text.substr(0, open);
  if (open == std::string_view::npos || !generic(base))
    return std::string(base.empty() ? std::string_view(name) : base);
  // Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>: the first argument, unqualified and
  // without its own template arguments.
  std::string_view arguments = text.substr(open + 1);
  arguments = arguments.substr(0, std::min(find_top_level(arguments, ','), find_top_level(arguments, '>')));
  arguments = unqualified(arguments);
  arguments = arguments.substr(0, find_top_level(arguments, '<'));
  return std::string(base) + "<" + std::string(arguments) + ">";
}

KernelKind kernel_kind(std::string_view name, bool launched_in_call) {
  const bool nccl = name.find("ncclDevKernel") != std::string_view::npos ||
                    name.find("ncclKernel") != std::string_view::npos;
  return nccl || launched_in_call ? KernelKind::Communication : KernelKind::Compute;
}

} // namespace commlens::analysis
