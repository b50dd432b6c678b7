# bench/gpu-kit.mk - the kit for a lent GPU machine (included by Makefile).
#
#   make gpu-kit        build-gpu-kit/: everything bench/gpu-check.sh needs on
#                       the bare GPU machine that it lacks (binaries, the CUDA
#                       module for sm_90 + compute_90 PTX, the non-system
#                       shared libraries they load, the real matrices)
#   make gpu-rehearse   bench/gpu-check.sh --rehearse: the GPU machine's side
#                       of the check, here, on the emulated module, with
#                       Debian's -dev packages and their libraries hidden
#
# KIT_GPU=emu32 KIT=build-gpu-kit-emu32 makes the rehearsal's kit (the
# emulated module instead of the CUDA one). Objects go to build-kit-$(KIT_GPU)/.
# Why binaries and not unpacked -dev packages: README, "On a lent GPU".
KIT         ?= build-gpu-kit
KIT_GPU     ?= cuda
KIT_BUILD   ?= build-kit-$(KIT_GPU)
KIT_MATRICES ?= $(or $(ATA_MATRICES),../shared/matrices)

# In the kit's own build (the sub-make below sets ATA_KIT_BUILD): libarchive
# linked statically, its compression libraries by SONAME (no -dev symlinks
# needed) and only where used: the tar/raw readers ATA uses need neither
# libxml2 nor ICU (~35 MiB that would otherwise travel).
ifeq ($(ATA_KIT_BUILD),1)
  KIT_ARCHIVE_LIBS := -Wl,-Bstatic -larchive -Wl,-Bdynamic -Wl,--push-state,--as-needed \
      $(addprefix -l:,libnettle.so.8 libacl.so.1 liblzma.so.5 libzstd.so.1 liblz4.so.1 libbz2.so.1.0 libz.so.1 libxml2.so.2) \
      -Wl,--pop-state
  LDLIBS := $(patsubst -larchive,$(KIT_ARCHIVE_LIBS),$(LDLIBS))
endif

# ata-csr-dump: a generated problem or a matrix file, as ATA reads it, in a
# raw CSR file that bench/cupy_anchor.py reads (the CuPy anchor solves the
# same matrix).
$(BUILD)/ata-csr-dump: bench/kit/csr_dump.c $(BUILD)/libata.a
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libata.a $(LDFLAGS) $(LDLIBS)

KIT_BINS := $(KIT_BUILD)/ata-bench $(KIT_BUILD)/tests/test_gpu $(KIT_BUILD)/ata-csr-dump $(KIT_BUILD)/libata_cuda.so

.PHONY: gpu-kit gpu-rehearse
gpu-kit:
	rm -f $(KIT_BINS)   # relinked: the kit's link line differs from a plain build's
	$(MAKE) BUILD=$(KIT_BUILD) ATA_GPU=$(KIT_GPU) CUDA_ARCHS=90 ATA_KIT_BUILD=1 $(KIT_BINS)
	bash bench/gpu-kit.sh $(KIT_BUILD) $(KIT) $(KIT_GPU) $(KIT_MATRICES)

gpu-rehearse:
	bash bench/gpu-check.sh --rehearse

clean: clean-kit
.PHONY: clean-kit
clean-kit:
	rm -rf build-gpu-kit build-gpu-kit-emu32 build-kit-cuda build-kit-emu32
