"""Fails, listing them, on functions an MPI header declares that libcommlens.so would not wrap.

usage: api_coverage_test.py SPEC (PREPROCESSED_MPI_H | --compiler MPICC)...

Every PMPI_ function the header declares, whatever it returns, must be wrapped (the generator
finds it in the spec) or match an `unwrapped` pattern of the spec, whose reasons
collectors/pmpi/README.md gives. So an MPI function added to a header later is not missed in
silence. --compiler preprocesses `#include <mpi.h>` with that MPI's compiler wrapper
(mpicc.mpich checks the MPICH header beside the Open MPI one the build uses).
"""
import fnmatch
import importlib.util
import re
import subprocess
import sys
import tempfile
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "generate_wrappers", Path(__file__).resolve().parents[2] / "collectors/pmpi/generate_wrappers.py")
generator = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generator)


def preprocessed(compiler):
    with tempfile.TemporaryDirectory() as directory:
        probe = Path(directory) / "probe.c"
        probe.write_text("#include <mpi.h>\n")
        return subprocess.run([compiler, "-E", str(probe)], check=True, capture_output=True, text=True).stdout


def unwrapped_functions(spec_text, header):
    declared = {"MPI_" + name for name in re.findall(r"\bPMPI_(\w+)\s*\(", header)}
    wrapped = {f.name for f in generator.expand(generator.parse_spec(spec_text), generator.declared_prototypes(header))}
    patterns = generator.unwrapped_patterns(spec_text)
    return sorted(n for n in declared - wrapped if not any(fnmatch.fnmatchcase(n, p) for p in patterns)), len(declared)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    spec_text = Path(argv[1]).read_text()
    failed = False
    arguments = iter(argv[2:])
    for argument in arguments:
        name = next(arguments) if argument == "--compiler" else argument
        header = preprocessed(name) if argument == "--compiler" else Path(name).read_text()
        missing, declared = unwrapped_functions(spec_text, header)
        print(f"{name}: {declared} MPI functions declared, {len(missing)} neither wrapped nor listed as unwrapped")
        for function in missing:
            print(f"  {function}")
        failed = failed or bool(missing)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv)
