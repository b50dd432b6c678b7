/* backend_load.c - GPU backends are modules loaded at run time, so that the
 * core library (libata.so / libata.a) and its users never link a GPU
 * runtime: a CUDA-built library runs on a machine without CUDA, and asking
 * for the cuda backend there is a clear ATA_ERR_BACKEND, not a link failure.
 *
 * Module libata_<api>.so (libata_cuda.so, libata_hip.so) exports one symbol,
 * ata_backend_module (backend.h). Where it is looked for, first hit wins:
 *   1. $ATA_BACKEND_PATH (directories separated by ':'), if set: only there;
 *   2. the directory of the object holding libata (libata.so, or the
 *      program that linked libata.a), found with dladdr;
 *   3. that directory's ../lib (a program in PREFIX/bin linking libata.a);
 *   4. the libdir the library was built for (ATA_LIBDIR);
 *   5. the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache).
 * A loaded module stays loaded until the process exits (contexts may come
 * and go; unloading a GPU runtime mid-process is asking for trouble). */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "context.h"
#include "error.h"
#include "plan.h"

#ifndef ATA_LIBDIR
#define ATA_LIBDIR "/usr/local/lib"
#endif

/* What the core lends a module: the error channel (one thread-local message,
 * shared with the caller's ata_last_error) and the CSR helpers it uses. */
static ata_status host_fail_msg(ata_status s, const char *msg) { return ata_fail(s, "%s", msg); }

static const ata_backend_host host = {
    .abi = ATA_BACKEND_ABI,
    .sizeof_context = sizeof(ata_context),
    .sizeof_plan = sizeof(ata_plan),
    .fail_msg = host_fail_msg,
    .clear_error = ata_clear_error,
    .csr_free = ata_csr_free,
    .csr_transpose = ata_csr_transpose,
};

typedef struct {
    pthread_mutex_t lock;
    int tried;
    const ata_backend_ops *ops;
    char why[768];          /* the load failure, repeated on every later request */
} module_slot;

static module_slot slots[ATA_BACKEND_HIP + 1] = {
    [ATA_BACKEND_CUDA] = { PTHREAD_MUTEX_INITIALIZER, 0, NULL, "" },
    [ATA_BACKEND_HIP] = { PTHREAD_MUTEX_INITIALIZER, 0, NULL, "" },
};

static void append(char *buf, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

/* dlopen DIR/FILE (DIR NULL: the loader's search). 1: loaded; 0: no such
 * file; -1: the file is there but does not load (its dlerror in `err`). */
static int try_open(const char *dir, const char *file, void **h, char *err, size_t cap)
{
    char path[PATH_MAX];
    if (dir) {
        if (!*dir) return 0;
        snprintf(path, sizeof path, "%s/%s", dir, file);
        FILE *f = fopen(path, "rb");
        if (!f) return 0;
        fclose(f);
    } else {
        snprintf(path, sizeof path, "%s", file);
    }
    *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (*h) return 1;
    const char *e = dlerror();
    /* The loader's search says "cannot open" for a missing module too. */
    if (!dir && e && strstr(e, file) && strstr(e, "cannot open shared object file")) return 0;
    snprintf(err, cap, "%s", e ? e : "dlopen failed");
    return -1;
}

static void *open_module(const char *file, char *why, size_t cap)
{
    void *h = NULL;
    char err[512] = "", looked[1024] = "";
    int r = 0;
    const char *env = getenv("ATA_BACKEND_PATH");
    if (env) {
        char dirs[PATH_MAX * 2];
        snprintf(dirs, sizeof dirs, "%s", env);
        for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d && r == 0; d = strtok_r(NULL, ":", &save)) {
            r = try_open(d, file, &h, err, sizeof err);
            append(looked, sizeof looked, "%s%s", *looked ? ", " : "", d);
        }
        if (r == 0) append(looked, sizeof looked, " (ATA_BACKEND_PATH)");
    } else {
        char here[PATH_MAX] = "", up[PATH_MAX + 8] = "";
        Dl_info info;
        if (dladdr((void *)&ata_context_create, &info) && info.dli_fname) {
            snprintf(here, sizeof here, "%s", info.dli_fname);
            char *slash = strrchr(here, '/');
            if (slash) *slash = '\0'; else snprintf(here, sizeof here, ".");
            snprintf(up, sizeof up, "%s/../lib", here);
        }
        const char *dirs[] = { here, up, ATA_LIBDIR };
        for (int i = 0; i < 3 && r == 0; i++) {
            if (!*dirs[i]) continue;
            r = try_open(dirs[i], file, &h, err, sizeof err);
            append(looked, sizeof looked, "%s%s", *looked ? ", " : "", dirs[i]);
        }
        if (r == 0) {
            r = try_open(NULL, file, &h, err, sizeof err);
            append(looked, sizeof looked, ", the loader's path");
        }
    }
    if (r == 1) return h;
    if (r < 0)
        snprintf(why, cap, "%s does not load: %s (is the GPU runtime it needs installed?)", file, err);
    else
        snprintf(why, cap, "%s not found (looked in %s; set ATA_BACKEND_PATH to its directory)", file, looked);
    return NULL;
}

ata_status backend_load(ata_backend b, const ata_backend_ops **out)
{
    *out = NULL;
    if (b == ATA_BACKEND_CPU) { *out = &cpu_backend_ops; return ATA_OK; }
    if (b != ATA_BACKEND_CUDA && b != ATA_BACKEND_HIP)
        return ata_fail(ATA_ERR_ARG, "backend %d has no module", (int)b);
    const char *name = ata_backend_name(b);
    module_slot *m = &slots[b];
    pthread_mutex_lock(&m->lock);
    if (!m->tried) {
        m->tried = 1;
        char file[64];
        snprintf(file, sizeof file, "libata_%s.so", name);
        void *h = open_module(file, m->why, sizeof m->why);
        if (h) {
            ata_backend_module_fn entry;
            *(void **)&entry = dlsym(h, "ata_backend_module");
            const ata_backend_ops *ops = entry ? entry(&host) : NULL;
            if (!entry)
                snprintf(m->why, sizeof m->why, "%s has no ata_backend_module entry point", file);
            else if (!ops)
                snprintf(m->why, sizeof m->why, "%s was built from another version of ATA (module ABI %d)", file,
                         ATA_BACKEND_ABI);
            else if (strcmp(ops->name, name) != 0)
                snprintf(m->why, sizeof m->why, "%s holds the '%s' backend, not '%s'", file, ops->name, name);
            else
                m->ops = ops;
            if (!m->ops) dlclose(h);
        }
    }
    *out = m->ops;
    char why[sizeof m->why];
    snprintf(why, sizeof why, "%s", m->why);
    pthread_mutex_unlock(&m->lock);
    if (*out) return ATA_OK;
    return ata_fail(ATA_ERR_BACKEND, "backend unavailable: %s: %s", name, why);
}
