// Which MPI datatype/op pairs the runtime's kernels take: exactly MPI's predefined pairs it has a
// kernel for; everything else goes to the baseline with a reason. Host-only, runs without a GPU.
#include "mpi_reduction_map.hpp"

#include <gtest/gtest.h>

namespace commlens::runtime {
namespace {

TEST(ReductionMap, PredefinedIntegerAndFloatingTypesMapToTheirElementTypes) {
  const char* why = nullptr;
  EXPECT_EQ(reduction_for(MPI_INT, MPI_SUM, &why)->type, ElementType::Int32);
  EXPECT_EQ(reduction_for(MPI_UNSIGNED_LONG, MPI_MAX, &why)->type, ElementType::UInt64);
  EXPECT_EQ(reduction_for(MPI_SIGNED_CHAR, MPI_PROD, &why)->type, ElementType::Int8);
  EXPECT_EQ(reduction_for(MPI_DOUBLE, MPI_MIN, &why)->type, ElementType::Float64);
  EXPECT_EQ(reduction_for(MPI_C_BOOL, MPI_LXOR, &why)->op, ReduceOp::LogicalXor);
  EXPECT_EQ(reduction_for(MPI_UINT16_T, MPI_BXOR, &why)->op, ReduceOp::BitXor);
}

TEST(ReductionMap, PairsMpiDoesNotDefineAreDeclinedWithAReason) {
  const char* why = nullptr;
  EXPECT_FALSE(reduction_for(MPI_FLOAT, MPI_BAND, &why));
  EXPECT_STREQ(why, "operation not defined for this datatype");
  EXPECT_FALSE(reduction_for(MPI_DOUBLE, MPI_LAND, &why));
  EXPECT_FALSE(reduction_for(MPI_C_BOOL, MPI_SUM, &why));
}

TEST(ReductionMap, UserOpsPairTypesAndLocOpsGoToTheBaseline) {
  const char* why = nullptr;
  EXPECT_FALSE(reduction_for(MPI_2INT, MPI_MINLOC, &why));
  EXPECT_NE(std::string(why).find("datatype not supported"), std::string::npos);
  EXPECT_FALSE(reduction_for(MPI_INT, MPI_MAXLOC, &why));
  EXPECT_NE(std::string(why).find("operation not supported"), std::string::npos);
  EXPECT_FALSE(reduction_for(MPI_INT, MPI_REPLACE, &why));
}

TEST(ReductionMap, EveryOpAppliesToEveryIntegerTypeAndArithmeticToFloats) {
  for (const ElementType type :
       {ElementType::Int8, ElementType::UInt16, ElementType::Int32, ElementType::UInt64}) {
    for (int op = 0; op <= static_cast<int>(ReduceOp::BitXor); ++op) {
      EXPECT_TRUE(op_applies(static_cast<ReduceOp>(op), type)) << op;
    }
  }
  for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max}) {
    EXPECT_TRUE(op_applies(op, ElementType::Float32));
  }
  EXPECT_EQ(element_size(ElementType::Float64), 8u);
  EXPECT_EQ(element_size(ElementType::Bool), 1u);
}

} // namespace
} // namespace commlens::runtime
