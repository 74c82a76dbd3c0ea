#include "path_cache.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <unistd.h>

namespace commlens::runtime::topology {

namespace {

using nlohmann::json;
constexpr int kFormat = 1;

json to_json(const GpuPaths& paths) {
  json peers = json::array();
  for (const PeerPath& peer : paths.peers) {
    peers.push_back({{"pci", peer.pci}, {"performance_rank", peer.performance_rank}, {"gbps", peer.gbps}});
  }
  return {{"name", paths.name},
          {"driver", paths.driver},
          {"host_to_device_gbps", paths.host_to_device_gbps},
          {"device_to_host_gbps", paths.device_to_host_gbps},
          {"peers", peers}};
}

GpuPaths from_json(const std::string& pci, const json& entry) {
  GpuPaths paths;
  paths.pci = pci;
  paths.name = entry.at("name").get<std::string>();
  paths.driver = entry.at("driver").get<int>();
  paths.host_to_device_gbps = entry.at("host_to_device_gbps").get<double>();
  paths.device_to_host_gbps = entry.at("device_to_host_gbps").get<double>();
  for (const json& peer : entry.at("peers")) {
    paths.peers.push_back({peer.at("pci").get<std::string>(), peer.at("performance_rank").get<int>(),
                           peer.at("gbps").get<double>()});
  }
  return paths;
}

// The file's JSON: an empty document when it does not exist; nullopt (with *problem) when it
// exists but is not this format.
std::optional<json> read_document(const std::filesystem::path& file, std::string* problem) {
  std::ifstream in(file);
  if (!in) {
    return json{{"format", kFormat}, {"gpus", json::object()}};
  }
  json document = json::parse(in, nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    *problem = file.string() + ": not JSON";
  } else if (document.value("format", 0) != kFormat || !document.contains("gpus") ||
             !document["gpus"].is_object()) {
    *problem = file.string() + ": not a commlens path file of format " + std::to_string(kFormat);
  } else {
    return document;
  }
  return std::nullopt;
}

// flock() on FILE.lock for the lifetime of this object (released on close).
class FileLock {
public:
  explicit FileLock(const std::filesystem::path& file)
      : descriptor_(::open((file.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (descriptor_ >= 0 && ::flock(descriptor_, LOCK_EX) != 0) {
      ::close(descriptor_);
      descriptor_ = -1;
    }
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() {
    if (descriptor_ >= 0) {
      ::close(descriptor_);
    }
  }
  bool held() const { return descriptor_ >= 0; }

private:
  int descriptor_;
};

} // namespace

std::filesystem::path default_cache_file(const std::string& host) {
  std::filesystem::path directory;
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache != nullptr && *cache != '\0') {
    directory = cache;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    directory = std::filesystem::path(home) / ".cache";
  } else {
    directory = std::filesystem::temp_directory_path();
  }
  return directory / "commlens" / ("paths-" + host + ".json");
}

std::optional<GpuPaths> read_cached(const std::filesystem::path& file, const std::string& pci,
                                    const std::string& name, int driver, std::string* problem) {
  const std::optional<json> document = read_document(file, problem);
  if (!document || !(*document)["gpus"].contains(pci)) {
    return std::nullopt;
  }
  try {
    GpuPaths paths = from_json(pci, (*document)["gpus"][pci]);
    if (paths.name == name && paths.driver == driver) {
      return paths;
    }
  } catch (const json::exception& error) {
    *problem = file.string() + ": entry " + pci + ": " + error.what();
  }
  return std::nullopt;
}

bool store(const std::filesystem::path& file, const GpuPaths& paths, std::string* problem) {
  std::error_code error;
  std::filesystem::create_directories(file.parent_path(), error);
  const FileLock lock(file);
  if (!lock.held()) {
    *problem = "cannot lock " + file.string() + ".lock";
    return false;
  }
  std::string unreadable;
  // A file of another format is replaced rather than kept unusable forever.
  json document =
      read_document(file, &unreadable).value_or(json{{"format", kFormat}, {"gpus", json::object()}});
  document["gpus"][paths.pci] = to_json(paths);
  const std::filesystem::path written = file.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(written);
    out << document.dump(2) << '\n';
    if (!out.flush()) {
      *problem = "cannot write " + written.string();
      std::filesystem::remove(written, error);
      return false;
    }
  }
  std::filesystem::rename(written, file, error);
  if (error) {
    *problem = "cannot replace " + file.string() + ": " + error.message();
    std::filesystem::remove(written, error);
    return false;
  }
  return true;
}

std::string describe(const GpuPaths& paths) {
  std::string text = fmt::format("host->GPU {:.1f} GB/s, GPU->host {:.1f} GB/s", paths.host_to_device_gbps,
                                 paths.device_to_host_gbps);
  for (const PeerPath& peer : paths.peers) {
    text += fmt::format("; to {} {:.1f} GB/s", peer.pci, peer.gbps);
    if (peer.performance_rank >= 0) {
      text += fmt::format(" (rank {})", peer.performance_rank);
    }
  }
  return text;
}

} // namespace commlens::runtime::topology
