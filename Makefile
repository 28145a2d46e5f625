# pool.h - build and test targets. Everything builds from the repository
# root with the system C compiler; nothing is installed.
CC      ?= cc
CFLAGS  ?= -O2 -g
BUILD   ?= build

.PHONY: all test test-tsan test-asan test-valgrind check soak model examples bench portability clean

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

check: test test-tsan test-asan test-valgrind

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

clean:
	rm -rf $(BUILD)
