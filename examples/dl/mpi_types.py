"""MPI datatypes and reduction ops for torch tensors. MPI has no 16-bit float, so fp16 gradients
travel as a 2-byte contiguous type with a user-defined sum, the type named
`commlens:float16:sum` so that commlens' GPU runtime can reduce device buffers itself."""
import numpy
import torch
from mpi4py import MPI

_FLOAT16 = None
_FLOAT16_SUM = None


def _sum_float16(inbuf, inoutbuf, datatype):
    into = numpy.frombuffer(inoutbuf, dtype=numpy.float16)
    into += numpy.frombuffer(inbuf, dtype=numpy.float16)


def float16_type_and_sum():
    global _FLOAT16, _FLOAT16_SUM
    if _FLOAT16 is None:
        _FLOAT16 = MPI.BYTE.Create_contiguous(2)
        _FLOAT16.Set_name("commlens:float16:sum")
        _FLOAT16.Commit()
        _FLOAT16_SUM = MPI.Op.Create(_sum_float16, commute=True)
    return _FLOAT16, _FLOAT16_SUM


def datatype_of(dtype):
    if dtype == torch.float16:
        return float16_type_and_sum()[0]
    types = {torch.float32: MPI.FLOAT, torch.float64: MPI.DOUBLE, torch.int64: MPI.INT64_T,
             torch.int32: MPI.INT32_T, torch.uint8: MPI.UINT8_T}
    return types[dtype]


def sum_op_of(dtype):
    return float16_type_and_sum()[1] if dtype == torch.float16 else MPI.SUM


def free_types():
    global _FLOAT16, _FLOAT16_SUM
    if _FLOAT16 is not None:
        _FLOAT16.Free()
        _FLOAT16_SUM.Free()
        _FLOAT16 = _FLOAT16_SUM = None
