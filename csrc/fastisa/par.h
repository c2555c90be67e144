/* fastisa's worker threads: one persistent pool shared by every kernel module.
 *
 * Why not OpenMP's pool: between two instructions of a kernel (tens of microseconds of
 * Python) libgomp's idle workers go to sleep, and waking them costs more than a 1 MiB
 * kernel saves (measured on the 2-core machine: nc_matmul [128,128]x[128,512] 96 us with
 * two OpenMP threads against 109 us with one; 75 us once the worker spins).  These
 * workers spin for a bounded time after each job (``FASTISA_SPIN_US``, default 300 us,
 * checked against the monotonic clock) and then sleep on a condition variable; the
 * caller is always one of the job's threads.
 *
 * A job is ``ntasks`` calls ``fn(ctx, task)``; each task is run exactly once, by some
 * thread, and the job returns when every task has returned.  Thread t of T prefers the
 * tasks [n*t/T, n*(t+1)/T) (so a kernel that splits the same rows the same way each call
 * finds its rows in that core's L2), then takes the unclaimed tasks of the others (a
 * worker the OS holds back delays the job by at most the task it has started).  Callers
 * make results independent of which thread ran which task: every fastisa kernel gives
 * each task disjoint outputs and the same per-element order of operations.
 *
 * Claims: each thread's range is one 64-bit word, (generation << 32) | (next << 16) |
 * end, claimed with a compare-and-swap that also checks the generation, so a worker still
 * looking at an old job can never take a task of a newer one by mistake.  One job at a
 * time: a second thread that submits while a job runs (two Python threads, LNC2
 * programs) runs its tasks itself, serially.
 *
 * Every module includes this header; the pool itself (FI_PAR_IMPL) is compiled only into
 * fastisa._kernels.par, which hands its entry point to the other modules
 * (fi_par_install), so there is one set of workers per process.
 */
#ifndef FASTISA_PAR_H
#define FASTISA_PAR_H

#include <stddef.h>
#include <stdint.h>

typedef void (*fi_par_task_fn)(void *ctx, int task);
typedef void (*fi_par_run_fn)(int nthreads, int ntasks, fi_par_task_fn fn, void *ctx);

static fi_par_run_fn fi_par_run_ptr = NULL;

/* The thread count a kernel's nt = 0 ("the default") means: OpenMP's (OMP_NUM_THREADS,
 * else the CPUs) in an OpenMP build, else the online CPUs. */
#ifdef FASTISA_OPENMP
#include <omp.h>
static inline int fi_par_default_threads(void) { return omp_get_max_threads(); }
#elif !defined(_WIN32)
#include <unistd.h>
static inline int fi_par_default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
#else
static inline int fi_par_default_threads(void) { return 1; }
#endif
static inline int fi_par_threads(int nt) { return nt > 0 ? nt : fi_par_default_threads(); }

static inline void fi_par_install(void *run) { fi_par_run_ptr = (fi_par_run_fn)run; }

/* The asynchronous entry points (fi_par_submit / fi_par_join of the pool, below), for the
 * modules that overlap a job with Python (fastisa._kernels.nki); NULL until installed. */
typedef int (*fi_par_submit_fn)(int nthreads, int ntasks, fi_par_task_fn fn, void *ctx);
typedef void (*fi_par_join_fn)(void);
typedef int (*fi_par_attach_fn)(fi_par_task_fn fn, void *ctx);
static fi_par_submit_fn fi_par_submit_ptr = NULL;
static fi_par_join_fn fi_par_join_ptr = NULL;
static fi_par_attach_fn fi_par_attach_ptr = NULL;
static inline void fi_par_install_async(void *submit, void *join, void *attach) {
    fi_par_submit_ptr = (fi_par_submit_fn)submit;
    fi_par_join_ptr = (fi_par_join_fn)join;
    fi_par_attach_ptr = (fi_par_attach_fn)attach;
}

/* Run fn(ctx, 0..ntasks-1) on up to nthreads threads (the caller included); serial when
 * nthreads <= 1, ntasks <= 1 or the pool is not installed. */
static inline void fi_par_for(int nthreads, int ntasks, fi_par_task_fn fn, void *ctx) {
    if (nthreads > 1 && ntasks > 1 && fi_par_run_ptr != NULL) {
        fi_par_run_ptr(nthreads, ntasks, fn, ctx);
        return;
    }
    for (int i = 0; i < ntasks; i++) fn(ctx, i);
}

#ifdef FI_PAR_IMPL
#if !defined(_WIN32)
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#define FI_PAR_THREADS 1
#endif

#define FI_PAR_MAX 64            /* threads of one job, the caller included */
#define FI_PAR_MAX_TASKS 65535   /* tasks of one job (16-bit task indices) */

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define fi_par_relax() _mm_pause()
#elif defined(__aarch64__)
#define fi_par_relax() __asm__ __volatile__("yield")
#else
#define fi_par_relax() ((void)0)
#endif

#ifdef FI_PAR_THREADS
typedef struct {
    uint64_t word[FI_PAR_MAX];   /* per thread: gen << 32 | next << 16 | end */
    char pad0[64];
    uint32_t gen;                /* published last: workers wait for it to change */
    char pad1[60];
    int done;                    /* tasks of the current job that have returned */
    char pad2[60];
    uint32_t fin;                /* the generation of the last job whose every task (and
                                    epilogue) has returned: set by its last task's thread */
    int epi;                     /* the open job's epilogue: 0 none yet, 1 attached, 2 the
                                    job completed first (none may be attached) */
    fi_par_task_fn epi_fn;
    void *epi_ctx;
    char pad3[40];
    int busy;                    /* a job is being submitted or run */
    int nthreads, ntasks;
    fi_par_task_fn fn;
    void *ctx;
    int nworkers;                /* workers started (threads 1..nworkers) */
    uint32_t start_gen;          /* the generation a new worker starts from */
    int sleepers;
    long spin_ns;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t jobs, serial_jobs;  /* statistics (fastisa._kernels.par.stats) */
} fi_par_pool_t;

/* the open asynchronous job (fi_par_submit, below) */
static struct { uint32_t g; int T, ntasks, open; } fi_par_async;

static fi_par_pool_t fi_par_pool = {
    .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .spin_ns = 300000};

static inline long fi_par_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Claim one task from thread t's word for generation g: its index, or -1. */
static inline int fi_par_claim(int t, uint32_t g) {
    uint64_t *w = &fi_par_pool.word[t];
    uint64_t cur = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    for (;;) {
        if ((uint32_t)(cur >> 32) != g) return -1;
        uint32_t next = (uint32_t)(cur >> 16) & 0xffffu, end = (uint32_t)cur & 0xffffu;
        if (next >= end) return -1;
        uint64_t nw = ((uint64_t)g << 32) | ((uint64_t)(next + 1) << 16) | end;
        if (__atomic_compare_exchange_n(w, &cur, nw, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return (int)next;
    }
}

/* Thread `self` of job g: its own range first, then the others'.  The job's fields are
 * read only after a successful claim, which keeps the job open until the task is done. */
static void fi_par_work(int self, uint32_t g, int T) {
    for (int k = 0; k < T; k++) {
        int t = (self + k) % T;
        int i;
        while ((i = fi_par_claim(t, g)) >= 0) {
            fi_par_task_fn fn = fi_par_pool.fn;
            void *ctx = fi_par_pool.ctx;
            int n = fi_par_pool.ntasks;
            fn(ctx, i);
            if (__atomic_add_fetch(&fi_par_pool.done, 1, __ATOMIC_ACQ_REL) == n) {
                /* the job's last task: run the epilogue attached to it (fi_par_attach),
                 * or close the job to attaching; then the job is finished */
                int e = 0;
                if (!__atomic_compare_exchange_n(&fi_par_pool.epi, &e, 2, 0, __ATOMIC_ACQ_REL,
                                                 __ATOMIC_ACQUIRE))
                    fi_par_pool.epi_fn(fi_par_pool.epi_ctx, 0);
                __atomic_store_n(&fi_par_pool.fin, g, __ATOMIC_RELEASE);
            }
        }
    }
}

static void *fi_par_worker(void *arg) {
    int self = (int)(intptr_t)arg;
    uint32_t seen = fi_par_pool.start_gen;      /* written before pthread_create */
    for (;;) {
        uint32_t g = __atomic_load_n(&fi_par_pool.gen, __ATOMIC_ACQUIRE);
        if (g == seen) {
            long t0 = fi_par_now_ns(), spin = fi_par_pool.spin_ns;
            for (unsigned it = 1;; it++) {
                fi_par_relax();
                g = __atomic_load_n(&fi_par_pool.gen, __ATOMIC_ACQUIRE);
                if (g != seen) break;
                if ((it & 63) == 0 && fi_par_now_ns() - t0 > spin) break;
            }
        }
        if (g == seen) {
            pthread_mutex_lock(&fi_par_pool.mu);
            __atomic_fetch_add(&fi_par_pool.sleepers, 1, __ATOMIC_SEQ_CST);
            while ((g = __atomic_load_n(&fi_par_pool.gen, __ATOMIC_SEQ_CST)) == seen)
                pthread_cond_wait(&fi_par_pool.cv, &fi_par_pool.mu);
            __atomic_fetch_sub(&fi_par_pool.sleepers, 1, __ATOMIC_SEQ_CST);
            pthread_mutex_unlock(&fi_par_pool.mu);
        }
        seen = g;
        int T = __atomic_load_n(&fi_par_pool.nthreads, __ATOMIC_ACQUIRE);
        if (self < T) fi_par_work(self, g, T);
    }
    return NULL;
}

static void fi_par_atfork_child(void) {
    /* the child of a fork() has no workers: start fresh ones when needed */
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    fi_par_pool.mu = m;
    fi_par_pool.cv = c;
    fi_par_pool.nworkers = 0;
    fi_par_pool.sleepers = 0;
    fi_par_pool.busy = 0;
    fi_par_pool.epi = 0;
    fi_par_async.open = 0;      /* a parent's asynchronous job is not the child's to wait for */
}

/* Start workers until threads 1..want-1 exist (or creation fails); the count started. */
static int fi_par_start(int want) {
    static int atfork = 0;
    if (!atfork) {
        pthread_atfork(NULL, NULL, fi_par_atfork_child);
        atfork = 1;
        const char *e = getenv("FASTISA_SPIN_US");
        if (e != NULL && *e) fi_par_pool.spin_ns = atol(e) * 1000L;
    }
    fi_par_pool.start_gen = fi_par_pool.gen;
    while (fi_par_pool.nworkers < want - 1) {
        pthread_attr_t attr;
        pthread_t th;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int ok = pthread_create(&th, &attr, fi_par_worker,
                                (void *)(intptr_t)(fi_par_pool.nworkers + 1)) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) break;
        fi_par_pool.nworkers++;
    }
    return fi_par_pool.nworkers + 1;
}

/* Publish a job to the workers: its generation (the pool is then busy), or 0 when it was
 * run serially here instead (one thread, too many tasks, or the pool busy). */
static uint32_t fi_par_publish(int nthreads, int ntasks, fi_par_task_fn fn, void *ctx,
                               int *Tout) {
    int expect = 0;
    if (nthreads > FI_PAR_MAX) nthreads = FI_PAR_MAX;
    if (nthreads > ntasks) nthreads = ntasks;
    if (ntasks > FI_PAR_MAX_TASKS || nthreads <= 1 ||
        !__atomic_compare_exchange_n(&fi_par_pool.busy, &expect, 1, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED)) {
        for (int i = 0; i < ntasks; i++) fn(ctx, i);
        __atomic_fetch_add(&fi_par_pool.serial_jobs, 1, __ATOMIC_RELAXED);
        return 0;
    }
    int have = fi_par_start(nthreads);
    int T = nthreads < have ? nthreads : have;
    uint32_t g = __atomic_load_n(&fi_par_pool.gen, __ATOMIC_RELAXED) + 1;
    if (g == 0) g = 1;
    fi_par_pool.fn = fn;
    fi_par_pool.ctx = ctx;
    fi_par_pool.ntasks = ntasks;
    __atomic_store_n(&fi_par_pool.done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fi_par_pool.epi, 0, __ATOMIC_RELAXED);
    for (int t = 0; t < T; t++) {
        uint64_t lo = (uint64_t)((long)ntasks * t / T), hi = (uint64_t)((long)ntasks * (t + 1) / T);
        __atomic_store_n(&fi_par_pool.word[t], ((uint64_t)g << 32) | (lo << 16) | hi,
                         __ATOMIC_RELEASE);
    }
    __atomic_store_n(&fi_par_pool.nthreads, T, __ATOMIC_RELEASE);
    __atomic_store_n(&fi_par_pool.gen, g, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&fi_par_pool.sleepers, __ATOMIC_SEQ_CST) > 0) {
        pthread_mutex_lock(&fi_par_pool.mu);
        pthread_cond_broadcast(&fi_par_pool.cv);
        pthread_mutex_unlock(&fi_par_pool.mu);
    }
    *Tout = T;
    return g;
}

/* The publisher's part of job g: run unclaimed tasks, wait for the others (and the
 * epilogue: the thread of the last task sets fin after it), free the pool. */
static void fi_par_finish(uint32_t g, int T, int ntasks) {
    (void)ntasks;
    fi_par_work(0, g, T);
    for (unsigned it = 1; __atomic_load_n(&fi_par_pool.fin, __ATOMIC_ACQUIRE) != g; it++) {
        fi_par_relax();
        if ((it & 1023) == 0) sched_yield();    /* a worker holding a task was preempted */
    }
    fi_par_pool.jobs++;
    __atomic_store_n(&fi_par_pool.busy, 0, __ATOMIC_RELEASE);
}

static void fi_par_run(int nthreads, int ntasks, fi_par_task_fn fn, void *ctx) {
    int T = 0;
    uint32_t g = fi_par_publish(nthreads, ntasks, fn, ctx, &T);
    if (g != 0) fi_par_finish(g, T, ntasks);
}

/* An asynchronous job (nc_matmul's overlap with the caller's Python, issue 15): the
 * workers start it and fi_par_submit returns at once (1), or it ran serially here (0: one
 * thread, or the pool busy).  The pool stays busy -- every other job meanwhile runs
 * serially -- until fi_par_join, where the caller runs the tasks no worker has claimed
 * and waits for the rest.  The caller keeps fn's context and everything the tasks touch
 * alive, unread and unwritten, until it has joined (callers join under one lock: the
 * GIL). */

static int fi_par_submit(int nthreads, int ntasks, fi_par_task_fn fn, void *ctx) {
    int T = 0;
    uint32_t g = fi_par_publish(nthreads, ntasks, fn, ctx, &T);
    if (g == 0) return 0;
    fi_par_async.g = g;
    fi_par_async.T = T;
    fi_par_async.ntasks = ntasks;
    fi_par_async.open = 1;
    return 1;
}

static void fi_par_join(void) {
    if (!fi_par_async.open) return;
    fi_par_async.open = 0;
    fi_par_finish(fi_par_async.g, fi_par_async.T, fi_par_async.ntasks);
}

/* Attach fn(ctx, 0) to the open asynchronous job: the thread that finishes the job's last
 * task runs it, before fi_par_join returns (the caller keeps ctx and what it touches alive
 * until then).  1: attached.  0: not attached -- no job is open, the job already has an
 * epilogue, or every task has already returned (the caller joins, then runs fn itself). */
static int fi_par_attach(fi_par_task_fn fn, void *ctx) {
    if (!fi_par_async.open) return 0;
    if (__atomic_load_n(&fi_par_pool.epi, __ATOMIC_ACQUIRE) != 0) return 0;
    fi_par_pool.epi_fn = fn;        /* published by the compare-and-swap below */
    fi_par_pool.epi_ctx = ctx;
    int e = 0;
    return __atomic_compare_exchange_n(&fi_par_pool.epi, &e, 1, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}
#else
static void fi_par_run(int nthreads, int ntasks, fi_par_task_fn fn, void *ctx) {
    (void)nthreads;
    for (int i = 0; i < ntasks; i++) fn(ctx, i);
}
static int fi_par_submit(int nthreads, int ntasks, fi_par_task_fn fn, void *ctx) {
    fi_par_run(nthreads, ntasks, fn, ctx);
    return 0;
}
static void fi_par_join(void) {}
static int fi_par_attach(fi_par_task_fn fn, void *ctx) {
    (void)fn; (void)ctx;
    return 0;
}
#endif /* FI_PAR_THREADS */
#endif /* FI_PAR_IMPL */

#endif /* FASTISA_PAR_H */
