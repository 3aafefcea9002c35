# lockstep — two commands do all the set-up on a fresh Debian 12 machine:
#   make demo   installs the dependencies, builds, and runs the main job on the bundled model
#   make test   installs the dependencies, builds, and runs every test (the C++ suite and,
#               through it, the Python package's pytest suite, python/tests)
# More (docs/fuzz.md):
#   make test-python-install    `pip install .` into a fresh virtual environment, then the
#                               pytest suite against the installed package; CI runs it
#   make test-integrations      lockstep inside Hugging Face transformers, vLLM and SGLang, each
#                               from PyPI into its own virtual environment (.venv-vllm,
#                               .venv-sglang; several GB); docs/integrations.md
#   make compare                lockstep beside XGrammar, llguidance, outlines-core and llama.cpp
#                               on MaskBench files (.venv-compare from PyPI; docs/compare.md);
#                               COMPARE_ARGS passes options to bench/compare/run.py
#   make test-sanitize          one clang build with AddressSanitizer and UBSan (build-asan/):
#                               the test suite, then every libFuzzer target for
#                               FUZZ_SMOKE_SECONDS (default 20) each; CI runs it
#   make fuzz FUZZ_SECONDS=N    builds the libFuzzer targets with clang (build-fuzz/) and runs
#                               each for N seconds; fails when one finds a crash
#   make build NATIVE=ON        compiles for this machine's CPU (-march=native: AVX2 / AVX-512
#                               in the forward pass); the default build runs on any x86-64
#                               (docs/forward.md; bench/forward.sh measures it)
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
NATIVE ?= OFF
JOBS ?= $(shell nproc)

FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_TARGETS ?=
FUZZ_BUILD_DIR ?= build-fuzz
ASAN_BUILD_DIR ?= build-asan

.PHONY: all deps build demo test bench clean fuzz test-sanitize test-python-install test-integrations compare

all: build

deps:
	@bash scripts/install-deps.sh

# The Python extension module is built with the rest, against the project's virtual
# environment (.venv, made by scripts/python-env.sh from python/requirements-test.txt).
build: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DLOCKSTEP_NATIVE=$(NATIVE) \
	  -DLOCKSTEP_BUILD_PYTHON=ON -DPython_EXECUTABLE=$$(bash scripts/python-env.sh)
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	@bash scripts/fetch-model.sh
	@bash scripts/demo.sh $(BUILD_DIR)

test: build
	@bash scripts/fetch-model.sh
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 900

INTEGRATION_ENV = PYTHONPATH=$(abspath $(BUILD_DIR))/python LOCKSTEP_CLI=$(abspath $(BUILD_DIR))/lockstep
test-integrations: build
	@bash scripts/fetch-model.sh
	$(INTEGRATION_ENV) $$(bash scripts/python-env.sh --for vllm) -m pytest -q -p no:cacheprovider \
	  python/tests_integrations/test_hf.py python/tests_integrations/test_vllm.py
	$(INTEGRATION_ENV) $$(bash scripts/python-env.sh --for sglang) -m pytest -q -p no:cacheprovider \
	  python/tests_integrations/test_sglang.py

COMPARE_ARGS ?=
compare: deps
	bash bench/compare/run.sh $(COMPARE_ARGS)

test-python-install: deps
	@bash scripts/fetch-model.sh
	bash scripts/test-python-install.sh

test-sanitize:
	@bash scripts/install-deps.sh --fuzz
	cmake -S . -B $(ASAN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_CXX_COMPILER=clang++ \
	  -DLOCKSTEP_FUZZ=ON -DLOCKSTEP_BUILD_BENCH=OFF
	cmake --build $(ASAN_BUILD_DIR) -j $(JOBS)
	@bash scripts/fetch-model.sh
	# AddressSanitizer's redzones make stack frames several times larger: recursion that the
	# engine limits keep shallow enough for 8 MB in a normal build (rules inlined 4,096 deep)
	# gets a 64 MB stack here.
	cd $(ASAN_BUILD_DIR) && { ulimit -s 65536 2>/dev/null || true; } && \
	  ctest --output-on-failure -j $(JOBS) --timeout 1800
	bash fuzz/run.sh $(ASAN_BUILD_DIR) $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

fuzz:
	@bash scripts/install-deps.sh --fuzz
	cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCMAKE_CXX_COMPILER=clang++ \
	  -DLOCKSTEP_FUZZ=ON -DLOCKSTEP_BUILD_TESTS=OFF -DLOCKSTEP_BUILD_BENCH=OFF
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target fuzz_targets
	bash fuzz/run.sh $(FUZZ_BUILD_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_BUILD_DIR) $(ASAN_BUILD_DIR) build-wheel
