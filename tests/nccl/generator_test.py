"""Unit tests of collectors/nccl/generate_nccl_wrappers.py: spec parsing, the code each role
emits and the functions table."""
import sys
import tempfile
import unittest
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "collectors" / "nccl"
sys.path.insert(0, str(SOURCE))
import generate_nccl_wrappers as generator  # noqa: E402


def one(line, family="nccl_collective"):
    return generator.parse_spec(f"family {family}\n{line}\n")[0]


class ParseSpec(unittest.TestCase):
    def test_reads_parameters_and_roles(self):
        function = one("ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, "
                       "ncclComm_t comm, cudaStream_t stream)  comm=comm peer=peer send=count*datatype", "nccl_p2p")
        self.assertEqual(function.param_names(), ["sendbuff", "count", "datatype", "peer", "comm", "stream"])
        self.assertEqual(function.roles, {"comm": "comm", "peer": "peer", "send": "count*datatype"})
        self.assertEqual(function.stored_name, "nccl:Send")
        self.assertEqual(function.family, "nccl_p2p")

    def test_rejects_unknown_parameter_and_role(self):
        with self.assertRaises(generator.SpecError):
            one("ncclBcast(void* buff, size_t count, int root, ncclComm_t comm)  root=rot")
        with self.assertRaises(generator.SpecError):
            one("ncclBcast(void* buff, size_t count, int root, ncclComm_t comm)  tag=root")
        with self.assertRaises(generator.SpecError):
            one("ncclGroupStart()  group=middle", "nccl_group")

    def test_the_shipped_spec_covers_the_api(self):
        functions = generator.parse_spec((SOURCE / "nccl_functions.spec").read_text())
        names = {f.name for f in functions}
        for name in ("ncclAllReduce", "ncclBroadcast", "ncclBcast", "ncclReduce", "ncclAllGather",
                     "ncclReduceScatter", "ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd",
                     "ncclCommInitRank", "ncclCommInitAll", "ncclCommInitRankConfig", "ncclCommSplit",
                     "ncclCommDestroy", "ncclCommAbort"):
            self.assertIn(name, names)


class Wrappers(unittest.TestCase):
    def test_rooted_terms_count_on_their_side_only(self):
        function = one("ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, "
                       "int root, ncclComm_t comm, cudaStream_t stream)  comm=comm root=root "
                       "send=count*datatype recv=count*n*datatype@root")
        code = generator.wrapper(function, 7)
        self.assertIn("call.set_root(root);", code)
        self.assertIn("call.add_sent(static_cast<std::uint64_t>(count) * type_size(datatype));", code)
        self.assertIn("call.add_received(call.applies(pmpi::Side::Root) ? static_cast<std::uint64_t>(count) * "
                      "static_cast<std::uint64_t>(call.group_size()) * type_size(datatype) : 0);", code)
        self.assertIn("first + 7", code)
        self.assertNotIn("set_tag", code, "a rooted call's slot holds the root")

    def test_passes_calls_on_untouched_before_the_profiler_runs(self):
        function = one("ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, "
                       "ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)  comm=comm send=count*datatype")
        code = generator.wrapper(function, 0)
        passthrough = code.index("const ncclResult_t result = nccl_function(sendbuff, recvbuff, count, datatype, "
                                 "op, comm, stream);\n    return result;")
        self.assertLess(code.index("note_call_before_profiler();"), passthrough, "counted before MPI_Init")
        self.assertLess(passthrough, code.index("pmpi::CallRecording call"))
        self.assertNotIn("remember_early", code)
        self.assertIn('RealFunction<ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, '
                      'ncclComm_t, cudaStream_t)> real{"ncclAllReduce"}', code)
        self.assertIn("call.set_tag(details.group_depth);", code)

    def test_communicators_from_a_unique_id_are_remembered_before_the_profiler_runs(self):
        function = one("ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank)  "
                       "newcomm=comm uid=commId", "nccl_communicator")
        code = generator.wrapper(function, 0)
        self.assertLess(code.index("remember_early_from_unique_id(*comm, commId, 0);"),
                        code.index("pmpi::CallRecording call"))

    def test_split_and_init_all_communicators_are_remembered_before_the_profiler_runs(self):
        split = one("ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config)  "
                    "comm=comm newcomm=newcomm parent=comm color=color", "nccl_communicator")
        code = generator.wrapper(split, 4)
        self.assertLess(code.index("remember_early_split(*newcomm, comm, color, 4);"),
                        code.index("pmpi::CallRecording call"))
        init_all = one("ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist)  newcomms=comm ndev=ndev",
                       "nccl_communicator")
        code = generator.wrapper(init_all, 2)
        self.assertLess(code.index("remember_early_all(comm, ndev, 2);"), code.index("pmpi::CallRecording call"))

    def test_details_roles_fill_the_side_table_after_the_record(self):
        function = one("ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, "
                       "ncclComm_t comm, cudaStream_t stream)  comm=comm peer=peer send=count*datatype "
                       "datatype=datatype stream=stream", "nccl_p2p")
        code = generator.wrapper(function, 3)
        self.assertIn("details.peer = peer;", code)
        self.assertIn("details.datatype = datatype;", code)
        self.assertIn("details.stream = stream_handle(stream);", code)
        self.assertNotIn("details.op", code, "no op role, no op")
        self.assertLess(code.index("call.record();"), code.index("store_call_details(call, details);"))
        with self.assertRaises(generator.SpecError):
            one("ncclSend(const void* sendbuff, size_t count, int peer)  op=reduction", "nccl_p2p")

    def test_group_end_leaves_the_level_also_without_profiler(self):
        code = generator.wrapper(one("ncclGroupEnd()  group=end", "nccl_group"), 1)
        self.assertEqual(code.count("leave_group();"), 2)
        self.assertLess(code.index("call.set_tag(details.group_depth);"), code.rindex("leave_group();"))
        start = generator.wrapper(one("ncclGroupStart()  group=start", "nccl_group"), 0)
        self.assertLess(start.index("enter_group();"), start.index("profiler_for_nccl()"))

    def test_a_call_made_inside_another_wrapped_call_passes_through_unrecorded(self):
        code = generator.wrapper(one("ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, "
                                     "ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)  "
                                     "comm=comm root=root stream=stream"), 1)
        inner = code.index("if (inside_nccl_call()) {\n    return nccl_function(sendbuff, recvbuff, count, datatype, "
                           "root, comm, stream);")
        self.assertLess(inner, code.index("const NcclCallScope scope;"))
        self.assertLess(code.index("const NcclCallScope scope;"), code.index("profiler_for_nccl()"))

    def test_stream_work_brackets_the_call_and_group_end_closes_it(self):
        code = generator.wrapper(one("ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, "
                                     "ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)  "
                                     "comm=comm send=count*datatype stream=stream"), 0)
        self.assertLess(code.index("begin_stream_work(call, stream);"),
                        code.index("const ncclResult_t result = nccl_function(sendbuff, recvbuff, count, datatype, "
                                   "op, comm, stream);\n  call.finish();"))
        self.assertLess(code.index("store_call_details(call, details);"), code.index("end_stream_work(call, stream);"))
        without_stream = generator.wrapper(one("ncclCommDestroy(ncclComm_t comm)  comm=comm free_comm=comm",
                                               "nccl_communicator"), 0)
        self.assertNotIn("stream_work", without_stream)
        group_end = generator.wrapper(one("ncclGroupEnd()  group=end", "nccl_group"), 1)
        self.assertIn("if (group_depth() == 0) {\n    end_stream_group();", group_end)

    def test_communicator_roles_register_after_success(self):
        init = generator.wrapper(one("ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank)"
                                     "  newcomm=comm uid=commId", "nccl_communicator"), 0)
        self.assertIn("if (result == kNcclSuccess || result == kNcclInProgress) {\n"
                      "    register_from_unique_id(call, *comm, commId);", init)
        split = generator.wrapper(one("ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, "
                                      "ncclConfig_t* config)  comm=comm newcomm=newcomm parent=comm color=color",
                                      "nccl_communicator"), 0)
        self.assertIn("register_split(call, *newcomm, comm, color);", split)
        destroy = generator.wrapper(one("ncclCommDestroy(ncclComm_t comm)  comm=comm free_comm=comm",
                                        "nccl_communicator"), 0)
        self.assertLess(destroy.index("call.set_communicator"), destroy.index("forget_communicator(comm);"))


class Outputs(unittest.TestCase):
    def test_writes_wrappers_and_a_table_in_spec_order(self):
        with tempfile.TemporaryDirectory() as folder:
            self.assertEqual(generator.main(["generate", str(SOURCE / "nccl_functions.spec"), folder]), 0)
            table = (Path(folder) / "nccl_function_table.cpp").read_text()
            wrappers = (Path(folder) / "nccl_wrappers.cpp").read_text()
        self.assertLess(table.index('{"nccl:AllReduce", "nccl_collective", TagOrRoot::Tag}'),
                        table.index('{"nccl:Broadcast", "nccl_collective", TagOrRoot::Root}'))
        self.assertIn('{"nccl:CommDestroy", "nccl_communicator", TagOrRoot::None}', table)
        self.assertEqual(wrappers.count('extern "C" COMMLENS_EXPORT'), table.count("TagOrRoot::"))


if __name__ == "__main__":
    unittest.main()
