/* selftest.cc - the emulator's own checks, run by make gpu-emu for each warp
 * width before test_gpu: the collectives compute what CUDA/HIP define, a
 * block never runs more than the slots allow, and a deadlock ends in a dump
 * of every lane and an abort (never a hang). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gpu_port.h"

#define NT (2 * ATA_WARP)       /* threads per block: two warps */

__global__ void k_collectives(int *out)
{
    __shared__ int sh[NT];
    const int t = (int)threadIdx.x, lane = t % ATA_WARP;
    const ata_lanemask odd = ata_ballot(lane & 1);
    ata_lanemask want = 0;
    for (int l = 1; l < ATA_WARP; l += 2) want |= (ata_lanemask)1 << l;
    const int seg = ata_shfl(lane * 10, 1, 4);        /* lane 1 of my segment of 4 */
    const int x = ata_shfl_xor(lane, 1, 2);
    const double d = ata_shfl_full(0.5 * lane, ATA_WARP - 1);
    sh[t] = lane;
    __syncthreads();
    const int r = sh[(t + ATA_WARP) % NT];
    int *o = out + 5 * (blockIdx.x * NT + t);
    o[0] = odd == want;
    o[1] = seg == ((lane & ~3) + 1) * 10;
    o[2] = x == (lane ^ 1);
    o[3] = d == 0.5 * (ATA_WARP - 1);
    o[4] = r == lane;
}

/* At most `slots` blocks at once: each block's first lane counts itself in
 * and out, and records the largest count seen. */
__global__ void k_slots(int *count, int *most)
{
    if (threadIdx.x == 0) {
        const int now = atomicAdd(count, 1) + 1;
        for (int m = ata_ld_relaxed_s32(most); m < now && atomicCAS(most, m, now) != m;) m = ata_ld_relaxed_s32(most);
    }
    for (int k = 0; k < 50; k++) (void)ata_ballot(k & 1);   /* stay a while */
    if (threadIdx.x == 0) atomicAdd(count, -1);
}

__global__ void k_deadlock(void)
{
    if (threadIdx.x % 2) __syncthreads();   /* half the block never arrives */
}

static int fails;
#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "selftest: FAILED: " __VA_ARGS__); fprintf(stderr, "\n"); fails++; } } while (0)

int main(void)
{
    const int grid = 5;
    int *out = NULL;
    CHECK(EMU_RT(Malloc)((void **)&out, sizeof(int) * 5 * grid * NT) == 0, "malloc");
    memset(out, 0, sizeof(int) * 5 * grid * NT);
    ATA_LAUNCH(k_collectives, grid, NT, 0, NULL, out);
    const char *what[5] = { "ballot", "shuffle in a segment", "shuffle xor", "shuffle of a double", "__syncthreads" };
    for (int k = 0; k < 5; k++) {
        int bad = 0;
        for (int t = 0; t < grid * NT; t++) bad += !out[5 * t + k];
        CHECK(bad == 0, "%s wrong on %d threads", what[k], bad);
    }
    int *cnt = NULL;
    CHECK(EMU_RT(Malloc)((void **)&cnt, 2 * sizeof(int)) == 0, "malloc");
    cnt[0] = cnt[1] = 0;
    ATA_LAUNCH(k_slots, 12, NT, 0, NULL, cnt, cnt + 1);
    const char *e = getenv("ATA_EMU_SLOTS");
    const int slots = e && atoi(e) > 0 ? atoi(e) : 2;
    CHECK(cnt[0] == 0 && cnt[1] >= 1 && cnt[1] <= slots, "blocks at once: %d (slots %d)", cnt[1], slots);

    /* The deadlock, in a child: it must abort with every lane's state. */
    char log[] = "/tmp/ata-emu-selftest-XXXXXX";
    const int fd = mkstemp(log);
    CHECK(fd >= 0, "mkstemp");
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, 2);
        ATA_LAUNCH(k_deadlock, 1, NT, 0, NULL);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    char buf[8192] = { 0 };
    const ssize_t got = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(log);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "deadlock: the child was not aborted (status %#x)", st);
    CHECK(got > 0 && strstr(buf, "deadlock") && strstr(buf, "waits in __syncthreads") && strstr(buf, "exited"),
          "deadlock: no dump of the lanes:\n%s", buf);
    printf("emu selftest (warp %d): %s\n", ATA_WARP, fails ? "FAILED" : "collectives, slots and deadlock dump OK");
    return fails != 0;
}
