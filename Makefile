# lockstep — two commands do all the set-up on a fresh Debian 12 machine:
#   make demo   installs the dependencies, builds, and runs the main job on the bundled model
#   make test   installs the dependencies, builds, and runs every test
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)

.PHONY: all deps build demo test bench clean

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	@bash scripts/fetch-model.sh
	@bash scripts/demo.sh $(BUILD_DIR)

test: build
	@bash scripts/fetch-model.sh
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 900

clean:
	rm -rf $(BUILD_DIR)
