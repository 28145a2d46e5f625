# pool.h - build and test targets. Everything builds from the repository
# root with the system C compiler; only `make install` writes outside it.
CC      ?= cc
CFLAGS  ?= -O2 -g
BUILD   ?= build

.PHONY: all test test-debug format-check format test-tsan test-asan test-valgrind check soak model examples readme trace-svg bench \
	bench-stats bench-smoke bench-peers bench-results bench-graph bench-scaling bench-mpi bench-cpp portability clean \
	install uninstall

all: examples

# The test suite: every tests/test_*.c, each with a watchdog.
test:
	CC="$(CC)" CFLAGS="$(CFLAGS) -Werror" BUILD=$(BUILD)/tests sh tests/run.sh

# The same tests under ThreadSanitizer and under ASan+UBSan (no suppressions).
test-tsan:
	CC="$(CC)" SANITIZE=thread BUILD=$(BUILD)/tests-tsan sh tests/run.sh

test-asan:
	CC="$(CC)" SANITIZE=address BUILD=$(BUILD)/tests-asan sh tests/run.sh

# valgrind memcheck on every test but test_wakeup, which measures idle CPU (installs valgrind
# with apt-get if it is missing).
test-valgrind:
	sh tests/need.sh valgrind valgrind
	CC="$(CC)" SANITIZE=valgrind BUILD=$(BUILD)/tests-valgrind sh tests/run.sh

# The same tests with the implementation's invariant checks compiled in
# (POOL_DEBUG: POOL__INVARIANT in pool.h). Of the shell tests only test_waiting_slots, which
# builds C tests with the flags it is given: the others check the C++ interface, the install,
# the docs and the examples, which POOL_DEBUG does not change, and run in `make test`.
test-debug:
	CC="$(CC)" CFLAGS="$(CFLAGS) -Werror -DPOOL_DEBUG" BUILD=$(BUILD)/tests-debug \
		TEST_SCRIPTS=test_waiting_slots sh tests/run.sh

# Every C and C++ file in the style of .clang-format (Debian's clang-format,
# installed if missing); `make format` rewrites them.
format-check:
	sh tests/format.sh check

format:
	sh tests/format.sh apply

check: test test-debug test-tsan test-asan test-valgrind readme format-check

# tests/test_soak.c at full size: 10^8 joins and 10^7 outside submits, at 1
# and at 16 threads, with POOL_CHAOS widening every race window (make test
# runs a reduced version).
soak:
	@mkdir -p $(BUILD)
	$(CC) -O2 -g -Wall -Wextra -pthread -o $(BUILD)/test_soak tests/test_soak.c
	POOL_SOAK=full $(BUILD)/test_soak

# The sleep protocol model-checked by spin, every state (3 workers, 2
# posters; about 2 minutes and 4 GB). CI runs the bitstate variant.
model:
	CC="$(CC)" sh tests/model/check.sh exhaustive

# Each example builds exactly as README says (cc -O2 -pthread file.c) and runs.
EXAMPLES := $(wildcard examples/*.c)
examples:
	@mkdir -p $(BUILD)/examples
	@set -e; for src in $(EXAMPLES); do \
		exe=$(BUILD)/examples/$$(basename $$src .c); \
		echo "$(CC) -O2 -pthread $$src -o $$exe"; \
		$(CC) -O2 -Wall -Wextra -Werror -pthread $$src -o $$exe; \
		$$exe; \
	done

# Every C program in README.md, built as a reader would and run.
readme:
	CC="$(CC)" BUILD=$(BUILD)/readme sh tests/readme.sh

# examples/trace.c (built with POOL_TRACE) writes the trace of a real run;
# examples/tools/trace2svg.c checks it and draws it: build/trace.json (open
# it in ui.perfetto.dev or chrome://tracing) and build/trace.svg.
trace-svg:
	@mkdir -p $(BUILD)
	$(CC) -O2 -Wall -Wextra -Werror -o $(BUILD)/trace2svg examples/tools/trace2svg.c
	$(CC) -O2 -Wall -Wextra -Werror -pthread -o $(BUILD)/trace examples/trace.c
	$(BUILD)/trace $(BUILD)/trace.json
	$(BUILD)/trace2svg --check $(BUILD)/trace.json
	$(BUILD)/trace2svg $(BUILD)/trace.json $(BUILD)/trace.svg

# The portability matrix (issue 7): C99-C2x and C++11-C++20 with gcc and
# clang, the stb options, exported symbols, and the test suite on glibc,
# musl, arm64 (qemu-aarch64) and Windows (mingw-w64 under wine). Installs
# what it needs from Debian's packages first; a tool that cannot be
# installed fails the combinations that need it.
portability:
	-sh tests/portability/install.sh
	BUILD=$(BUILD)/portability sh tests/portability/run.sh

bench:
	CC="$(CC)" BUILD=$(BUILD)/bench sh bench/run.sh

# What the statistics counters cost: bench/fib.c with and without POOL_NO_STATS.
bench-stats:
	CC="$(CC)" BUILD=$(BUILD)/bench sh bench/stats_cost.sh

# pool.h's C++ interface: fib and a tree sum with pool_cpp::join against the natural serial code,
# and pool_cpp::sort against oneTBB's parallel_sort and __gnu_parallel::sort (THREADS="1 2" unless
# given; installs the peers' packages first).
bench-cpp:
	sh bench/peers/install.sh
	BUILD=$(BUILD)/bench sh bench/cpp.sh $(or $(THREADS),1 2)

# examples/mpi/nqueens_mpi.c as 1 rank x 2 threads and 2 ranks x 1 thread against the serial
# count, on this machine (N=15 REPS=7 unless given; installs Debian's Open MPI if it can).
bench-mpi:
	BUILD=$(BUILD)/bench N="$(N)" REPS="$(REPS)" sh bench/mpi.sh

# Every benchmark program built (warnings are errors) and run once at tiny sizes; the peers of
# bench-peers too when their packages are installed (PEERS=1: always, PEERS=0: never).
bench-smoke:
	CC="$(CC)" BUILD=$(BUILD) PEERS="$(PEERS)" sh bench/smoke.sh

# pool.h against GNU OpenMP, LLVM OpenMP, oneTBB and Rayon on issue 5's eight workloads, in one
# run (THREADS=2 and REPS=5 unless given): installs the Debian packages it needs with apt-get,
# then writes bench/results/latest.csv and the chart. `make bench-results` then turns that run
# into bench/RESULTS.md.
bench-peers:
	sh bench/peers/install.sh
	CC="$(CC)" BUILD=$(BUILD) THREADS="$(THREADS)" REPS="$(REPS)" sh bench/peers/run.sh

bench-results:
	sh bench/peers/results_md.sh

# Task graphs: pool.h's against oneTBB's flow graph on a 1000-node layered DAG (bench/peers/dag.sh;
# THREADS=2 unless given).
bench-graph:
	sh bench/peers/install.sh
	CC="$(CC)" BUILD=$(BUILD) THREADS="$(THREADS)" sh bench/peers/dag.sh

# Scaling from 1 to 16 threads (fib, the unbalanced tree, the sum) of pool.h, oneTBB and Rayon:
# builds a bundle with every library the programs load (build/scaling), then runs it here. On a
# machine with more cores and no compilers, carry build/scaling there and run
# `sh bench/peers/scaling.sh run` (see the script).
bench-scaling:
	sh bench/peers/install.sh
	sh bench/peers/scaling.sh build
	sh bench/peers/scaling.sh run

clean:
	rm -rf $(BUILD)

# Installation: pool.h, a pkg-config file (pool.pc: `pkg-config --cflags --libs pool`) and a CMake
# package (`find_package(pool)`, the interface target pool::pool, which links Threads::Threads).
# PREFIX (default /usr/local) is where they go, DESTDIR a staging root in front of it. The header
# is all there is to build: the pkg-config file and the CMake package carry the include directory
# and the threads flags. tests/test_install.sh installs into a temporary prefix and builds a
# program against it with cc -I, pkg-config and CMake.
PREFIX  ?= /usr/local
POOL_VERSION := $(shell sed -n 's/^\#define POOL_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$$/\2/p' pool.h | paste -sd.)
INSTALLED_FILES := include/pool.h share/pkgconfig/pool.pc share/cmake/pool/poolConfig.cmake \
	share/cmake/pool/poolConfigVersion.cmake

install:
	@test -n "$(POOL_VERSION)" || { echo "install: no version in pool.h"; exit 1; }
	install -d "$(DESTDIR)$(PREFIX)/include" "$(DESTDIR)$(PREFIX)/share/pkgconfig" \
		"$(DESTDIR)$(PREFIX)/share/cmake/pool"
	install -m 644 pool.h "$(DESTDIR)$(PREFIX)/include/pool.h"
	printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' '' 'Name: pool' \
		'Description: a work-stealing thread pool for C and C++ in one header' \
		'Version: $(POOL_VERSION)' 'Cflags: -I$${includedir} -pthread' 'Libs: -pthread' \
		>"$(DESTDIR)$(PREFIX)/share/pkgconfig/pool.pc"
	printf '%s\n' '# pool.h: find_package(pool) gives the interface target pool::pool.' \
		'include(CMakeFindDependencyMacro)' 'find_dependency(Threads)' \
		'get_filename_component(_pool_prefix "$${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)' \
		'if(NOT TARGET pool::pool)' '  add_library(pool::pool INTERFACE IMPORTED)' \
		'  set_target_properties(pool::pool PROPERTIES' \
		'    INTERFACE_INCLUDE_DIRECTORIES "$${_pool_prefix}/include"' \
		'    INTERFACE_LINK_LIBRARIES Threads::Threads)' 'endif()' 'unset(_pool_prefix)' \
		>"$(DESTDIR)$(PREFIX)/share/cmake/pool/poolConfig.cmake"
	printf '%s\n' 'set(PACKAGE_VERSION "$(POOL_VERSION)")' \
		'# Compatible: the same major version, at least the version asked for (0.x: the same minor).' \
		'string(REPLACE "." ";" _pool_have "$${PACKAGE_VERSION}")' \
		'list(GET _pool_have 0 _pool_major)' 'list(GET _pool_have 1 _pool_minor)' \
		'if(NOT PACKAGE_FIND_VERSION)' '  set(PACKAGE_VERSION_COMPATIBLE TRUE)' \
		'elseif(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION OR' \
		'   NOT PACKAGE_FIND_VERSION_MAJOR EQUAL _pool_major OR' \
		'   (_pool_major EQUAL 0 AND NOT PACKAGE_FIND_VERSION_MINOR EQUAL _pool_minor))' \
		'  set(PACKAGE_VERSION_COMPATIBLE FALSE)' 'else()' '  set(PACKAGE_VERSION_COMPATIBLE TRUE)' \
		'  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)' \
		'    set(PACKAGE_VERSION_EXACT TRUE)' '  endif()' 'endif()' \
		>"$(DESTDIR)$(PREFIX)/share/cmake/pool/poolConfigVersion.cmake"

uninstall:
	for f in $(INSTALLED_FILES); do rm -f "$(DESTDIR)$(PREFIX)/$$f"; done
	-rmdir "$(DESTDIR)$(PREFIX)/share/cmake/pool" 2>/dev/null
