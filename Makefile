# qfuse quick start: `make demo` and `make test` work on a fresh Debian machine.
# Both install what is missing (scripts/install-deps.sh), configure and build.

BUILD_DIR ?= build
BUILD_TYPE ?= Release
LLVM_PREFIX ?= /usr/lib/llvm-22
CMAKE ?= cmake

.PHONY: all deps configure build test test-sanitize test-tsan demo docs clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	$(CMAKE) -G Ninja -S . -B $(BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DMLIR_DIR=$(LLVM_PREFIX)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LLVM_PREFIX)/bin/lit

configure: $(BUILD_DIR)/build.ninja

build: deps configure
	$(CMAKE) --build $(BUILD_DIR)

# Every suite; fails if any test fails.
test: build
	$(CMAKE) --build $(BUILD_DIR) --target check-qfuse

# The format and runtime libraries and their unit tests under AddressSanitizer
# and UndefinedBehaviorSanitizer (no MLIR, no GPU); any report fails a test.
SANITIZE_DIR ?= build-sanitize
test-sanitize: deps
	$(CMAKE) -G Ninja -S . -B $(SANITIZE_DIR) -DQFUSE_ENABLE_COMPILER=OFF \
	  -DQFUSE_TOKENIZER_ORACLE=OFF -DQFUSE_SANITIZE=address,undefined \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo
	$(CMAKE) --build $(SANITIZE_DIR)
	ctest --test-dir $(SANITIZE_DIR) -L unit --output-on-failure

# The C API and the host readers from many threads under ThreadSanitizer
# (docs/threads.md; no MLIR, no GPU): the thread tests only.
TSAN_DIR ?= build-tsan
test-tsan: deps
	$(CMAKE) -G Ninja -S . -B $(TSAN_DIR) -DQFUSE_ENABLE_COMPILER=OFF \
	  -DQFUSE_TOKENIZER_ORACLE=OFF -DQFUSE_SANITIZE=thread \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo
	$(CMAKE) --build $(TSAN_DIR) --target qfuse-c-api-tests qfuse-runtime-tests
	ctest --test-dir $(TSAN_DIR) --output-on-failure \
	  -R '^(qfuse-c-api-tests|Threads\.|AtomicFile\.Threads|BackgroundPacker\.)'

demo: build
	@scripts/demo.sh $(BUILD_DIR)

# Regenerate the dialect and pass reference committed under docs/generated.
docs: build
	$(CMAKE) --build $(BUILD_DIR) --target mlir-doc
	cp $(BUILD_DIR)/docs/Dialects/*.md docs/generated/

clean:
	rm -rf $(BUILD_DIR)
