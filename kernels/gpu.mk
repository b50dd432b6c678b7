# kernels/gpu.mk - the GPU backends' part of the build (included by Makefile).
#
#   make               CPU backend, plus CUDA when nvcc is found (CUDA ?= auto;
#                      CUDA=no leaves it out, CUDA=yes insists on it)
#   make cuda          the CUDA backend into $(BUILD)/ (error if no nvcc)
#   make hip           the HIP backend into build-hip/ (CPU + HIP), after
#                      `bash .ci/deps.sh hip`; library, ata-bench and tests
#   make gpu-info      what this makefile found
#
# The kernels in kernels/*.cu are compiled by nvcc for sm_80 and sm_90 (plus
# compute_90 PTX for newer GPUs), or by hipcc for gfx90a (MI200) plus gfx942
# (MI300) and gfx950 (MI350) where the hipcc knows them (HIP_ARCHS=auto
# probes it: Debian's ROCm 5.2 builds gfx90a only; MI300 needs ROCm >= 6.0), with no
# floating-point contraction (pull and ILU0 are bitwise equal to the serial
# reference). The host side, src/gpu/*.c, is ordinary C built by the generic
# rule with -DATA_HAVE_CUDA or -DATA_HAVE_HIP, into the module only.

NVCC  ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
ROCM_PATH  ?= /opt/rocm
# An AMD ROCm install ($ROCM_PATH) wins over a hipcc on PATH (Debian's).
HIPCC ?= $(firstword $(wildcard $(ROCM_PATH)/bin/hipcc) $(shell command -v hipcc 2>/dev/null))
CUDA_ARCHS ?= 80 90
HIP_ARCHS  ?= auto

# ATA_GPU: cuda | hip | none. `make hip` sets it; otherwise CUDA decides.
ifeq ($(ATA_GPU),)
  ifneq ($(filter no off 0 none,$(CUDA)),)
    ATA_GPU := none
  else ifneq ($(NVCC),)
    ATA_GPU := cuda
  else ifneq ($(filter yes on 1,$(CUDA)),)
    $(error CUDA=$(CUDA) but nvcc was not found on PATH or in /usr/local/cuda/bin)
  else
    ATA_GPU := none
  endif
endif

ata_comma := ,
GPU_SRCS := $(wildcard kernels/*.cu)
GPU_HDRS := kernels/gpu_port.h kernels/gpu_kernels.h

# The backend is a module, $(GPU_MODULE): the host side (src/gpu/: our
# kernels' host side, the vendor baseline, PCG's vector operations, the
# module's entry point) and the kernels, linked against the GPU
# runtime. libata and ata-bench never link it (src/backend_load.c dlopens it).
ifeq ($(ATA_GPU),cuda)
  ifeq ($(NVCC),)
    $(error ATA_GPU=cuda but nvcc was not found on PATH or in /usr/local/cuda/bin)
  endif
  CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(realpath $(NVCC)))
  CUDA_LIBDIR ?= $(firstword $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib))
  CPPFLAGS  += -DATA_HAVE_CUDA -Ikernels -I$(CUDA_HOME)/include
  NVCCFLAGS ?= -O3 -std=c++17 --fmad=false \
               $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
               -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS)) \
               -Xcompiler -fPIC,-Wall,-Wextra
  GPU_OBJS  := $(GPU_SRCS:%.cu=$(BUILD)/%.o)
  GPU_LIBS  := $(if $(CUDA_LIBDIR),-L$(CUDA_LIBDIR) -Wl$(ata_comma)-rpath$(ata_comma)$(CUDA_LIBDIR)) -lcusparse -lcudart -lstdc++
$(BUILD)/kernels/%.o: kernels/%.cu $(GPU_HDRS) | deps
	@mkdir -p $(dir $@)
	$(call quiet,NVCC,$@)$(NVCC) $(NVCCFLAGS) -Ikernels -c $< -o $@
else ifeq ($(ATA_GPU),hip)
  ifeq ($(HIPCC),)
    $(error ATA_GPU=hip but hipcc was not found (run: bash .ci/deps.sh hip))
  endif
  ifeq ($(HIP_ARCHS),auto)
    # gfx90a always; gfx942/gfx950 when this hipcc's clang knows them.
    ata_hip_arch = $(shell mkdir -p $(BUILD) && : > $(BUILD)/.archprobe.hip && \
                     $(HIPCC) -x hip --offload-arch=$(1) -c $(BUILD)/.archprobe.hip -o /dev/null >/dev/null 2>&1 && echo $(1))
    HIP_ARCHS := gfx90a $(call ata_hip_arch,gfx942) $(call ata_hip_arch,gfx950)
  endif
  ROCM_INC  := $(wildcard $(ROCM_PATH)/include)
  ROCM_LIB  := $(wildcard $(ROCM_PATH)/lib)
  CPPFLAGS  += -DATA_HAVE_HIP -D__HIP_PLATFORM_AMD__ -Ikernels $(if $(ROCM_INC),-I$(ROCM_INC))
  HIPCCFLAGS ?= -x hip -std=c++17 -O3 -ffp-contract=off $(addprefix --offload-arch=,$(HIP_ARCHS)) \
                -fPIC -Wall -Wextra
  GPU_OBJS  := $(GPU_SRCS:%.cu=$(BUILD)/%.o)
  GPU_LIBS  := $(if $(ROCM_LIB),-L$(ROCM_LIB) -Wl$(ata_comma)-rpath$(ata_comma)$(ROCM_LIB)) -lhipsparse -lamdhip64 -lstdc++
$(BUILD)/kernels/%.o: kernels/%.cu $(GPU_HDRS) | deps
	@mkdir -p $(dir $@)
	$(call quiet,HIPCC,$@)$(HIPCC) $(HIPCCFLAGS) -Ikernels -c $< -o $@
else
  GPU_OBJS :=
  GPU_LIBS :=
endif

# Objects compiled with -DATA_HAVE_CUDA/HIP differ from CPU-only ones: a
# stamp named after the configuration makes them rebuild when it changes
# (e.g. `make CUDA=no` then `make` in the same $(BUILD)).
ATA_GPU_STAMP := $(BUILD)/.gpu-$(ATA_GPU)
$(LIB_OBJS) $(BENCH_OBJS) $(TEST_BINS:=.o) $(TEST_UTIL): $(ATA_GPU_STAMP)
$(ATA_GPU_STAMP):
	@mkdir -p $(BUILD)
	@rm -f $(BUILD)/.gpu-*
	@touch $@

# The host SIMT emulator (make gpu-emu, gpu-emu-tsan): its own fragment. It
# sets GPU_OBJS for ATA_GPU=emu32|emu64, whose module then stands in for the
# CUDA (warp 32) or HIP (warp 64) one.
GPU_HOST_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard src/gpu/*.c))
GPU_MODULE_API := $(if $(filter cuda emu32,$(ATA_GPU)),cuda,$(if $(filter hip emu64,$(ATA_GPU)),hip))
GPU_MODULE := $(if $(GPU_MODULE_API),$(BUILD)/libata_$(GPU_MODULE_API).so)
GPU_MODULE_MAP := kernels/gpu_module.map
include kernels/emu/emu.mk

ifneq ($(GPU_MODULE),)
GPU_MODULE_OBJS := $(GPU_HOST_OBJS) $(BUILD)/src/ilu0_row.o $(GPU_OBJS) $(EMU_MODULE_OBJS)
$(GPU_MODULE_OBJS): $(ATA_GPU_STAMP)
$(GPU_MODULE): $(GPU_MODULE_OBJS) $(GPU_MODULE_MAP)
	$(call quiet,LD,$@)$(CC) -shared $(LDFLAGS) -Wl,--version-script=$(GPU_MODULE_MAP) -Wl,--no-undefined \
	    -o $@ $(GPU_MODULE_OBJS) $(GPU_LIBS) -lm
-include $(GPU_HOST_OBJS:.o=.d)
endif

.PHONY: cuda hip gpu-info gpu-tests
cuda:
	@if [ -z "$(NVCC)" ]; then \
	  echo "make cuda: nvcc not found (looked on PATH and in /usr/local/cuda/bin): CUDA backend NOT built" >&2; \
	  exit 1; fi
	$(MAKE) ATA_GPU=cuda all

hip:
	bash .ci/deps.sh hip
	$(MAKE) BUILD=build-hip ATA_GPU=hip all gpu-tests

gpu-tests: $(TEST_BINS)

gpu-info:
	@echo "ATA_GPU=$(ATA_GPU) NVCC=$(NVCC) HIPCC=$(HIPCC) BUILD=$(BUILD) HIP_ARCHS=$(HIP_ARCHS)"
	@echo "GPU_OBJS=$(GPU_OBJS)"
	@echo "GPU_LIBS=$(GPU_LIBS)"
	@echo "GPU_MODULE=$(GPU_MODULE)"

# This file is included before the Makefile's first rule: keep `all` the default.
.DEFAULT_GOAL := all

