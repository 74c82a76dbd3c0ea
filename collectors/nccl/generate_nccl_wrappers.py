#!/usr/bin/env python3
"""Generates the NCCL wrappers of libcommlens.so from nccl_functions.spec.

usage: generate_nccl_wrappers.py SPEC OUTPUT_DIR

Writes nccl_wrappers.cpp (one exported wrapper per function: it finds NCCL's own function, records
the call through pmpi::CallRecording and passes it on) and nccl_function_table.cpp (the functions'
names and families, in FunctionId order). The prototypes come from the spec, not from nccl.h, so
the build needs no CUDA; the types are nccl_api.hpp's. The bookkeeping is in nccl_recording.cpp;
the code emitted here only says which argument plays which role.
"""
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROLES = {"comm", "root", "peer", "send", "recv", "group", "newcomm", "uid", "newcomms", "ndev", "parent",
         "color", "free_comm", "datatype", "op", "stream"}
EXPRESSION_ROLES = {"send", "recv"}


class SpecError(Exception):
    pass


@dataclass
class Function:
    name: str
    family: str
    params: list  # (declaration, name)
    roles: dict = field(default_factory=dict)

    @property
    def stored_name(self):
        return "nccl:" + self.name[len("nccl"):]

    def param_names(self):
        return [name for _, name in self.params]


def parse_parameter(declaration, number):
    match = re.match(r"^(.*?)([A-Za-z_]\w*)$", declaration.strip())
    if match is None or not match[1].strip():
        raise SpecError(f"spec line {number}: parameter '{declaration}' needs a type and a name")
    return declaration.strip(), match[2]


def parse_spec(text):
    functions, family = [], None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("family "):
            family = line.split()[1]
            continue
        match = re.match(r"^(nccl\w+)\((.*?)\)\s*(.*)$", line)
        if match is None or family is None:
            raise SpecError(f"spec line {number}: expected 'family NAME' or 'ncclName(params) roles'")
        name, params, annotations = match.groups()
        declarations = [p for p in params.split(",") if p.strip()]
        function = Function(name, family, [parse_parameter(p, number) for p in declarations])
        for token in annotations.split():
            key, _, value = token.partition("=")
            if key not in ROLES or not value:
                raise SpecError(f"spec line {number}: {name}: unknown role '{token}'")
            function.roles[key] = value
            if key == "group":
                if value not in ("start", "end"):
                    raise SpecError(f"spec line {number}: {name}: group is start or end")
                continue
            arguments = re.findall(r"[A-Za-z_]\w*", value.split("@")[0]) if key in EXPRESSION_ROLES else [value]
            for argument in arguments:
                if argument != "n" and argument not in function.param_names():
                    raise SpecError(f"spec line {number}: {name}: role {key} names unknown parameter {argument}")
        functions.append(function)
    return functions


def parameter_type(declaration, name):
    return declaration[: len(declaration) - len(name)].strip()


def byte_term(function, expression):
    """C++ for one send/recv role: the product of its factors, limited to one side of a rooted call."""
    product, _, side = expression.partition("@")
    factors = []
    for factor in product.split("*"):
        if factor == "n":
            factors.append("static_cast<std::uint64_t>(call.group_size())")
        elif parameter_type(*next(p for p in function.params if p[1] == factor)) == "ncclDataType_t":
            factors.append(f"type_size({factor})")
        else:
            factors.append(f"static_cast<std::uint64_t>({factor})")
    value = " * ".join(factors)
    if side:
        condition = {"root": "pmpi::Side::Root", "nonroot": "pmpi::Side::NonRoot"}.get(side)
        if condition is None:
            raise SpecError(f"{function.name}: side must be @root or @nonroot, not @{side}")
        return f"call.applies({condition}) ? {value} : 0"
    return value


def tag_or_root(function):
    if "root" in function.roles:
        return "TagOrRoot::Root"
    return "TagOrRoot::None" if function.family == "nccl_communicator" else "TagOrRoot::Tag"


def wrapper(function, index):
    roles = function.roles
    params = ", ".join(declaration for declaration, _ in function.params)
    arguments = ", ".join(function.param_names())
    pointer_type = f"ncclResult_t (*)({', '.join(parameter_type(*p) for p in function.params)})"
    group = roles.get("group")
    lines = [
        f'extern "C" COMMLENS_EXPORT ncclResult_t {function.name}({params}) {{',
        f'  static RealFunction<{pointer_type}> real{{"{function.name}"}};',
        "  const auto nccl_function = real.get();",
        "  if (nccl_function == nullptr) [[unlikely]] {",
        f'    return report_missing("{function.name}");',
        "  }",
        "  // NCCL implementing one public function with another (ncclBcast calls ncclBroadcast): the",
        "  // outer call is the program's and is recorded; the inner one passes through.",
        "  if (inside_nccl_call()) {",
        f"    return nccl_function({arguments});",
        "  }",
        "  const NcclCallScope scope;",
    ]
    # The nesting is kept whether or not the profiler runs, so that it is right when it starts.
    if group == "start":
        lines.append("  enter_group();")
    lines += [
        "  Profiler* profiler = profiler_for_nccl();",
        "  const FunctionId first = first_function_id();",
        "  if (profiler == nullptr || first == 0) [[unlikely]] {",
        "    note_call_before_profiler();",
    ]
    if "free_comm" in roles:
        lines.append(f"    forget_early_communicator({roles['free_comm']});")
    lines.append(f"    const ncclResult_t result = nccl_function({arguments});")
    if group == "end":
        lines.append("    leave_group();")
    if "newcomm" in roles or "newcomms" in roles:
        # Registered when MPI_Init starts the profiler (nccl_without_mpi.hpp).
        if "uid" in roles:
            remember = f"remember_early_from_unique_id(*{roles['newcomm']}, {roles['uid']}, {index})"
        elif "parent" in roles:
            remember = f"remember_early_split(*{roles['newcomm']}, {roles['parent']}, {roles['color']}, {index})"
        else:
            remember = f"remember_early_all({roles['newcomms']}, {roles['ndev']}, {index})"
        lines += ["    if (result == kNcclSuccess || result == kNcclInProgress) {", f"      {remember};", "    }"]
    lines.append("    return result;")
    lines += ["  }", f"  pmpi::CallRecording call(*profiler, static_cast<FunctionId>(first + {index}));",
              "  NcclCallDetails details;", "  details.group_depth = group_depth();"]
    if "comm" in roles:
        lines.append(f"  call.set_communicator(find_communicator({roles['comm']}));")
    if "root" in roles:
        lines += [f"  call.set_root({roles['root']});", f"  details.root = {roles['root']};"]
    elif tag_or_root(function) == "TagOrRoot::Tag":
        lines.append("  call.set_tag(details.group_depth);")
    if "peer" in roles:
        lines += [f"  call.set_peer({roles['peer']});", f"  details.peer = {roles['peer']};"]
    for role, member in (("datatype", "datatype"), ("op", "op")):
        if role in roles:
            lines.append(f"  details.{member} = {roles[role]};")
    if "stream" in roles:
        lines.append(f"  details.stream = stream_handle({roles['stream']});")
    if "stream" in roles:
        lines.append(f"  begin_stream_work(call, {roles['stream']});")
    lines += [f"  const ncclResult_t result = nccl_function({arguments});", "  call.finish();"]
    if group == "end":
        lines.append("  leave_group();")
    if "send" in roles:
        lines.append(f"  call.add_sent({byte_term(function, roles['send'])});")
    if "recv" in roles:
        lines.append(f"  call.add_received({byte_term(function, roles['recv'])});")
    if "newcomm" in roles or "newcomms" in roles:
        # A nonblocking communicator (ncclConfig_t.blocking = 0) exists once the call returns
        # ncclInProgress.
        lines.append("  if (result == kNcclSuccess || result == kNcclInProgress) {")
        if "uid" in roles:
            lines.append(f"    register_from_unique_id(call, *{roles['newcomm']}, {roles['uid']});")
        elif "parent" in roles:
            lines.append(f"    register_split(call, *{roles['newcomm']}, {roles['parent']}, {roles['color']});")
        else:
            lines.append(f"    register_all(call, {roles['newcomms']}, {roles['ndev']});")
        lines.append("  }")
    if "free_comm" in roles:
        lines.append(f"  forget_communicator({roles['free_comm']});")
    lines += ["  call.record();", "  store_call_details(call, details);"]
    if "stream" in roles:
        lines.append(f"  end_stream_work(call, {roles['stream']});")
    if group == "end":
        lines.append("  if (group_depth() == 0) {")
        lines.append("    end_stream_group();")
        lines.append("  }")
    lines += ["  return result;", "}"]
    return "\n".join(lines)


HEADER = "// Generated by generate_nccl_wrappers.py from nccl_functions.spec. Do not edit.\n"


def wrappers_source(functions):
    body = "\n\n".join(wrapper(function, index) for index, function in enumerate(functions))
    return (HEADER + '#include "nccl_call_details.hpp"\n#include "nccl_recording.hpp"\n#include "nccl_stream_work.hpp"\n#include "nccl_without_mpi.hpp"\n\n#include <cstdint>\n\n'
            "#define COMMLENS_EXPORT __attribute__((visibility(\"default\")))\n\n"
            "using namespace commlens;\nusing namespace commlens::nccl;\n\n" + body + "\n")


def function_table_source(functions):
    rows = "\n".join(f'      {{"{f.stored_name}", "{f.family}", {tag_or_root(f)}}},' for f in functions)
    return (HEADER + '#include "nccl_recording.hpp"\n\nnamespace commlens::nccl {\n\n'
            "std::span<const FunctionDescription> nccl_function_descriptions() {\n"
            "  static constexpr FunctionDescription kFunctions[] = {\n" + rows + "\n  };\n  return kFunctions;\n}\n\n"
            "} // namespace commlens::nccl\n")


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    functions = parse_spec(Path(argv[1]).read_text())
    output = Path(argv[2])
    output.mkdir(parents=True, exist_ok=True)
    for name, text in (("nccl_wrappers.cpp", wrappers_source(functions)),
                       ("nccl_function_table.cpp", function_table_source(functions))):
        path = output / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
