# ATA - one plain Makefile.
#   make            libata.a, libata.so and ata-bench in build/ (CPU backend,
#                   plus CUDA when nvcc is found)
#   make run        the main job: PCG benchmark on the embedded default problem
#   make test       build and run the cmocka suite
#   make asan|tsan  the suite under AddressSanitizer+UBSan / ThreadSanitizer
#   make cuda|hip   the GPU backends (see README)
#   make petsc      the PETSc plugin and the MPI benchmark (solvers/petsc/petsc.mk)
#   make bench      the benchmark suite into bench/out/
#   make stress     PCG beside one busy process per core (bench/stress.sh)
#   make vs-petsc   ATA vs PETSc CG/BiCGStab/GMRES, 1 and 2 ranks (bench/vs-petsc.sh; not in CI)
#   make vs-petsc-deep  the same on circuit:1000000 and circuit:2000000 (deep DAGs; not in CI)
#   make install PREFIX=DIR
#   make V=1 ...    print every command in full (default: one short line per
#                    file, e.g. "  CC      build/src/agg.o")
BUILD    ?= build
PREFIX   ?= /usr/local
CC       ?= cc
SANITIZE ?=
# Loops start on a 64-byte boundary: with GCC's default a short hot loop can
# straddle a fetch block, and whether it does moves with unrelated code. On
# the Intel development VM (2026-11-28) the one-worker upper solve of
# lap3d:100,levelorder with the reciprocal diagonal took 4.5 ms against 2.5
# with the divide, the same instructions but for divsd/mulsd; aligned, both
# 2.5 (bench/RESULTS.md). The sanitizer builds set their own OPT.
OPT      ?= -O2 -falign-loops=64
CUDA     ?= auto

CPPFLAGS += -Iinclude -Isrc -Imatrices -Isolvers -I/usr/include/suitesparse -D_GNU_SOURCE
# No FMA contraction: the reference and the GPU kernels round the same way
# (bitwise-equal pull and ILU0), whatever the compiler's default.
CFLAGS   += -std=c11 $(OPT) -g -Wall -Wextra -fPIC -pthread -ffp-contract=off
LDLIBS   += -lcholmod -lrbio -lsuitesparseconfig -larchive -lmetis -lpthread -lm
# Packaging: libata.so exports only what ata.h marks ATA_API (ata_*), has a
# SONAME (libata.so.$(SOMAJOR)) and never links a GPU runtime: the GPU
# backends are modules (libata_cuda.so, libata_hip.so) loaded with dlopen.
CFLAGS   += -fvisibility=hidden
LDLIBS   += -ldl
# 1: ata_pcg_options and ata_solve_args grew (method, restart, transpose) and
# are returned by value from their *_defaults(): a binary built against 0
# must not load this library.
# 2: ata_factor_options and ata_pcg_options grew again (precision), both
# returned by value from their *_defaults(): a binary built against 1 would
# pass a struct shorter than the library reads.
SOMAJOR  := 2
SOVER    := 2.0.0
LIBDIR   ?= $(PREFIX)/lib
ifneq ($(SANITIZE),)
CFLAGS   += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=$(SANITIZE)
endif

# What make prints: one short line per file by default, kernel style
# ("  CC      build/src/agg.o"); `make V=1` prints every command in full.
# A recipe line starts with $(call quiet,TAG,FILE): in quiet mode that is
# "@printf ...;" before the command (the command's own errors and warnings
# still show), with V=1 it is nothing; `make -s` prints neither.
ifneq ($(findstring s,$(filter-out --%,$(firstword -$(MAKEFLAGS)))),)
  quiet = @
else ifeq ($(filter-out 0,$(V)),)
  quiet = @printf '  %-7s %s\n' '$(1)' '$(2)';
else
  quiet =
endif

# src/gpu/ is the GPU backends' host side: built into their modules only (kernels/gpu.mk).
LIB_SRCS  := $(wildcard src/*.c src/cpu/*.c matrices/*.c solvers/*.c)
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
BENCH_SRCS:= $(wildcard bench/*.c)
BENCH_OBJS:= $(BENCH_SRCS:%.c=$(BUILD)/%.o)
TEST_SRCS := $(filter-out tests/test_util.c,$(wildcard tests/test_*.c))
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
TEST_UTIL := $(BUILD)/tests/test_util.o

# GPU backends plug in through gpu.mk (objects + flags), when present.
-include kernels/gpu.mk
# The PETSc plugin and MPI benchmark (make petsc), outside the wildcards above.
-include solvers/petsc/petsc.mk

.PHONY: all deps run test check asan tsan bench install clean
all: $(BUILD)/libata.a $(BUILD)/libata.so $(BUILD)/ata-bench $(GPU_MODULE)

deps:
	@bash .ci/deps.sh

$(BUILD)/%.o: %.c | deps
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libata.a: $(LIB_OBJS)
	@rm -f $@
	$(call quiet,AR,$@)ar rcs $@ $^

# The module search's last-resort directory (src/backend_load.c).
$(BUILD)/src/backend_load.o: CPPFLAGS += -DATA_LIBDIR='"$(LIBDIR)"'

$(BUILD)/libata.so.$(SOVER): $(LIB_OBJS)
	$(call quiet,LD,$@)$(CC) -shared $(LDFLAGS) -Wl,-soname,libata.so.$(SOMAJOR) -Wl,--no-undefined -o $@ $^ $(LDLIBS)

$(BUILD)/libata.so: $(BUILD)/libata.so.$(SOVER)
	$(call quiet,LN,$(BUILD)/libata.so.$(SOMAJOR))ln -sf libata.so.$(SOVER) $(BUILD)/libata.so.$(SOMAJOR)
	$(call quiet,LN,$@)ln -sf libata.so.$(SOVER) $@

$(BUILD)/ata-bench: $(BENCH_OBJS) $(BUILD)/libata.a
	$(call quiet,LD,$@)$(CC) $(LDFLAGS) -o $@ $(BENCH_OBJS) $(BUILD)/libata.a $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_UTIL) $(BUILD)/libata.a
	$(call quiet,LD,$@)$(CC) $(LDFLAGS) -o $@ $< $(TEST_UTIL) $(BUILD)/libata.a $(LDLIBS) -lcmocka
# test_gpu passes a CUDA stream of its own: it links the GPU runtime (the
# library never does).
$(BUILD)/tests/test_gpu: LDLIBS += $(if $(filter cuda hip,$(ATA_GPU)),$(GPU_LIBS))
# One backend-vs-reference suite (tests/backend_suite.c), instantiated by
# test_runtime (cpu) and test_gpu (the build's GPU backend).
BS_OBJ := $(BUILD)/tests/backend_suite.o
$(BUILD)/tests/test_runtime $(BUILD)/tests/test_gpu $(BUILD)/tests/test_ref_backend: $(BS_OBJ)
$(BUILD)/tests/test_runtime $(BUILD)/tests/test_gpu $(BUILD)/tests/test_ref_backend: TEST_UTIL += $(BS_OBJ)
$(BS_OBJ) $(TEST_UTIL): $(ATA_GPU_STAMP)
-include $(BS_OBJ:.o=.d) $(TEST_UTIL:.o=.d)

# ata-bench records the commit it was built from (bench/machine.c); the
# header changes only when the commit (or -dirty) does.
$(BUILD)/commit.h: FORCE
	@mkdir -p $(BUILD)
	@c=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$$(git diff --quiet HEAD -- 2>/dev/null || echo -dirty); \
	 echo "#define ATA_COMMIT \"$$c\"" > $@.tmp; cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/bench/machine.o: $(BUILD)/commit.h
$(BUILD)/bench/machine.o: CPPFLAGS += -I$(BUILD)
.PHONY: FORCE
FORCE:

run: all
	$(BUILD)/ata-bench pcg

# Every test binary runs even if one fails; the summary counts them.
test: all $(TEST_BINS) $(if $(PETSC_TESTS),petsc)
	@ATA_BUILD=$(BUILD) ATA_BACKEND_PATH=$(abspath $(BUILD)) ATA_PROBE_CACHE=0 bash tests/run.sh $(TEST_BINS) $(if $(SANITIZE),,tests/install_check.sh) $(PETSC_TESTS)

check: test

asan:
	$(MAKE) BUILD=build-asan SANITIZE=address,undefined OPT=-O1 test

# The threaded tests (runtime executors, PCG's pool kernels) under ThreadSanitizer.
tsan:
	$(MAKE) BUILD=build-tsan SANITIZE=thread OPT=-O1 ATA_TEST_FILTER="runtime pcg load api permute mixed" test

bench: all
	bash bench/suite.sh $(BUILD)/ata-bench bench/out

# PCG under load (issue 10): 2/3/4 threads and serial beside busy loops.
.PHONY: stress
stress: all
	bash bench/stress.sh $(BUILD)/ata-bench $(or $(STRESS_REPS),5)

install: all
	install -d $(PREFIX)/lib $(PREFIX)/include $(PREFIX)/bin $(PREFIX)/lib/pkgconfig
	install -m 644 $(BUILD)/libata.a $(PREFIX)/lib/
	install -m 755 $(BUILD)/libata.so.$(SOVER) $(PREFIX)/lib/
	ln -sf libata.so.$(SOVER) $(PREFIX)/lib/libata.so.$(SOMAJOR)
	ln -sf libata.so.$(SOVER) $(PREFIX)/lib/libata.so
	$(if $(GPU_MODULE),install -m 755 $(GPU_MODULE) $(PREFIX)/lib/)
	install -m 644 include/ata.h $(PREFIX)/include/
	install -m 755 $(BUILD)/ata-bench $(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(SOVER)|' \
	    -e 's|@LIBS@|$(LDLIBS)|' src/ata.pc.in > $(PREFIX)/lib/pkgconfig/ata.pc

clean:
	rm -rf build build-asan build-tsan build-hip

-include $(LIB_OBJS:.o=.d) $(BENCH_OBJS:.o=.d) $(TEST_BINS:=.d) $(TEST_UTIL:.o=.d)

# Fuzzing (tests/fuzz/): libFuzzer targets for the reader and the public
# API under ASan+UBSan with clang-14 (`bash .ci/deps.sh fuzz`), each run for
# FUZZ_SECONDS; a failing input stays in build-fuzz/fuzz/artifacts/.
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang-14
.PHONY: fuzz fuzz-clean
fuzz:
	@bash .ci/deps.sh fuzz
	$(MAKE) BUILD=build-fuzz CC=$(FUZZ_CC) CUDA=no OPT=-O1 SANITIZE=address,undefined,fuzzer-no-link build-fuzz/libata.a
	FUZZ_CC=$(FUZZ_CC) FUZZ_LIBS="$(LDLIBS)" bash tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)
fuzz-clean:
	rm -rf build-fuzz
clean: fuzz-clean

# ATA's PCG against PETSc's, 1 and 2 ranks, interleaved repetitions (issue 9;
# not in CI): make vs-petsc [VS_PETSC_ARGS="lap3d:160 --reps 5 --policy levelset,ca"]
.PHONY: vs-petsc vs-petsc-deep
vs-petsc: all petsc
	bash bench/vs-petsc.sh --build $(BUILD) $(VS_PETSC_ARGS)
# The deep DAGs of issue 25 (1004 and 1418 levels), one after the other:
# make vs-petsc-deep [VS_PETSC_ARGS="--reps 5 --policy levelset,ca"]
vs-petsc-deep: all petsc
	bash bench/vs-petsc.sh --build $(BUILD) circuit:1000000 circuit:2000000 $(VS_PETSC_ARGS)

# Allocation, thread-creation and device faults (tests/faults/fault_sweep.c):
# every allocation of every public entry fails in turn under ASan/LSan/UBSan,
# then every pthread_create, then (on the emulated CUDA module) every device
# allocation, stream, event and graph instantiation. FAULT_SAMPLE=K samples
# N; the default (and CI) is the full sweep.
FAULT_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign,--wrap=aligned_alloc,--wrap=pthread_create
# The sweep checks for leaks after every run, and LSan walks ASan's quarantine
# each time: at its default 256 MB the host sweep took 80 s, at 16 MB 21 s.
FAULT_ASAN := detect_leaks=1:quarantine_size_mb=16
FAULT_CC    = $(CC) -std=c11 -O1 -g -D_GNU_SOURCE -fsanitize=address,undefined -fno-omit-frame-pointer -Iinclude
.PHONY: faults
faults:
	$(MAKE) BUILD=build-asan SANITIZE=address,undefined OPT=-O1 build-asan/libata.a
	$(call quiet,CCLD,build-asan/fault_sweep)$(FAULT_CC) -o build-asan/fault_sweep tests/faults/fault_sweep.c build-asan/libata.a $(LDLIBS) $(FAULT_WRAP)
	$(MAKE) BUILD=build-emu32 ATA_GPU=emu32 build-emu32/libata.a build-emu32/libata_cuda.so
	$(call quiet,CCLD,build-emu32/fault_sweep)$(FAULT_CC) -o build-emu32/fault_sweep tests/faults/fault_sweep.c build-emu32/libata.a $(LDLIBS) $(FAULT_WRAP)
	ASAN_OPTIONS=$(FAULT_ASAN) build-asan/fault_sweep
	ASAN_OPTIONS=$(FAULT_ASAN) FAULT_THREADS=1 build-asan/fault_sweep
	ASAN_OPTIONS=$(FAULT_ASAN) FAULT_DEVICE=1 ATA_BACKEND_PATH=$(abspath build-emu32) build-emu32/fault_sweep
# The kit for a lent GPU machine and its rehearsal (make gpu-kit, make gpu-rehearse).
-include bench/gpu-kit.mk
