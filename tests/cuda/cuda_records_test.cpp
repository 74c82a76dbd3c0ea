// The names and ids of CUDA API functions in cuda_api_functions (cuda_records.hpp).
#include "cuda_records.hpp"

#include <gtest/gtest.h>

namespace {

using commlens::cuda::api_function_id;
using commlens::cuda::api_function_name;
using commlens::cuda::ApiDomain;

TEST(ApiFunctions, RuntimeNamesLoseTheVersionCuptiAppends) {
  EXPECT_EQ(api_function_name(ApiDomain::Runtime, "cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(api_function_name(ApiDomain::Runtime, "cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync_ptsz");
  EXPECT_EQ(api_function_name(ApiDomain::Runtime, "cudaStreamSynchronize_v3020"), "cudaStreamSynchronize");
  EXPECT_EQ(api_function_name(ApiDomain::Runtime, "cudaMemcpy"), "cudaMemcpy");
  EXPECT_EQ(api_function_name(ApiDomain::Runtime, "cudaFoo_v"), "cudaFoo_v") << "no digits: not a version";
  EXPECT_EQ(api_function_name(ApiDomain::Runtime, "cudaFoo_v1a"), "cudaFoo_v1a");
}

TEST(ApiFunctions, DriverNamesAreTheSymbolsAndStay) {
  EXPECT_EQ(api_function_name(ApiDomain::Driver, "cuMemcpyHtoD_v2"), "cuMemcpyHtoD_v2");
  EXPECT_EQ(api_function_name(ApiDomain::Driver, "cuLaunchKernel"), "cuLaunchKernel");
}

TEST(ApiFunctions, DriverIdsLieAboveEveryRuntimeId) {
  EXPECT_EQ(api_function_id(ApiDomain::Runtime, 211), 211);
  EXPECT_EQ(api_function_id(ApiDomain::Driver, 211), 65536 + 211);
}

} // namespace
