# Thin wrapper over CMake: every target installs what it needs, configures and builds first.
BUILD ?= build
JOBS ?= $(shell nproc)
DEMO_OUTPUT ?= $(BUILD)/demo-output
CMAKE_ARGS ?=
# Warnings are errors here (CI runs `make test`); WERROR=OFF builds through them.
WERROR ?= ON

# Open MPI refuses to start as root unless told; CI and containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1

.PHONY: deps configure build demo test bench format clean

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOMMLENS_WERROR=$(WERROR) $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Profiles the bundled halo-exchange example on 4 ranks and prints the report (builds only what
# the demo needs).
demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target commlens commlens_cli halo_demo
	$(BUILD)/cli/commlens run --output $(DEMO_OUTPUT) -- \
	  mpirun -np 4 --oversubscribe $(BUILD)/examples/halo_demo 200
	$(BUILD)/cli/commlens report $(DEMO_OUTPUT)/commlens.sqlite
	@echo "database: $(DEMO_OUTPUT)/commlens.sqlite"

test: build
	cd $(BUILD) && ctest --output-on-failure -j 2

bench: build
	bash bench/run-all.sh $(BUILD)

# Every C, C++ and CUDA source the repository tracks, whichever folder it is in.
format:
	git ls-files -z '*.cpp' '*.hpp' '*.h' '*.c' '*.cu' '*.cuh' | xargs -0 clang-format -i

clean:
	rm -rf $(BUILD)
