// Host time per launch group (an event record, a stream wait, a kernel launch, an event record, a
// stream wait: what NCCL does around each kernel) with a given set of the CUPTI features the CUDA
// collector enables, to tell which one costs what (bench/cupti_feature_cost.sh runs the variants).
//   cupti_feature_cost FEATURES [GROUPS=20000]
// FEATURES: "none" or a comma list of kernel, sync, memcpy, extcorr, api (the API records of every call
// that queues device work), copyapi (those of memcpy calls only), stamp, push, callbacks, um (unified
// memory counters), marker (NVTX ranges).
// Prints "<features> <ns per group>". Timed: the host side only, the stream synchronised every 64
// groups outside the timed part.
#include <cuda_runtime.h>
#include <cupti.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kBufferBytes = 8 << 20;
constexpr long kSyncEvery = 64;

__global__ void touch(int* value) {
  if (threadIdx.x == 0) {
    value[0] += 1;
  }
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
  }
  std::free(buffer);
}

std::uint64_t CUPTIAPI steady_timestamp() {
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

void CUPTIAPI ignore_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// The CUDA collector's choice of API records: the calls that queue device work, or only copies.
bool selected(const char* name, bool copies_only) {
  for (const char* part : {"Memcpy", "Memset", "Launch", "Synchronize", "WaitEvent"}) {
    if (std::strstr(name, part) != nullptr) {
      return !copies_only || std::strcmp(part, "Memcpy") == 0;
    }
  }
  return false;
}

void enable_api_records(bool copies_only) {
  for (std::uint32_t id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, id, &name) == CUPTI_SUCCESS && name != nullptr &&
        selected(name, copies_only)) {
      cuptiActivityEnableRuntimeApi(id, 1);
    }
  }
  for (std::uint32_t id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, id, &name) == CUPTI_SUCCESS && name != nullptr &&
        selected(name, copies_only)) {
      cuptiActivityEnableDriverApi(id, 1);
    }
  }
}

void enable_unified_memory_counters() {
  std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> configs;
  for (const auto kind : {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
                          CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
                          CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD}) {
    configs.push_back({CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE, kind, 0, 1});
  }
  cuptiActivityConfigureUnifiedMemoryCounter(configs.data(), static_cast<std::uint32_t>(configs.size()));
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
}

void enable(const std::string& features) {
  const auto has = [&](const char* feature) {
    return ("," + features + ",").find("," + std::string(feature) + ",") != std::string::npos;
  };
  cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (has("stamp")) {
    cuptiActivityRegisterTimestampCallback(steady_timestamp);
  }
  if (has("kernel")) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  }
  if (has("sync")) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  }
  if (has("memcpy")) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
  }
  if (has("extcorr")) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  }
  if (has("api") || has("copyapi")) {
    enable_api_records(!has("api"));
  }
  if (has("um")) {
    enable_unified_memory_counters();
  }
  if (has("marker")) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);
  }
  if (has("callbacks")) {
    CUpti_SubscriberHandle subscriber = nullptr;
    cuptiSubscribe(&subscriber, ignore_callback, nullptr);
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
  }
}

} // namespace

int main(int argc, char** argv) {
  const std::string features = argc > 1 ? argv[1] : "none";
  const long groups = argc > 2 ? std::atol(argv[2]) : 20000;
  cudaFree(nullptr);
  if (features != "none") {
    enable(features);
  }
  const bool push = ("," + features + ",").find(",push,") != std::string::npos;
  cudaStream_t first = nullptr, second = nullptr;
  cudaStreamCreate(&first);
  cudaStreamCreate(&second);
  cudaEvent_t before = nullptr, after = nullptr;
  cudaEventCreateWithFlags(&before, cudaEventDisableTiming);
  cudaEventCreateWithFlags(&after, cudaEventDisableTiming);
  int* value = nullptr;
  cudaMalloc(&value, sizeof(int));
  const auto group = [&](long i) {
    if (push) {
      cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                             static_cast<std::uint64_t>(i));
    }
    cudaEventRecord(before, first);
    cudaStreamWaitEvent(second, before, 0);
    touch<<<1, 32, 0, second>>>(value);
    cudaEventRecord(after, second);
    cudaStreamWaitEvent(first, after, 0);
    if (push) {
      std::uint64_t id = 0;
      cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
    }
  };
  for (long i = 0; i < groups / 10; ++i) { // warm-up
    group(i);
  }
  cudaDeviceSynchronize();
  std::chrono::steady_clock::duration host{};
  for (long done = 0; done < groups; done += kSyncEvery) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < kSyncEvery; ++i) {
      group(done + i);
    }
    host += std::chrono::steady_clock::now() - start;
    cudaStreamSynchronize(first);
  }
  std::printf("%s %.1f\n", features.c_str(), std::chrono::duration<double, std::nano>(host).count() / groups);
  if (features != "none") {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  return 0;
}
