// libFuzzer target over the database loader and every report renderer: any byte string written
// to a file must end in a report (and a Chrome export, and a report of the NVTX range "train") or
// in one AnalysisError, never in a crash or another exception.
#include "commlens/analysis/errors.hpp"
#include "commlens/analysis/report.hpp"
#include "commlens/analysis/report_format.hpp"
#include "commlens/analysis/trace_export.hpp"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/commlens-fuzz-" + std::to_string(getpid()) + ".sqlite";
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const commlens::analysis::Database database(path);
    database.require_events();
    const auto report = commlens::analysis::build_report(database);
    commlens::analysis::render_text_report(report);
    commlens::analysis::render_json_report(report);
    commlens::analysis::render_html_report(report);
    static std::FILE* const discard = std::fopen("/dev/null", "w");
    commlens::analysis::export_chrome_trace(database, discard);
    // The NVTX phase filter builds and drops TEMP tables; the seeds name a range "train".
    commlens::analysis::build_report(database, {.nvtx_range = "train"});
  } catch (const commlens::analysis::AnalysisError&) {
    // The expected outcome for almost every input: a one-line error.
  }
  return 0;
}
