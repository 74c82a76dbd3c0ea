// Which MPI datatype/op pairs the runtime's kernels take: exactly MPI's predefined pairs it has a
// kernel for, and 16-bit floats named by the datatype hint; everything else goes to the baseline
// with a reason. Host-only, runs without a GPU (a singleton MPI process, for the named datatypes).
#include "device/mpi_reduction_map.hpp"

#include <gtest/gtest.h>

#include <string>

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

// A 2-byte datatype named `name` (MPI has no 16-bit float type; programs use such a type with a
// user-defined op).
MPI_Datatype named_type(int bytes, const char* name) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(bytes, MPI_BYTE, &type);
  MPI_Type_set_name(type, name);
  MPI_Type_commit(&type);
  return type;
}

void user_op(void*, void*, int*, MPI_Datatype*) {}

class HalfPrecisionHint : public ::testing::Test {
protected:
  void SetUp() override { MPI_Op_create(user_op, 1, &op_); }
  void TearDown() override { MPI_Op_free(&op_); }
  MPI_Op op_ = MPI_OP_NULL;
};

TEST_F(HalfPrecisionHint, NamedTwoByteTypesWithAUserOpMapToSixteenBitFloats) {
  const char* why = nullptr;
  MPI_Datatype half_sum = named_type(2, "commlens:float16:sum");
  MPI_Datatype bf16_max = named_type(2, "commlens:bfloat16:max");
  const auto half = reduction_for(half_sum, op_, &why);
  ASSERT_TRUE(half) << why;
  EXPECT_EQ(half->type, ElementType::Float16);
  EXPECT_EQ(half->op, ReduceOp::Sum);
  const auto bf16 = reduction_for(bf16_max, op_, &why);
  ASSERT_TRUE(bf16) << why;
  EXPECT_EQ(bf16->type, ElementType::BFloat16);
  EXPECT_EQ(bf16->op, ReduceOp::Max);
  EXPECT_EQ(element_size(ElementType::BFloat16), 2u);
  EXPECT_FALSE(op_applies(ReduceOp::BitXor, ElementType::Float16));
  MPI_Type_free(&half_sum);
  MPI_Type_free(&bf16_max);
}

TEST_F(HalfPrecisionHint, WrongHintsAndPredefinedOpsAreDeclinedWithTheirReason) {
  const char* why = nullptr;
  MPI_Datatype four_bytes = named_type(4, "commlens:float16:sum");
  EXPECT_FALSE(reduction_for(four_bytes, op_, &why));
  EXPECT_STREQ(why, "datatype hint names a 16-bit float but the datatype is not 2 bytes");
  MPI_Datatype unknown_op = named_type(2, "commlens:float16:bxor");
  EXPECT_FALSE(reduction_for(unknown_op, op_, &why));
  EXPECT_NE(std::string(why).find("hint not understood"), std::string::npos);
  MPI_Datatype unnamed = named_type(2, "my_half");
  EXPECT_FALSE(reduction_for(unnamed, op_, &why));
  EXPECT_NE(std::string(why).find("datatype not supported"), std::string::npos);
  // A predefined op on the hinted type is MPI's error to report, not the runtime's to run.
  MPI_Datatype half_sum = named_type(2, "commlens:float16:sum");
  EXPECT_FALSE(reduction_for(half_sum, MPI_SUM, &why));
  for (MPI_Datatype* type : {&four_bytes, &unknown_op, &unnamed, &half_sum}) {
    MPI_Type_free(type);
  }
}

} // namespace
} // namespace commlens::runtime
