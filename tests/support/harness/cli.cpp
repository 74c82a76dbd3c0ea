#include "cli.hpp"

#include <cstdio>
#include <memory>

namespace commlens::integration {

std::string commlens_output(const std::string& arguments) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(
      popen((std::string(COMMLENS_TEST_CLI) + " " + arguments).c_str(), "r"), &pclose);
  std::string out;
  char buffer[4096];
  while (const auto read = fread(buffer, 1, sizeof buffer, pipe.get()))
    out.append(buffer, read);
  return out;
}

} // namespace commlens::integration
