# ImageKit — every command a user or CI needs. `make bench` and `make test`
# install missing Debian packages themselves (through `deps`).

SHELL := /bin/bash
SWIFT ?= swift
CORPUS ?= ../shared/corpus
DEB_PACKAGES := libcurl4-openssl-dev libjpeg62-turbo-dev libturbojpeg0-dev libpng-dev \
                libwebp-dev libgif-dev liblz4-dev liblcms2-dev zlib1g-dev libdeflate-dev libimagequant-dev libavif-dev pkg-config \
                nginx openssl python3 redis-server libheif-dev libde265-dev libjxl-dev libvips-tools
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SKIP_BENCH := --skip ImageKitBenchmarks

# ASan + UBSan instrument the C target; UBSan must halt or it only prints. C is compiled at -O1
# (after the debug build's -O0, so it wins), as the sanitizers' documentation advises and the
# fuzzers do (the C-heavy suites' tests took about a tenth less time; Swift stays -Onone).
ASAN_FLAGS := --sanitize=address -Xcc -fsanitize=undefined -Xcc -fno-sanitize-recover=undefined \
              -Xswiftc -Xclang-linker -Xswiftc -fsanitize=undefined -Xcc -O1
# TSan cannot see inside Synchronization.Mutex's slow path: use pthread locks there.
TSAN_FLAGS := --sanitize=thread -Xswiftc -DIMAGEKIT_PTHREAD_LOCK -Xcc -O1

.PHONY: deps deps-list build test docs bench bench-peers bench-service example conformance sanitize sanitize-address \
        sanitize-thread soak fuzz coverage clean

# $(call install-missing,PACKAGES): apt-get installs those of PACKAGES not installed yet
# (one `dpkg-query` each; nothing else happens when all are there).
define install-missing
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get -o DPkg::Lock::Timeout=600 install -y $$missing; \
	fi
endef

## deps: install the Debian packages that are missing (instant when none are)
deps:
	$(call install-missing,$(DEB_PACKAGES))

## deps-list: print the Debian packages ImageKit needs
deps-list:
	@echo $(DEB_PACKAGES)

## build: debug build of the library and the imagekit CLI
build: deps
	$(SWIFT) build

## test: the C core's include layering (scripts/check_c_layers.sh), then unit tests, release
## build (benchmarks skipped)
test: deps
	scripts/check_c_layers.sh
	$(SWIFT) test -c release $(SKIP_BENCH)

## docs: the ImageKit library's DocC documentation, into .build-docs/plugins/Swift-DocC/outputs/
## ImageKit.doccarchive. swift-docc-plugin is a dependency only while IMAGEKIT_DOCS=1 (see
## Package.swift). Fails on any DocC warning (an unresolved link, a parameter without a
## description, …).
docs: deps
	@mkdir -p .build-docs
	IMAGEKIT_DOCS=1 $(SWIFT) package --scratch-path .build-docs generate-documentation --target ImageKit 2>&1 | \
	  tee .build-docs/docs.log; test $${PIPESTATUS[0]} -eq 0
	@if grep -E '^(warning|error): ' .build-docs/docs.log; then \
	  echo "make docs: fix the DocC warnings above"; exit 1; \
	fi

## bench: release XCTest measure benchmarks on built-in inputs (INPUT=dir: your files), then the
## report, which is printed after a failure too. FILTER=Thumbnail runs the benchmark classes whose
## name matches (a regular expression: DecodeBenchmarks, Thumbnail|Memory, ...). A row whose
## samples spread over 10 % is reported as noisy; the run fails only when a benchmark throws,
## gets a wrong result or misses its input or peer. A full run (no FILTER, no INPUT) also writes
## Benchmarks/README.md: how to read the figures, then the run's.
BENCH_DEB_PACKAGES := libvips-dev libvips-tools
bench: deps
	$(call install-missing,$(BENCH_DEB_PACKAGES))
	rm -f bench-results/results.jsonl
	@# `swift test list` builds exactly what `make test` (`swift test -c release`) builds, with the
	@# same flags, so after `make test` this step only checks that nothing changed.
	@start=$$SECONDS; $(SWIFT) test list -c release > /dev/null || exit 1; \
	  echo "make bench: build step took $$((SECONDS - start)) s"
	@status=0; \
	IMAGEKIT_BENCH_OUT=$(CURDIR)/bench-results IMAGEKIT_BENCH_INPUT_DIR=$(abspath $(INPUT)) \
	  $(SWIFT) test -c release --skip-build --filter 'ImageKitBenchmarks\.[A-Za-z]*($(or $(FILTER),.))' 2>&1 | \
	  grep --line-buffered -E '^\[bench\]|error|failed|Test Case .* (passed|failed|skipped)|Executed [0-9]+ test'; \
	  status=$${PIPESTATUS[0]}; \
	if [ -s bench-results/results.jsonl ]; then python3 scripts/bench_report.py bench-results/results.jsonl \
	  $(if $(FILTER)$(INPUT),,--readme Benchmarks/README.md) || status=1; \
	else echo "make bench: no benchmark recorded a figure"; status=1; fi; \
	if [ $$status -ne 0 ]; then echo "make bench: a benchmark failed (above); the report shows the rows that ran"; fi; \
	exit $$status

# The built-in inputs the peer benchmarks read (made by `make bench`).
PEER_INPUTS := jpeg-12mp-baseline.jpg jpeg-24mp-baseline.jpg jpeg-12mp-p3.jpg jpeg-12mp-progressive.jpg \
               png-8mp-rgb.png png-8mp-rgba.png webp-12mp-lossy.webp webp-23.6mp-lossy.webp \
               webp-16.8mp-lossless.webp avif-12mp-q60.avif heic-12mp-rgb.heic jxl-12mp-lossy.jxl

## bench-peers: downloads against AsyncHTTPClient and thumbnails against libvips, from their
## own package in Benchmarks/Peers (nothing else depends on them; the first build is long),
## added to the report of the last `make bench` (run first when its inputs are missing)
bench-peers: deps
	@dpkg-query -W -f='$${Status}' libvips-dev 2>/dev/null | grep -q 'ok installed' || \
	  { $(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get -o DPkg::Lock::Timeout=600 install -y libvips-dev; }
	@for f in $(PEER_INPUTS); do [ -f .build/bench-inputs/$$f ] || { $(MAKE) bench; break; }; done
	cd Benchmarks/Peers && IMAGEKIT_BENCH_OUT=$(CURDIR)/bench-results $(SWIFT) test -c release
	python3 scripts/bench_report.py bench-results/results.jsonl

## bench-service: load benchmark of ImageKit's HTTP thumbnail server (Examples/ThumbnailServer)
## against a Hummingbird + AsyncHTTPClient + libvips peer (Benchmarks/Peers), one at a time on
## generated JPEGs from nginx: COLD, WARM (wrk) and MIXED workloads, added to the report of the
## last `make bench`. SERVICE_SERVERS=imagekit,peer picks; WARM_SECONDS, MIXED_SECONDS (20) and
## MIXED_RATE (50 req/s) shorten or change a run; ROUNDS (3) repeats it, servers alternating,
## and reports medians. Fails when a server does not build.
SERVICE_DEB_PACKAGES := libvips-dev wrk libjpeg-turbo-progs
bench-service: deps
	$(call install-missing,$(SERVICE_DEB_PACKAGES))
	SWIFT=$(SWIFT) python3 scripts/bench_service.py

## example: build and test Examples/ThumbnailServer (its own package: Hummingbird 2 + ImageKit)
example: deps
	cd Examples/ThumbnailServer && $(SWIFT) test

## conformance: decode every file of the corpus manifest and compare pixel hashes
conformance: deps
	@# `swift test list` builds exactly what `make test` builds, with its flags (a build of the
	@# product alone compiles without testable imports, and the next `make test` rebuilds it all).
	$(SWIFT) test list -c release > /dev/null
	python3 scripts/conformance.py --imagekit "$$($(SWIFT) build -c release --show-bin-path)/imagekit" --corpus $(CORPUS)

## sanitize: the unit tests under ASan + UBSan (C target), then under TSan: sanitize-address and
## sanitize-thread below (each a build of its own; `make -j2 sanitize` runs both at once)
sanitize: sanitize-address sanitize-thread

## sanitize-address: every unit test under ASan + UBSan but the soak (`make soak` runs it so)
sanitize-address: deps
	ASAN_OPTIONS=malloc_context_size=10 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp:print_suppressions=0 \
	  $(SWIFT) test --scratch-path .build-asan $(ASAN_FLAGS) $(SKIP_BENCH) --skip ManagerSoakTests

## sanitize-thread: the unit tests under TSan, but for the suites in TSAN_ONE_THREAD, which decode,
## scale and compare pixels on the calling thread alone (no helper thread, manager or server:
## nothing for TSan to see, and two thirds of its time); sanitize-address runs them
TSAN_ONE_THREAD := ThumbnailTests JPEGDCTests IncrementalDecodeTests ColorKernelTests JXLDecodeTests \
                   HEIFHeapFillTests PNGFastPathTests EncodeSizeLimitTests
sanitize-thread: deps
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  $(SWIFT) test --scratch-path .build-tsan $(TSAN_FLAGS) $(SKIP_BENCH) \
	  --skip 'ImageKitTests\.($(subst $(eval) ,|,$(strip $(TSAN_ONE_THREAD))))/'

## soak: SOAK_LOADS (20,000) loads through the manager, with random sizes, options,
## cancellations and bad responses from local servers: in a release build (RSS must stay
## flat), then under ASan (LeakSanitizer at exit)
SOAK_FILTER := grep --line-buffered -vE "^Test (Suite|Case) .*(started|passed)|^\[[0-9]+/[0-9]+\]|ld.gold: warning"
soak: deps
	IMAGEKIT_SOAK_LOADS=$(or $(SOAK_LOADS),20000) \
	  $(SWIFT) test -c release --filter ManagerSoakTests 2>&1 | $(SOAK_FILTER); test $${PIPESTATUS[0]} -eq 0
	ASAN_OPTIONS=malloc_context_size=10:quarantine_size_mb=32 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp:print_suppressions=0 \
	IMAGEKIT_SOAK_LOADS=$(or $(SOAK_LOADS),20000) \
	  $(SWIFT) test --scratch-path .build-asan $(ASAN_FLAGS) --filter ManagerSoakTests 2>&1 | \
	  $(SOAK_FILTER); test $${PIPESTATUS[0]} -eq 0

## fuzz: every libFuzzer harness in Fuzz/ for FUZZ_SECONDS each (default 60; 0 = no limit),
## or until FUZZ_RUNS executions; FUZZ_HARNESSES picks some (e.g. "jpeg png")
fuzz: deps
	FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60) FUZZ_RUNS=$(FUZZ_RUNS) FUZZ_HARNESSES="$(FUZZ_HARNESSES)" \
		CORPUS=$(CORPUS) scripts/fuzz.sh

## coverage: line coverage of the C core and the Swift library by the unit tests
coverage: deps
	SWIFT=$(SWIFT) scripts/coverage.sh

clean:
	rm -rf .build .build-* bench-results
