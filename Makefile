# numcheck: the two set-up commands and the developer targets. Each target installs what is
# missing (scripts/setup.sh, Debian packages only) before it builds.
#   make run    install, build, and run the main job (scripts/main-job.sh)
#   make test   install, build, and pass every test
.PHONY: run test setup setup-test build build-all asan-build asan-test fuzz-build fuzz-smoke bench bench-compare format format-check tidy clean

JOBS ?= $(shell nproc)
# Extra CMake settings for the configure steps, e.g. CMAKE_FLAGS=-DNUMCHECK_WERROR=ON (what CI uses).
CMAKE_FLAGS ?=

setup:
	@bash scripts/setup.sh

setup-test:
	@bash scripts/setup.sh --with-test-tools

# `make build` (and so `make run`) builds only the executable the main job runs; `make test`,
# `make bench` and `make build-all` build every target (tests, benchmarks, fuzz replay drivers).
build: setup
	cmake --preset release $(CMAKE_FLAGS)
	cmake --build --preset release -j $(JOBS) --target numcheck

build-all: setup
	cmake --preset release $(CMAKE_FLAGS)
	cmake --build --preset release -j $(JOBS)

run: build
	bash scripts/main-job.sh

test: setup-test
	cmake --preset release $(CMAKE_FLAGS)
	cmake --build --preset release -j $(JOBS)
	ctest --preset release

# The sanitizer build (clang, ASan+UBSan) builds the tests and the libFuzzer targets together: the
# tests run under the sanitizers, and `make fuzz-smoke` runs the fuzz targets from the same build.
asan-build: setup-test
	cmake --preset asan $(CMAKE_FLAGS)
	cmake --build --preset asan -j $(JOBS)

asan-test: asan-build
	ctest --preset asan

fuzz-build: setup-test
	cmake --preset asan $(CMAKE_FLAGS)
	cmake --build --preset asan -j $(JOBS) --target fuzz_all

# A short libFuzzer run of every target (FUZZ_SECONDS each), seeded from fuzz/corpus/<target>.
FUZZ_SECONDS ?= 60
fuzz-smoke: fuzz-build
	bash scripts/fuzz-smoke.sh $(FUZZ_SECONDS) build/asan

bench: build-all
	bash scripts/run-benchmarks.sh

# The command-level comparison (issue 16): numcheck's commands vs a Python grader, numpy, wrk and a
# hello world, side by side, medians (bench/compare.sh; minutes; never part of the tests or CI).
bench-compare: setup-test build-all
	bash bench/compare.sh

# clang-tidy with the committed .clang-tidy over src/ and fuzz/, with the compile commands of
# TIDY_BUILD (default build/release, configured here if it is not; CI uses the built build/asan,
# whose clang precompiled headers clang-tidy can read).
TIDY_BUILD ?= build/release
tidy: setup-test
	@test -f $(TIDY_BUILD)/compile_commands.json || cmake --preset release $(CMAKE_FLAGS)
	JOBS=$(JOBS) bash scripts/clang-tidy.sh $(TIDY_BUILD)

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

format-check: format
	git diff --exit-code -- '*.cpp' '*.hpp'

clean:
	rm -rf build
