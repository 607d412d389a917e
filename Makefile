# qfuse quick start: `make demo` and `make test` work on a fresh Debian machine.
# Both install what is missing (scripts/install-deps.sh), configure and build.

BUILD_DIR ?= build
BUILD_TYPE ?= Release
LLVM_PREFIX ?= /usr/lib/llvm-22
CMAKE ?= cmake
# Compiles go through ccache where it is installed, so that rebuilding
# unchanged sources (a second clone, CI) is a cache hit; without it the
# compilers run directly.
CCACHE ?= $(shell command -v ccache 2>/dev/null)
LAUNCHER = $(if $(CCACHE),-DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE) \
  -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE))

.PHONY: all deps configure build test sanitize-configure test-sanitize test-fuzz \
        test-tsan demo docs clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	$(CMAKE) -G Ninja -S . -B $(BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LLVM_PREFIX)/bin/lit $(LAUNCHER)

configure: $(BUILD_DIR)/build.ninja

build: deps configure
	$(CMAKE) --build $(BUILD_DIR)

# Every suite; fails if any test fails.
test: build
	$(CMAKE) --build $(BUILD_DIR) --target check-qfuse

# The sanitize build: the format and runtime libraries, no MLIR, no GPU,
# compiled by clang under AddressSanitizer and UndefinedBehaviorSanitizer
# with libFuzzer's coverage instrumentation, so that test-sanitize and
# test-fuzz share one build (CI runs both).
SANITIZE_DIR ?= build-sanitize
CLANG_VERSION ?= 14
# Seconds of fuzzing per libFuzzer target, and for IR (docs/fuzzing.md).
FUZZ_SECONDS ?= 5
FUZZ_IR_SECONDS ?= 20

sanitize-configure: deps
	@command -v clang++-$(CLANG_VERSION) >/dev/null || { \
	  echo "make: the sanitize build needs clang++-$(CLANG_VERSION) and libFuzzer:" \
	       "install the Debian packages clang-$(CLANG_VERSION) and" \
	       "libclang-rt-$(CLANG_VERSION)-dev (scripts/install-deps.sh)" >&2; exit 1; }
	@if [ -f $(SANITIZE_DIR)/CMakeCache.txt ] && ! grep -q \
	    '^CMAKE_CXX_COMPILER:.*clang++-$(CLANG_VERSION)$$' $(SANITIZE_DIR)/CMakeCache.txt; then \
	  echo "make: $(SANITIZE_DIR) was configured with another compiler: starting it afresh"; \
	  rm -rf $(SANITIZE_DIR); fi
	$(CMAKE) -G Ninja -S . -B $(SANITIZE_DIR) -DQFUSE_ENABLE_COMPILER=OFF \
	  -DQFUSE_TOKENIZER_ORACLE=OFF -DQFUSE_SANITIZE=address,undefined \
	  -DQFUSE_FUZZ=ON -DQFUSE_FUZZ_SECONDS=$(FUZZ_SECONDS) \
	  -DQFUSE_UNIT_TEST_SHARDS=ON \
	  -DCMAKE_C_COMPILER=clang-$(CLANG_VERSION) \
	  -DCMAKE_CXX_COMPILER=clang++-$(CLANG_VERSION) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo $(LAUNCHER)

# The unit tests in the sanitize build, each binary as a few gtest shards
# (unittests/CMakeLists.txt); any report fails a test.
test-sanitize: sanitize-configure
	$(CMAKE) --build $(SANITIZE_DIR)
	ctest --test-dir $(SANITIZE_DIR) -L unit --output-on-failure -j$(shell nproc)

# The C API and the host readers from many threads under ThreadSanitizer
# (docs/threads.md; no MLIR, no GPU): the thread tests only.
TSAN_DIR ?= build-tsan
test-tsan: deps
	$(CMAKE) -G Ninja -S . -B $(TSAN_DIR) -DQFUSE_ENABLE_COMPILER=OFF \
	  -DQFUSE_TOKENIZER_ORACLE=OFF -DQFUSE_SANITIZE=thread \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo $(LAUNCHER)
	$(CMAKE) --build $(TSAN_DIR) --target qfuse-c-api-tests qfuse-runtime-tests
	ctest --test-dir $(TSAN_DIR) --output-on-failure \
	  -R '^(qfuse-c-api-tests|Threads\.|AtomicFile\.Threads|BackgroundPacker\.|StreamingSafetensorsWriter\.|QuantizedCheckpoint\.QfusePackedStream)'

# The fuzzers (fuzz/, docs/fuzzing.md): every corpus and crashes/ input
# replayed, then FUZZ_SECONDS of fuzzing per target, in the sanitize build;
# then IR through this build's qfuse-opt and qfuse-compile.
test-fuzz: sanitize-configure configure
	$(CMAKE) --build $(SANITIZE_DIR) --target qfuse-fuzzers
	ctest --test-dir $(SANITIZE_DIR) -L fuzz -j2 --output-on-failure
	$(CMAKE) --build $(BUILD_DIR) --target qfuse-opt qfuse-compile
	python3 fuzz/ir/mutate-ir.py --tools-dir $(BUILD_DIR)/bin \
	  --seconds $(FUZZ_IR_SECONDS) --findings $(BUILD_DIR)/fuzz/ir/findings

demo: build
	@scripts/demo.sh $(BUILD_DIR)

# Regenerate the dialect and pass reference committed under docs/generated.
docs: build
	$(CMAKE) --build $(BUILD_DIR) --target mlir-doc
	cp $(BUILD_DIR)/docs/Dialects/*.md docs/generated/

clean:
	rm -rf $(BUILD_DIR)
