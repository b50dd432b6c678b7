# solvers/petsc/petsc.mk - the PETSc plugin and the MPI benchmark (included
# by Makefile). Nothing of the core library depends on PETSc or MPI.
#
#   make petsc   $(BUILD)/libata_petsc.so (ATA as PETSc's "ata" ILU(0)/ICC(0)
#                package), $(BUILD)/ata-mpi-pcg (METIS-partitioned PCG over
#                MPI), and the programs of tests/petsc/; as root it installs
#                petsc-dev and OpenMPI first (.ci/deps.sh petsc).
# Once built, `make test` also runs tests/petsc/run.sh (not under sanitizers).
# PETSc is found by solvers/petsc/petsc-flags.sh (PETSC_DIR, pkg-config, /usr/lib/petsc).

PETSC_CFLAGS  = $(shell sh solvers/petsc/petsc-flags.sh cflags)
PETSC_LIBS    = $(shell sh solvers/petsc/petsc-flags.sh libs)
PETSC_SRCS   := solvers/petsc/ata_petsc.c
PETSC_OBJS   := $(PETSC_SRCS:%.c=$(BUILD)/%.o)
PETSC_DEFS   := -Isolvers/petsc
PETSC_TEST_PROGS := $(patsubst tests/petsc/%.c,$(BUILD)/tests/petsc/%,$(wildcard tests/petsc/*.c))
PETSC_ALL    := $(BUILD)/libata_petsc.so $(BUILD)/ata-mpi-pcg $(PETSC_TEST_PROGS)
# make test runs the petsc tests when the petsc part has been built here
PETSC_TESTS  := $(if $(SANITIZE),,$(if $(wildcard $(BUILD)/libata_petsc.so),tests/petsc/run.sh))

.PHONY: petsc petsc-deps
petsc: $(PETSC_ALL)

petsc-deps:
	@bash .ci/deps.sh petsc

$(BUILD)/solvers/petsc/%.o: solvers/petsc/%.c | deps petsc-deps
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CPPFLAGS) $(PETSC_DEFS) $(PETSC_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/bench/mpi/%.o: bench/mpi/%.c | deps petsc-deps
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CPPFLAGS) $(PETSC_DEFS) $(PETSC_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/petsc/%.o: tests/petsc/%.c | petsc-deps
	@mkdir -p $(dir $@)
	$(call quiet,CC,$@)$(CC) $(CPPFLAGS) $(PETSC_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# libata.a goes inside, its symbols kept private: one file to -dll_append.
$(BUILD)/libata_petsc.so: $(PETSC_OBJS) $(BUILD)/libata.a
	$(call quiet,LD,$@)$(CC) -shared $(LDFLAGS) -o $@ $(PETSC_OBJS) -Wl,--exclude-libs,libata.a $(BUILD)/libata.a \
	    $(LDLIBS) $(GPU_LIBS) $(PETSC_LIBS)

$(BUILD)/ata-mpi-pcg: $(BUILD)/bench/mpi/ata-mpi-pcg.o $(PETSC_OBJS) $(BUILD)/libata.a
	$(call quiet,LD,$@)$(CC) $(LDFLAGS) -o $@ $< $(PETSC_OBJS) $(BUILD)/libata.a $(LDLIBS) $(GPU_LIBS) $(PETSC_LIBS)

# Plain PETSc programs: they know nothing of ATA (the plugin comes by -dll_append).
$(BUILD)/tests/petsc/%: $(BUILD)/tests/petsc/%.o
	$(call quiet,LD,$@)$(CC) $(LDFLAGS) -o $@ $< $(PETSC_LIBS)

-include $(PETSC_OBJS:.o=.d) $(BUILD)/bench/mpi/ata-mpi-pcg.d $(PETSC_TEST_PROGS:=.d)
.DEFAULT_GOAL := all
