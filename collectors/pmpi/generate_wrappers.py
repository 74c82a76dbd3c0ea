#!/usr/bin/env python3
"""Generates the PMPI wrappers of libcommlens.so from mpi_functions.spec.

usage: generate_wrappers.py SPEC PREPROCESSED_MPI_H OUTPUT_DIR

The spec gives each function's parameter names and roles; the preprocessed mpi.h (the output of
`cc -E` over `#include <mpi.h>`) tells which PMPI_ functions this MPI library declares and with which
parameter types, so a wrapper always matches the header it is compiled against (MPICH and Open MPI
differ in const-ness and count types). Output: function_ids.hpp, function_table.cpp, one
wrappers_<family>.cpp per family, and the GPU collective runtime's entries of the `runtime` functions
(runtime_entries.hpp for the wrappers, runtime_entry_points.hpp for the runtime, which implements
them). All bookkeeping is in call_recording.hpp; the code emitted here only says which argument plays
which role.
"""
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

# Its parts, also when loaded by the tests: the runtime's part of the wrappers is in runtime_dispatch/.
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "runtime_dispatch"))
from runtime_entries import (runtime_collective_names_header, runtime_entries_header, runtime_entry,  # noqa: E402
                             runtime_entry_points_header)
from wrapper_staging import staging_code  # noqa: E402

COMPLETION_RULES = {"wait", "test", "waitall", "testall", "waitany", "testany", "waitsome", "testsome"}
# Roles that change the collector's own state: the wrapper must run them even while MPI_Pcontrol
# has collection switched off, or later calls would meet unknown handles. A completion too: it
# finishes what the runtime or the host staging posted under the request.
STATEFUL_ROLES = {"newcomm", "joined", "free_comm", "name", "newwin", "free_win", "newfile", "close_file",
                  "free_request", "complete"}


class SpecError(Exception):
    pass


@dataclass
class Function:
    name: str
    family: str
    param_names: list
    roles: dict = field(default_factory=dict)
    flags: set = field(default_factory=set)
    param_decls: list = field(default_factory=list)  # from the header: full declarations
    deprecated: bool = False  # the header marks PMPI_<name> deprecated (MPI-1 attribute functions)

    def param_type(self, name):
        return self.param_decls[self.param_names.index(name)]


def split_top_level(text):
    """Splits a parameter list at commas outside brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return [] if parts == ["void"] else parts


DECLARATOR = re.compile(r"^(?P<type>.*?)(?P<name>[A-Za-z_]\w*)(?P<suffix>(\s*\[[^\]]*\])*)\s*$")
TYPE_ONLY_WORDS = {"", "const", "volatile", "unsigned", "signed", "struct"}


def parameter_name(declaration):
    match = DECLARATOR.match(declaration.strip())
    if match is None or match["type"].strip() in TYPE_ONLY_WORDS:
        return None
    return match["name"]


def rename_parameter(declaration, new_name):
    """Keeps the header's type and array suffix, gives the parameter the spec's name."""
    declaration = declaration.strip()
    match = DECLARATOR.match(declaration)
    if match is None or match["type"].strip() in TYPE_ONLY_WORDS:
        return f"{declaration} {new_name}"  # the header declared it without a name
    return f"{match['type'].rstrip()} {new_name}{match['suffix']}".replace("  ", " ")


def unwrapped_patterns(text):
    """The spec's `unwrapped` patterns: declared functions deliberately left without a wrapper."""
    return [pattern for line in text.splitlines() if line.startswith("unwrapped ") for pattern in line.split()[1:]]


def parse_spec(text):
    functions, family = [], None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "unwrapped ")):
            continue
        if line.startswith("family "):
            family = line.split()[1]
            continue
        match = re.match(r"^(MPI_\w+)\((.*?)\)\s*(.*)$", line)
        if match is None or family is None:
            raise SpecError(f"spec line {number}: expected 'family NAME' or 'MPI_Name(params) roles'")
        name, params, annotations = match.groups()
        names = [parameter_name(p) or "..." for p in split_top_level(params)]
        function = Function(name, family, names)
        for token in annotations.split():
            key, _, value = token.partition("=")
            if value:
                function.roles[key] = value
            else:
                function.flags.add(key)
        for key, value in function.roles.items():
            arguments = re.findall(r"[A-Za-z_]\w*", value) if key not in ("send", "recv", "send_inplace", "recv_inplace", "inplace_span", "complete") else []
            for argument in arguments:
                if argument not in names:
                    raise SpecError(f"spec line {number}: {name}: role {key} names unknown parameter {argument}")
        functions.append(function)
    return functions


def declared_prototypes(preprocessed_header):
    """PMPI_ name -> list of parameter declarations, for every PMPI_ function the header declares."""
    prototypes = {}
    for match in re.finditer(r"\bint\s+PMPI_(\w+)\s*\(", preprocessed_header):
        depth, end = 1, match.end()
        while depth and end < len(preprocessed_header):
            depth += {"(": 1, ")": -1}.get(preprocessed_header[end], 0)
            end += 1
        params = " ".join(preprocessed_header[match.end() : end - 1].split())
        prototypes.setdefault("MPI_" + match.group(1), split_top_level(params))
    return prototypes


def deprecated_functions(preprocessed_header):
    """MPI_ names of the PMPI_ functions the header declares with a deprecated attribute."""
    return {"MPI_" + match.group(1)
            for match in re.finditer(r"\bint\s+PMPI_(\w+)\s*\([^;]*?\b(?:__)?deprecated(?:__)?\b[^;]*;", preprocessed_header)}


def with_header_types(function, prototypes, name=None):
    """The function as declared by this MPI library, or None when the header lacks it."""
    name = name or function.name
    declarations = prototypes.get(name)
    if declarations is None:
        return None
    if len(declarations) != len(function.param_names):
        raise SpecError(f"{name}: the spec has {len(function.param_names)} parameters, mpi.h {len(declarations)}")
    variant = Function(name, function.family, function.param_names, function.roles, function.flags)
    variant.param_decls = [rename_parameter(d, n) for d, n in zip(declarations, function.param_names)]
    return variant


# ---- byte expressions ---------------------------------------------------------------------------

LENGTHS = {"n": "call.group_size()", "in": "call.in_degree()", "out": "call.out_degree()"}


def render_bytes(function, expression):
    """A spec byte expression as C++ evaluating to std::uint64_t."""
    scalars, counts_array, types_array, length = [], None, None, None
    for factor in expression.split("*"):
        indexed = re.fullmatch(r"(\w+)\[(\w+)\]", factor)
        if factor.isdigit():
            scalars.append(f"std::uint64_t{{{factor}}}")
        elif factor in LENGTHS:
            scalars.append(LENGTHS[factor])
        elif indexed and indexed[2] == "me":
            scalars.append(f"commlens::pmpi::count_of({indexed[1]}[call.my_rank()])")
        elif indexed:
            is_type = "MPI_Datatype" in function.param_type(indexed[1])
            if is_type:
                types_array = indexed[1]
            else:
                counts_array = indexed[1]
            length = LENGTHS[indexed[2]]
        elif "MPI_Datatype" in function.param_type(factor):
            scalars.append(f"call.type_size({factor})")
        else:
            scalars.append(f"commlens::pmpi::count_of({factor})")
    if counts_array and types_array:
        scalars.insert(0, f"call.weighted_sum({counts_array}, {types_array}, {length})")
    elif counts_array:
        scalars.insert(0, f"call.sum({counts_array}, {length})")
    return " * ".join(scalars)


def byte_statements(function):
    lines = []
    for side, adder in (("send", "add_sent"), ("recv", "add_received")):
        if side not in function.roles:
            continue
        expression, _, qualifier = function.roles[side].partition("@")
        value = render_bytes(function, expression)
        inplace = function.roles.get(f"{side}_inplace")
        if inplace:
            buffer = function.roles["inplace"]
            value = f"{buffer} == MPI_IN_PLACE ? {render_bytes(function, inplace)} : {value}"
        if "root" not in function.roles:
            lines.append(f"call.{adder}({value});")
            continue
        side_name = {"root": "Root", "nonroot": "NonRoot", "": "Both"}[qualifier]
        lines.append(f"if (call.applies(commlens::pmpi::Side::{side_name})) {{ call.{adder}({value}); }}")
    return lines


# ---- wrappers -----------------------------------------------------------------------------------


def completion_code(function):
    rule, arguments = re.fullmatch(r"(\w+)\((.*)\)", function.roles["complete"]).groups()
    if rule not in COMPLETION_RULES:
        raise SpecError(f"{function.name}: unknown completion rule {rule}")
    args = arguments.split(",")
    many = rule.endswith(("all", "some"))
    count, requests = (args[0], args[1]) if rule not in ("wait", "test") else ("1", args[0])
    status = args[-1]
    pre = [f"commlens::pmpi::RequestSnapshot snapshot({requests}, {count});"]
    if many:
        pre.append(f"commlens::pmpi::StatusArray statuses({status}, {count});")
        call_args = {status: "statuses.data()"}
    else:
        pre.append(f"MPI_Status local_status;")
        pre.append(f"MPI_Status* const status_out = {status} == MPI_STATUS_IGNORE ? &local_status : {status};")
        call_args = {status: "status_out"}
    statuses = "statuses.data()" if many else "status_out"
    rest = ", ".join(args[2:-1] if rule not in ("wait", "test") else args[1:-1])
    post = [f"commlens::pmpi::complete_{rule}(call, snapshot, {rest + ', ' if rest else ''}{statuses});"]
    completed, indices = RUNTIME_FINISH[rule]
    finish = (f"rc = commlens::pmpi::runtime::finish_completed(rc, snapshot, {completed.format(*args)}, "
              f"{indices.format(*args)}, {statuses}, {str(many).lower()});")
    return pre, call_args, post, finish


# Per completion rule: how many requests the call completed and where their snapshot indices are
# (format fields: the rule's arguments), for the runtime's finish_completed.
RUNTIME_FINISH = {
    "wait": ("1", "nullptr"),
    "test": ("*{1} ? 1 : 0", "nullptr"),
    "waitall": ("{0}", "nullptr"),
    "testall": ("*{2} ? {0} : 0", "nullptr"),
    "waitany": ("*{2} == MPI_UNDEFINED ? 0 : 1", "{2}"),
    "testany": ("*{3} && *{2} != MPI_UNDEFINED ? 1 : 0", "{2}"),
    "waitsome": ("*{2} == MPI_UNDEFINED ? 0 : *{2}", "{3}"),
    "testsome": ("*{2} == MPI_UNDEFINED ? 0 : *{2}", "{3}"),
}


# Roles whose argument goes straight to a CallRecording setter, in the order the setters must run:
# the send peer before the source (set_source keeps a send peer), the tag and root after.
SETTERS_BEFORE_SOURCE = (("comm", "set_communicator"), ("win", "set_window"), ("file", "set_file"),
                         ("peer", "set_peer"))
SETTERS_AFTER_SOURCE = (("tag", "set_tag"), ("root", "set_root"))


def setter_calls(roles, setters):
    return [f"call.{setter}({roles[role]});" for role, setter in setters if role in roles]


def location_expression(buffers):
    """The buffer the call really uses: the first, or the second where the first is MPI_IN_PLACE."""
    if len(buffers) > 1:
        return f"{buffers[0]} == MPI_IN_PLACE ? static_cast<const void*>({buffers[1]}) : {buffers[0]}"
    return buffers[0]


def success_block(lines):
    return ["if (rc == MPI_SUCCESS) {"] + [f"  {line}" for line in lines] + ["}"] if lines else []


def wrapper(function):
    roles, names = function.roles, function.param_names
    pre, post, call_args = [], [], {}
    stateful = bool(STATEFUL_ROLES & roles.keys())

    if "status" in roles and "complete" not in roles:
        status = roles["status"]
        pre += ["MPI_Status local_status;",
                f"MPI_Status* const status_out = {status} == MPI_STATUS_IGNORE ? &local_status : {status};"]
        if "source" in roles and roles["source"] != status:
            pre.append(f"status_out->MPI_SOURCE = {roles['source']};")  # iprobe with flag 0 leaves it as posted
        call_args[status] = "status_out"
    finish = []
    if "complete" in roles:
        more_pre, call_args, post, finish_statement = completion_code(function)
        pre += more_pre
        finish = [finish_statement]
    if "free_request" in roles:
        pre.append(f"const std::uint64_t freed_request = commlens::contract::handle_key(*{roles['free_request']});")
        post.append("commlens::pmpi::forget_request(freed_request);")
    for role, forget in (("free_comm", "forget_communicator"), ("free_win", "forget_window"), ("close_file", "forget_file")):
        if role in roles:
            pre.append(f"commlens::pmpi::{forget}(call, *{roles[role]});")
    if "message" in roles:
        pre.append(f"call.set_communicator(commlens::pmpi::take_message({roles['message']}));")

    # What the program passed is recorded whatever the call returns (a failed call is still a call
    # of those bytes on that communicator); what the call produced (statuses, new handles,
    # requests) only when it succeeded.
    arguments = setter_calls(roles, SETTERS_BEFORE_SOURCE)
    if "source" in roles:
        if roles["source"] == roles.get("status"):
            arguments.append("if (rc == MPI_SUCCESS) { call.set_source(status_out->MPI_SOURCE, status_out); }")
        else:
            status = "rc == MPI_SUCCESS ? status_out : nullptr" if "status" in roles else "nullptr"
            arguments.append(f"call.set_source({roles['source']}, {status});")
    arguments += setter_calls(roles, SETTERS_AFTER_SOURCE)
    arguments += byte_statements(function)
    buffers = [n for n, d in zip(names, function.param_decls) if re.search(r"void\s*\*\s*\w+$", d)]
    if buffers:
        arguments.append(f"call.set_location({location_expression(buffers)});")
    if "newcomm" in roles:
        defer = "request" in roles  # MPI_Comm_idup: the new communicator is not usable yet
        parent = roles.get("parent", "MPI_COMM_NULL")
        post.append(f"commlens::pmpi::register_communicator(call, *{roles['newcomm']}, {parent}, {str(defer).lower()});")
    if "joined" in roles:
        this_side = roles.get("comm", "MPI_COMM_SELF")  # MPI_Comm_join: one process on each side
        post.append(f"commlens::pmpi::register_joined_communicator(call.function(), *{roles['joined']}, {this_side});")
    if "name" in roles:
        post.append(f"commlens::pmpi::name_communicator({roles['comm']}, {roles['name']});")
    for role, register in (("newwin", "register_window"), ("newfile", "register_file"),
                           ("newmessage", "remember_message")):
        if role in roles:
            post.append(f"commlens::pmpi::{register}(*{roles[role]}, {roles['comm']});")
    if "request" in roles:
        post.append(f"call.post_request(*{roles['request']}, {str('persistent' in function.flags).lower()});")
    if "start" in roles:
        post.append(f"call.start_requests({roles['start']}, 1);")
    if "startall" in roles:
        count, array = roles["startall"].split(",")
        post.append(f"call.start_requests({array}, {count});")

    staging_lines, staged, staging_finish = staging_code(function, buffers)
    if staged:
        arguments.append("if (staging.staged()) { call.set_implementation(commlens::pmpi::kHostStagedImplementation); }")
    params = ", ".join(function.param_decls)
    plain_args = ", ".join(staged.get(n, n) for n in names)
    pmpi_args = ", ".join(call_args.get(n, staged.get(n, n)) for n in names)
    fast_exit = "profiler == nullptr" if stateful else "profiler == nullptr || !profiler->collecting()"
    # `runtime` functions go through runtime_dispatch.hpp, which hands them to the GPU collective
    # runtime's entry (runtime_entries.hpp) when it installed one and otherwise calls PMPI.
    if "runtime" in function.flags:
        dispatch = (f"commlens::pmpi::runtime::run<&commlens::contract::RuntimeCallEntries::{runtime_entry(function)}, "
                    f"P{function.name}>")
        unrecorded = f"{dispatch}(static_cast<commlens::pmpi::CallRecording*>(nullptr), {plain_args})"
        recorded = f"{dispatch}(&call, {pmpi_args})"
    elif "free_request" in roles:  # the runtime and the staging may keep the request (runtime_dispatch.hpp)
        unrecorded = recorded = f"commlens::pmpi::runtime::free_request({roles['free_request']})"
    elif "complete" in roles:  # the runtime's nonblocking collectives progress first (runtime_dispatch.hpp)
        rule = roles["complete"].partition("(")[0]
        unrecorded = f"commlens::pmpi::runtime::completion::{rule}({plain_args})"
        recorded = f"commlens::pmpi::runtime::completion::{rule}({pmpi_args})"
    else:
        unrecorded, recorded = f"P{function.name}({plain_args})", f"P{function.name}({pmpi_args})"
    finish += staging_finish
    rc_declaration = "int rc" if finish else "const int rc"
    if staging_finish:
        unrecorded_lines = [f"int rc = {unrecorded};", *staging_finish, "return rc;"]
    else:
        unrecorded_lines = [f"return {unrecorded};"]
    body = "\n".join(f"  {line}" for line in pre + [f"{rc_declaration} = {recorded};"] + finish + ["call.finish();"]
                     + arguments + success_block(post) + ["call.record();", "return rc;"])
    prologue = "".join(f"  {line}\n" for line in staging_lines)
    fast = "".join(f"    {line}\n" for line in unrecorded_lines)
    return f"""extern "C" COMMLENS_EXPORT int {function.name}({params}) {{
{prologue}  commlens::Profiler* const profiler = commlens::Profiler::active();
  if ({fast_exit}) [[unlikely]] {{
{fast}  }}
  commlens::pmpi::CallRecording call(*profiler, commlens::pmpi::fn::{function.name});
{body}
}}
"""


def expand(functions, prototypes, deprecated=frozenset()):
    """Every function this MPI library declares, large-count variants included, in spec order.
    deprecated: the names deprecated_functions() found in the header."""
    result = []
    for function in functions:
        if "handwritten" in function.flags:
            function.param_decls = function.param_names
            result.append(function)
            continue
        for name in [function.name] + ([function.name + "_c"] if "large_count" in function.flags else []):
            variant = with_header_types(function, prototypes, name)
            if variant is not None and name != function.name:
                variant.flags = function.flags - {"runtime"}  # the runtime takes int counts only
            if variant is not None:
                variant.deprecated = name in deprecated
                result.append(variant)
    return result


HEADER = "// Generated by generate_wrappers.py from mpi_functions.spec. Do not edit.\n"


def tag_or_root_meaning(function):
    """What the record's tag/root slot holds for this function (MPI_Pcontrol stores its level)."""
    if "root" in function.roles:
        return "TagOrRoot::Root"
    if "tag" in function.roles or function.name == "MPI_Pcontrol":
        return "TagOrRoot::Tag"
    return "TagOrRoot::None"


def silenced_if_deprecated(function, code):
    """A wrapper of a deprecated function still forwards to it: that one warning is expected there."""
    if not function.deprecated:
        return code
    return ("#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n"
            f"{code}#pragma GCC diagnostic pop\n")


def write_outputs(functions, families_in_spec, output_dir):
    output_dir.mkdir(parents=True, exist_ok=True)
    ids = "\n".join(f"inline constexpr FunctionId {f.name} = {i};" for i, f in enumerate(functions))
    (output_dir / "function_ids.hpp").write_text(
        f"{HEADER}#pragma once\n#include \"commlens/profiler/event_record.hpp\"\n\n"
        f"namespace commlens::pmpi::fn {{\n\n{ids}\ninline constexpr FunctionId kCount = {len(functions)};\n\n}}\n")
    rows = "\n".join(f'      {{"{f.name}", "{f.family}", {tag_or_root_meaning(f)}}},' for f in functions)
    (output_dir / "function_table.cpp").write_text(
        f"{HEADER}#include \"function_table.hpp\"\n\nnamespace commlens::pmpi {{\n\n"
        f"std::vector<FunctionDescription> function_descriptions() {{\n  return {{\n{rows}\n  }};\n}}\n\n}}\n")
    runtime_functions = [f for f in functions if "runtime" in f.flags]
    (output_dir / "runtime_entries.hpp").write_text(runtime_entries_header(runtime_functions, HEADER))
    (output_dir / "runtime_entry_points.hpp").write_text(runtime_entry_points_header(runtime_functions, HEADER))
    (output_dir / "runtime_collective_names.hpp").write_text(
        runtime_collective_names_header(runtime_functions, HEADER))
    families = {family: [] for family in families_in_spec}
    for function in functions:
        if "handwritten" not in function.flags:
            families.setdefault(function.family, []).append(silenced_if_deprecated(function, wrapper(function)))
    for family, wrappers in families.items():
        (output_dir / f"wrappers_{family}.cpp").write_text(
            f"{HEADER}#include \"call_recording.hpp\"\n#include \"device_staging.hpp\"\n#include \"function_ids.hpp\"\n#include \"runtime_dispatch.hpp\"\n\n" + "\n".join(wrappers))
    return list(families)


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    spec_path, header_path, output_dir = Path(argv[1]), Path(argv[2]), Path(argv[3])
    try:
        spec = parse_spec(spec_path.read_text())
        header = header_path.read_text()
        functions = expand(spec, declared_prototypes(header), deprecated_functions(header))
        families = write_outputs(functions, dict.fromkeys(f.family for f in spec), output_dir)
    except (SpecError, OSError) as error:
        sys.exit(f"generate_wrappers.py: {error}")
    print(f"generate_wrappers.py: {len(functions)} functions, families: {' '.join(families)}")


if __name__ == "__main__":
    main(sys.argv)
