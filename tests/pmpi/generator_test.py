"""Tests of generate_wrappers.py: spec parsing, detection of declared functions, emitted roles."""
import importlib.util
import tempfile
import unittest
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "generate_wrappers", Path(__file__).resolve().parents[2] / "collectors/pmpi/generate_wrappers.py")
generator = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generator)

SPEC = """
family p2p
MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)  comm=comm peer=dest tag=tag send=count*datatype large_count
MPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request* request)  comm=comm peer=dest source=source tag=sendtag send=sendcount*sendtype recv=recvcount*recvtype request=request
family collective
MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)  comm=comm root=root send=sendcount*sendtype recv=recvcount*recvtype*n@root inplace=sendbuf send_inplace=recvcount*recvtype
"""
# What `cc -E` leaves of an MPI-3 header: Open MPI style, no MPI-4 functions, own parameter names.
HEADER = """
extern int PMPI_Send(const void *b, int c, MPI_Datatype d, int dst, int t, MPI_Comm comm) __attribute__((visibility("default")));
extern int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm);
"""


class GeneratorTest(unittest.TestCase):
    def generate(self, header=HEADER):
        functions = generator.expand(generator.parse_spec(SPEC), generator.declared_prototypes(header))
        output = Path(tempfile.mkdtemp())
        generator.write_outputs(functions, ["p2p", "collective"], output)
        return functions, output

    def test_wraps_functions_the_header_declares(self):
        _, output = self.generate()
        self.assertIn('extern "C" COMMLENS_EXPORT int MPI_Send(', (output / "wrappers_p2p.cpp").read_text())

    def test_skips_functions_the_header_does_not_declare(self):
        functions, output = self.generate()
        names = [f.name for f in functions]
        self.assertNotIn("MPI_Isendrecv", names)
        self.assertNotIn("MPI_Send_c", names)
        self.assertNotIn("MPI_Isendrecv", (output / "wrappers_p2p.cpp").read_text())

    def test_emits_large_count_variant_when_declared(self):
        header = HEADER + "int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);"
        _, output = self.generate(header)
        self.assertIn("int MPI_Send_c(const void * buf, MPI_Count count,", (output / "wrappers_p2p.cpp").read_text())

    def test_uses_header_types_with_spec_parameter_names(self):
        _, output = self.generate()
        self.assertIn("MPI_Send(const void * buf, int count, MPI_Datatype datatype, int dest", (output / "wrappers_p2p.cpp").read_text())

    def test_in_place_and_root_rules_reach_the_recording_calls(self):
        _, output = self.generate()
        text = (output / "wrappers_collective.cpp").read_text()
        self.assertIn("sendbuf == MPI_IN_PLACE ? commlens::pmpi::count_of(recvcount) * call.type_size(recvtype)", text)
        self.assertIn("call.applies(commlens::pmpi::Side::Root)) { call.add_received(commlens::pmpi::count_of(recvcount) * call.type_size(recvtype) * call.group_size())", text)

    def test_arguments_are_recorded_whatever_the_call_returns(self):
        _, output = self.generate()
        send = (output / "wrappers_p2p.cpp").read_text().split("int MPI_Send(")[1]
        body = send[:send.index("call.record();")]
        self.assertNotIn("if (rc == MPI_SUCCESS)", body.split("call.add_sent")[0].split("call.finish();")[1])
        self.assertIn("call.add_sent(commlens::pmpi::count_of(count) * call.type_size(datatype));", body)

    def test_in_place_calls_record_the_location_of_the_buffer_they_use(self):
        _, output = self.generate()
        text = (output / "wrappers_collective.cpp").read_text()
        self.assertIn("call.set_location(sendbuf == MPI_IN_PLACE ? static_cast<const void*>(recvbuf) : sendbuf);", text)

    def test_device_buffers_are_staged_with_the_calls_span_and_outputs_kept_where_mpi_writes_nothing(self):
        _, output = self.generate()
        gather = (output / "wrappers_collective.cpp").read_text()
        # A collective writes its whole output unless in place, then the output holds the input.
        self.assertIn("staging.stage(recvbuf, (commlens::pmpi::DeviceStaging::dense(recvtype) ? "
                      "commlens::pmpi::count_of(recvcount) * commlens::pmpi::DeviceStaging::size_of(recvtype) * "
                      "staging.group_size() : commlens::pmpi::kWholeAllocation), true, sendbuf == MPI_IN_PLACE)", gather)
        self.assertIn("PMPI_Gather(staged_sendbuf,", gather)
        send = (output / "wrappers_p2p.cpp").read_text()
        self.assertIn("staging.stage(buf, (commlens::pmpi::DeviceStaging::dense(datatype) ? commlens::pmpi::count_of(count)"
                      " * commlens::pmpi::DeviceStaging::size_of(datatype) : commlens::pmpi::kWholeAllocation), false, false)",
                      send)

    def test_function_ids_are_dense_in_spec_order(self):
        _, output = self.generate()
        ids = (output / "function_ids.hpp").read_text()
        self.assertIn("MPI_Send = 0;", ids)
        self.assertIn("MPI_Gather = 1;", ids)

    def test_rejects_roles_naming_unknown_parameters(self):
        with self.assertRaises(generator.SpecError):
            generator.parse_spec("family p2p\nMPI_Send(const void* buf, int count)  peer=dest\n")

    def test_rejects_a_header_with_a_different_parameter_count(self):
        with self.assertRaises(generator.SpecError):
            generator.expand(generator.parse_spec(SPEC), generator.declared_prototypes("int PMPI_Send(const void *buf);"))

    def test_unwrapped_lines_give_patterns_and_no_functions(self):
        text = "unwrapped MPI_Wtime MPI_*_c2f\nfamily p2p\nMPI_Cancel(MPI_Request* request)\n"
        self.assertEqual(generator.unwrapped_patterns(text), ["MPI_Wtime", "MPI_*_c2f"])
        self.assertEqual([f.name for f in generator.parse_spec(text)], ["MPI_Cancel"])

    def test_only_wrappers_of_functions_the_header_deprecates_silence_the_deprecation_warning(self):
        spec = ("family attribute\nMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val)  comm=comm\n"
                "MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val)  comm=comm\n")
        header = ('int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val) __attribute__((__deprecated__('
                  '"PMPI_Attr_put was deprecated in MPI-2.0; use PMPI_Comm_set_attr instead")));\n'
                  "int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val);\n")
        self.assertEqual(generator.deprecated_functions(header), {"MPI_Attr_put"})
        functions = generator.expand(generator.parse_spec(spec), generator.declared_prototypes(header),
                                     generator.deprecated_functions(header))
        output = Path(tempfile.mkdtemp())
        generator.write_outputs(functions, ["attribute"], output)
        text = (output / "wrappers_attribute.cpp").read_text()
        push = '#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored "-Wdeprecated-declarations"\n'
        self.assertEqual(text.count(push), 1)
        self.assertEqual(text.count("#pragma GCC diagnostic pop"), 1)
        silenced = text[text.index(push):text.index("#pragma GCC diagnostic pop")]
        self.assertIn("int MPI_Attr_put(", silenced)
        self.assertNotIn("MPI_Comm_set_attr", silenced)

    def test_joined_communicators_are_registered_on_this_side_even_while_collection_is_off(self):
        spec = "family process\nMPI_Comm_join(int fd, MPI_Comm* intercomm)  joined=intercomm\n"
        header = "int PMPI_Comm_join(int fd, MPI_Comm *intercomm);"
        functions = generator.expand(generator.parse_spec(spec), generator.declared_prototypes(header))
        text = generator.wrapper(functions[0])
        self.assertIn("register_joined_communicator(call.function(), *intercomm, MPI_COMM_SELF);", text)
        self.assertIn("if (profiler == nullptr) [[unlikely]]", text)

    def runtime_outputs(self):
        spec = SPEC.replace("send=count*datatype large_count", "send=count*datatype large_count runtime")
        header = HEADER + "int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);"
        functions = generator.expand(generator.parse_spec(spec), generator.declared_prototypes(header))
        output = Path(tempfile.mkdtemp())
        generator.write_outputs(functions, ["p2p", "collective"], output)
        return output

    def test_a_runtime_function_gets_an_entry_with_the_header_types_and_the_call_tail(self):
        output = self.runtime_outputs()
        entries = (output / "runtime_entries.hpp").read_text()
        self.assertIn("int (*send)(const void * buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, "
                      "std::uint64_t call_id, std::uint8_t* implementation) = nullptr;", entries)
        self.assertNotIn("gather", entries)
        self.assertNotIn("send_c", entries)  # the runtime takes int counts only

    def test_the_runtime_must_implement_each_entry_and_installs_it_by_family_and_name(self):
        points = (self.runtime_outputs() / "runtime_entry_points.hpp").read_text()
        self.assertIn("int MPI_Send(const void * buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, "
                      "std::uint64_t call_id, std::uint8_t* implementation) noexcept;", points)
        self.assertIn('if (accept("p2p", "send")) {\n    entries.send = entry::MPI_Send;\n  }', points)
        self.assertNotIn("MPI_Gather", points)

    def test_a_runtime_function_dispatches_through_its_entry_and_its_large_count_variant_does_not(self):
        wrappers = (self.runtime_outputs() / "wrappers_p2p.cpp").read_text()
        dispatch = "commlens::pmpi::runtime::run<&commlens::contract::RuntimeCallEntries::send, PMPI_Send>"
        self.assertIn(f"{dispatch}(static_cast<commlens::pmpi::CallRecording*>(nullptr), staged_buf, count, datatype, dest, "
                      "tag, comm)", wrappers)
        self.assertIn(f"{dispatch}(&call, staged_buf, count, datatype, dest, tag, comm)", wrappers)
        self.assertIn("commlens::contract::collector_hooks().runtime.send == nullptr", wrappers)
        large_count = wrappers.split("int MPI_Send_c(")[1]
        self.assertIn("PMPI_Send_c(staged_buf,", large_count)
        self.assertNotIn("runtime::run", large_count)


if __name__ == "__main__":
    unittest.main()
