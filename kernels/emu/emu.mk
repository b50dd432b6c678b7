# kernels/emu/emu.mk - the host SIMT emulator's part of the build (included
# at the end of kernels/gpu.mk). No GPU, no vendor toolchain: g++ compiles
# kernels/*.cu unchanged through gpu_port.h's ATA_EMU branch, and the backend
# (src/gpu/, unchanged) sees the emulator through stand-in headers.
#
#   make gpu-emu           tests/test_gpu on the emulator: warp 32 reporting
#                          as CUDA (build-emu32/), warp 64 as HIP (build-emu64/),
#                          and warp 32 again on a single block slot
#   make gpu-emu-tsan      the same, warp 32, under ThreadSanitizer with every
#                          lane a TSan fiber (build-emu-tsan/)
#   make gpu-emu-tsan-bug  shows that gpu-emu-tsan can fail: builds the kernels
#                          with an injected ordering bug (EMU_BUGS: every acquire
#                          load relaxed; every release relaxed; the value of a
#                          pull row stored, or loaded, plainly instead of
#                          atomically) and passes only if TSan reports a data
#                          race in the kernels for each case of EMU_BUG_CASES
#   ATA_GPU=emu32|emu64    any other target on the emulator (e.g. ata-bench)
#
# EMU_TEST_SIZE (default small; tiny under TSan) becomes ATA_GPU_TEST_SIZE
# for test_gpu: small samples the cases and drops the 10^6-unknown ones, tiny
# keeps the memory-order checks only (see tests/test_gpu.c). Emulator knobs (environment): see
# README, section "GPU emulator".

EMU_TEST_SIZE ?= small
EMU_HDRS := $(wildcard kernels/emu/*.h kernels/emu/include/*.h kernels/emu/include/*/*.h)
EMU_BUGS := NO_ACQUIRE NO_RELEASE PLAIN_VALUE_STORE PLAIN_VALUE_LOAD
# BUG:TESTS:WHERE[:ENV,..]: ILU0's flag without its acquire, or its release,
# must be reported in ILU0; the wait on the value with a plain store or a
# plain load of x, in the pull kernel (elastic map, and the fixed one); the
# pull solve's flag wait (ATA_GPU_WAIT=flag) without its acquire or release.
EMU_BUG_CASES := NO_ACQUIRE:test_ilu0:ilu0_ NO_RELEASE:test_ilu0:ilu0_ \
                 PLAIN_VALUE_STORE:test_generated:pull_elastic PLAIN_VALUE_LOAD:test_generated:pull_elastic \
                 PLAIN_VALUE_STORE:test_generated:pull_window:ATA_GPU_MAP=fixed \
                 NO_ACQUIRE:test_generated:pull_:ATA_GPU_WAIT=flag NO_RELEASE:test_generated:pull_:ATA_GPU_WAIT=flag
CXX ?= g++

ifneq ($(filter emu32 emu64,$(ATA_GPU)),)
  EMU_WARP := $(if $(filter emu64,$(ATA_GPU)),64,32)
  CPPFLAGS += -DATA_HAVE_$(if $(filter 64,$(EMU_WARP)),HIP,CUDA) -DATA_EMU -DATA_EMU_WARP=$(EMU_WARP) \
              -DATA_EMU_TSAN=$(if $(filter thread,$(SANITIZE)),1,0) -Ikernels -Ikernels/emu/include
  EMU_CXXFLAGS := -std=c++17 $(OPT) -g -Wall -Wextra -Wno-unused-parameter -fPIC -pthread -ffp-contract=off
  # The kernels are sanitized with the rest; the scheduler (emu.cc) never is.
  EMU_KFLAGS := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer) \
                $(if $(filter thread,$(SANITIZE)),-Wno-tsan)
  GPU_OBJS := $(GPU_SRCS:%.cu=$(BUILD)/%.o) $(BUILD)/kernels/emu/emu.o
  # The emulated module also exports the counts of its work (emu_counts.h).
  GPU_MODULE_MAP := kernels/emu/emu_module.map
  GPU_LIBS := -lstdc++
  # The vendor stand-in solves with the serial reference: the emulated module
  # carries its own copy (hidden, like everything in a module).
  EMU_MODULE_OBJS := $(BUILD)/solvers/ref_ilu0.o $(BUILD)/solvers/ref_sptrsv.o $(BUILD)/src/csr.o \
                     $(BUILD)/src/mem.o
$(BUILD)/kernels/%.o: kernels/%.cu $(GPU_HDRS) $(EMU_HDRS) | deps
	@mkdir -p $(dir $@)
	$(call quiet,CXX,$@)$(CXX) $(CPPFLAGS) $(EMU_CXXFLAGS) $(EMU_KFLAGS) -x c++ -c $< -o $@
$(BUILD)/kernels/emu/emu.o: kernels/emu/emu.cc $(EMU_HDRS) include/ata.h | deps
	@mkdir -p $(dir $@)
	$(call quiet,CXX,$@)$(CXX) $(CPPFLAGS) $(EMU_CXXFLAGS) -c $< -o $@
$(BUILD)/kernels/emu/selftest: kernels/emu/selftest.cc $(BUILD)/libata.a $(BUILD)/kernels/emu/emu.o $(GPU_HDRS) $(EMU_HDRS)
	$(call quiet,CXXLD,$@)$(CXX) $(CPPFLAGS) $(EMU_CXXFLAGS) $(EMU_KFLAGS) -o $@ $< $(BUILD)/kernels/emu/emu.o $(BUILD)/libata.a $(LDFLAGS) $(LDLIBS)
# Kernels with an injected bug, and a test_gpu linked against them.
$(BUILD)/emu-bug/%/ata_exec.o $(BUILD)/emu-bug/%/ata_blas.o: kernels/ata_exec.cu kernels/ata_blas.cu $(GPU_HDRS) $(EMU_HDRS) | deps
	@mkdir -p $(dir $@)
	$(call quiet,CXX,$(dir $@)ata_exec.o)$(CXX) $(CPPFLAGS) -DATA_EMU_BUG_$*=1 $(EMU_CXXFLAGS) $(EMU_KFLAGS) -x c++ -c kernels/ata_exec.cu -o $(dir $@)ata_exec.o
	$(call quiet,CXX,$(dir $@)ata_blas.o)$(CXX) $(CPPFLAGS) -DATA_EMU_BUG_$*=1 $(EMU_CXXFLAGS) $(EMU_KFLAGS) -x c++ -c kernels/ata_blas.cu -o $(dir $@)ata_blas.o
# The backend module with those kernels: test_gpu loads it instead of the
# good one through ATA_BACKEND_PATH (src/backend_load.c).
$(BUILD)/emu-bug/%/libata_$(GPU_MODULE_API).so: $(GPU_HOST_OBJS) \
        $(BUILD)/src/ilu0_row.o $(BUILD)/kernels/emu/emu.o $(EMU_MODULE_OBJS) $(BUILD)/emu-bug/%/ata_exec.o \
        $(BUILD)/emu-bug/%/ata_blas.o
	$(call quiet,LD,$@)$(CC) -shared $(LDFLAGS) -Wl,--version-script=$(GPU_MODULE_MAP) -Wl,--no-undefined -o $@ $^ $(GPU_LIBS) -lm
endif

.PHONY: gpu-emu gpu-emu-tsan gpu-emu-tsan-bug emu-test emu-bug-test emu-one-slot
emu-test: $(BUILD)/tests/test_gpu $(BUILD)/kernels/emu/selftest $(GPU_MODULE)
	$(BUILD)/kernels/emu/selftest
	ATA_BACKEND_PATH=$(abspath $(BUILD)) ATA_GPU_TEST_REQUIRE=1 ATA_GPU_TEST_SIZE=$(EMU_TEST_SIZE) $(BUILD)/tests/test_gpu

emu-bug-test: $(BUILD)/tests/test_gpu $(EMU_BUGS:%=$(BUILD)/emu-bug/%/libata_$(GPU_MODULE_API).so)
	@for c in $(EMU_BUG_CASES); do set -- $$(echo $$c | tr : ' '); ATA_BACKEND_PATH=$(abspath $(BUILD))/emu-bug/$$1 \
	    bash kernels/emu/expect-race.sh $(BUILD)/tests/test_gpu "$$1" "$$2" "$$3" "$${4:-}" || exit 1; done

# One slot, four reported resident blocks: every persistent grid has three
# blocks that start only after the first exits (the deadlock-freedom claim).
emu-one-slot: $(BUILD)/tests/test_gpu $(GPU_MODULE)
	ATA_EMU_SLOTS=1 ATA_EMU_BLOCKS_PER_SM=4 ATA_GPU_TEST_SIZE=small ATA_GPU_TEST_ONLY=test_generated \
	  ATA_BACKEND_PATH=$(abspath $(BUILD)) ATA_GPU_TEST_REQUIRE=1 $(BUILD)/tests/test_gpu

gpu-emu:
	$(MAKE) BUILD=build-emu32 ATA_GPU=emu32 emu-test emu-one-slot
	$(MAKE) BUILD=build-emu64 ATA_GPU=emu64 emu-test

gpu-emu-tsan:
	$(MAKE) BUILD=build-emu-tsan ATA_GPU=emu32 SANITIZE=thread OPT=-O1 EMU_TEST_SIZE=tiny emu-test

gpu-emu-tsan-bug:
	$(MAKE) BUILD=build-emu-tsan ATA_GPU=emu32 SANITIZE=thread OPT=-O1 emu-bug-test

.PHONY: clean-emu
clean: clean-emu
clean-emu:
	rm -rf build-emu32 build-emu64 build-emu-tsan build-emu64-tsan
.PRECIOUS: $(BUILD)/emu-bug/%/ata_exec.o $(BUILD)/emu-bug/%/ata_blas.o
