"""Host staging of device buffers in the generated wrappers (collectors/runtime_dispatch/device_staging.hpp):
the code a wrapper runs before and after its PMPI call. Part of generate_wrappers.py."""
import re

from runtime_entries import runtime_entry


# Families whose device buffers are staged through pinned host memory while the runtime is on and
# the MPI library is not CUDA-aware; and those refused, with the kind of refusal.
STAGED_FAMILIES = ("p2p", "collective", "neighborhood")
REFUSED_FAMILIES = {"rma": "OneSided", "io": "FileIo", "partitioned": "Partitioned"}
WHOLE_ALLOCATION = "commlens::pmpi::kWholeAllocation"


def staging_span(function, expression):
    """C++ for the bytes a buffer spans: the byte expression where it has only scalar factors and
    the call has no displacements (dense types checked at run time), else the whole allocation."""
    if expression is None or any("displs" in name for name in function.param_names):
        return WHOLE_ALLOCATION
    declarations = dict(zip(function.param_names, function.param_decls))
    parts, types = [], []
    for factor in expression.partition("@")[0].split("*"):
        declaration = declarations.get(factor, "")
        if factor.isdigit():
            parts.append(f"std::uint64_t{{{factor}}}")
        elif factor == "n" and "comm" in function.roles:
            parts.append("staging.group_size()")
        elif re.fullmatch(r"(const\s+)?MPI_Datatype\s+\w+", declaration):
            types.append(factor)
            parts.append(f"commlens::pmpi::DeviceStaging::size_of({factor})")
        elif re.fullmatch(r"(const\s+)?(int|MPI_Count|MPI_Aint)\s+\w+", declaration):
            parts.append(f"commlens::pmpi::count_of({factor})")
        else:
            return WHOLE_ALLOCATION
    dense = " && ".join(f"commlens::pmpi::DeviceStaging::dense({t})" for t in types) or "true"
    return f"({dense} ? {' * '.join(parts)} : {WHOLE_ALLOCATION})"


def staging_code(function, buffers):
    """Lines before the call (also before the fast exit), the arguments the call passes instead,
    and the statement that finishes the staging after it."""
    roles = function.roles
    declarations = dict(zip(function.param_names, function.param_decls))
    if function.family in REFUSED_FAMILIES and buffers:
        refusal = f"commlens::pmpi::Refusal::{REFUSED_FAMILIES[function.family]}"
        handle = next((f"refuse_on_{kind}({roles[role]}, {refusal})" for role, kind in
                       (("win", "window"), ("file", "file"), ("comm", "communicator")) if role in roles), None)
        if handle is None:
            return [], {}, []
        return ([f"if (commlens::pmpi::staging_on() && commlens::pmpi::any_on_device({{{', '.join(buffers)}}})) [[unlikely]] {{",
                 f"  return commlens::pmpi::{handle};", "}"], {}, [])
    if function.family not in STAGED_FAMILIES and "stage" not in function.flags:
        return [], {}, []
    starts = [("start", "1"), ("startall", None)]
    for role, count in starts:
        if role in roles:
            requests, count = (roles[role], count) if count else reversed(roles[role].split(","))
            return ([f"if (commlens::pmpi::staged_requests::any()) [[unlikely]] {{",
                     f"  commlens::pmpi::staged_requests::starting({requests}, {count});", "}"], {}, [])
    if not buffers:
        return [], {}, []
    kind = "Persistent" if "persistent" in function.flags else "Nonblocking" if "request" in roles else "Blocking"
    condition = "commlens::pmpi::staging_on()"
    if "runtime" in function.flags:
        condition += f" && commlens::contract::collector_hooks().runtime.{runtime_entry(function)} == nullptr"
    inputs = [b for b in buffers if "const" in declarations[b]]
    lines = [f"commlens::pmpi::DeviceStaging staging({roles.get('comm', 'MPI_COMM_NULL')}, "
             f"commlens::pmpi::DeviceStaging::Kind::{kind});",
             f"const bool stage_here = {condition};"]
    replaced = {}
    for buffer in buffers:
        output = buffer not in inputs
        expression = roles.get("recv" if output else "send") or roles.get("send" if output else "recv")
        span = staging_span(function, expression)
        if not output:
            fill = "false"
        elif inputs and function.family != "p2p":
            # A collective writes its whole output, unless in place: then the output holds the input.
            fill = f"{inputs[0]} == MPI_IN_PLACE"
            if "inplace_span" in roles:  # MPI_Reduce_scatter_block: the whole input, not one block
                span = f"{fill} ? {staging_span(function, roles['inplace_span'])} : {span}"
        else:
            # MPI_Bcast's buffer is read at the root; a receive may get a shorter message (or be
            # cancelled), and what MPI does not write must come back unchanged.
            fill = "true"
        lines.append(f"auto* const staged_{buffer} = stage_here ? staging.stage({buffer}, "
                     f"{span}, {str(output).lower()}, {fill}) : {buffer};")
        replaced[buffer] = f"staged_{buffer}"
    lines.append("if (staging.failed()) [[unlikely]] {")
    lines.append("  return staging.refuse_call();")
    lines.append("}")
    finish = f"rc = staging.finish(rc, {roles['request']});" if "request" in roles else "rc = staging.finish(rc);"
    return lines, replaced, [finish]
