# cython: language_level=3
"""fastisa's worker threads (csrc/fastisa/par.h): one persistent pool per process, shared
by every kernel module.  Workers spin for ``FASTISA_SPIN_US`` microseconds (default 300)
after each job, then sleep; the thread that submits a job is one of its threads.  The
kernel modules take the pool's entry point from :data:`_run` (a capsule) when imported.
Results never depend on the pool: each kernel gives every task disjoint outputs and the
same per-element order of operations, whichever thread runs it."""
from libc.stdint cimport uint64_t
from cpython.pycapsule cimport PyCapsule_New

cdef extern from "par_impl.h" nogil:
    ctypedef void (*fi_par_task_fn)(void *ctx, int task) noexcept nogil
    void fi_par_run(int nthreads, int ntasks, fi_par_task_fn fn, void *ctx)
    int fi_par_submit(int nthreads, int ntasks, fi_par_task_fn fn, void *ctx)
    void fi_par_join()
    int fi_par_attach(fi_par_task_fn fn, void *ctx)

cdef extern from *:
    """
    #ifdef FI_PAR_THREADS
    static long fi_par_get_spin_ns(void) { return fi_par_pool.spin_ns; }
    static void fi_par_set_spin_ns(long ns) { fi_par_pool.spin_ns = ns; }
    static int fi_par_workers(void) { return fi_par_pool.nworkers; }
    static uint64_t fi_par_jobs(void) { return fi_par_pool.jobs; }
    static uint64_t fi_par_serial_jobs(void) { return fi_par_pool.serial_jobs; }
    #else
    static long fi_par_get_spin_ns(void) { return 0; }
    static void fi_par_set_spin_ns(long ns) { (void)ns; }
    static int fi_par_workers(void) { return 0; }
    static uint64_t fi_par_jobs(void) { return 0; }
    static uint64_t fi_par_serial_jobs(void) { return 0; }
    #endif
    """
    long fi_par_get_spin_ns()
    void fi_par_set_spin_ns(long ns)
    int fi_par_workers()
    uint64_t fi_par_jobs()
    uint64_t fi_par_serial_jobs()

#: the pool's entry point, for the other kernel modules' fi_par_install
_run = PyCapsule_New(<void *>fi_par_run, b"fastisa.par.run", NULL)
#: the asynchronous entry points (par.h fi_par_submit / fi_par_join / fi_par_attach)
_submit = PyCapsule_New(<void *>fi_par_submit, b"fastisa.par.submit", NULL)
_join = PyCapsule_New(<void *>fi_par_join, b"fastisa.par.join", NULL)
#: an epilogue for the open asynchronous job (par.h fi_par_attach)
_attach = PyCapsule_New(<void *>fi_par_attach, b"fastisa.par.attach", NULL)


def spin_us():
    """How long (microseconds) an idle worker spins before it sleeps."""
    return fi_par_get_spin_ns() // 1000


def set_spin_us(long us):
    """Set how long an idle worker spins before it sleeps (0: sleep at once)."""
    if us < 0:
        raise ValueError(f"set_spin_us: us must be >= 0, got {us}")
    fi_par_set_spin_ns(us * 1000)


def stats():
    """{'workers': started worker threads, 'jobs': jobs run on several threads,
    'serial_jobs': jobs run by the caller alone (pool busy or one thread)}."""
    return {"workers": fi_par_workers(), "jobs": fi_par_jobs(),
            "serial_jobs": fi_par_serial_jobs()}


cdef extern from * nogil:
    """
    typedef struct { int *count; int spin; } fi_par_check_t;
    static void fi_par_check_task(void *ctx, int t) {
        fi_par_check_t *c = (fi_par_check_t *)ctx;
        volatile int x = 0;
        for (int i = 0; i < c->spin; i++) x += i;    /* uneven work: some tasks are stolen */
        (void)x;
        __atomic_fetch_add(&c->count[t], 1, __ATOMIC_RELAXED);
    }
    static void fi_par_check(int nthreads, int ntasks, int reps, int *count) {
        for (int r = 0; r < reps; r++) {
            fi_par_check_t c = {count, (r * 7919) % 2000};
            fi_par_run(nthreads, ntasks, fi_par_check_task, &c);
        }
    }
    """
    void fi_par_check(int nthreads, int ntasks, int reps, int *count)


def check_once(int nthreads, int ntasks, int reps=1):
    """Run ``reps`` jobs of ``ntasks`` tasks on ``nthreads`` threads, each task adding 1 to
    its own counter: the counters (each should be ``reps``: every task run exactly once
    per job).  For the tests."""
    if not 1 <= ntasks <= 65535 or nthreads < 1 or reps < 0:
        raise ValueError("check_once: 1 <= ntasks <= 65535, nthreads >= 1, reps >= 0")
    cdef int[::1] count = memoryview(bytearray(4 * ntasks)).cast("i")
    with nogil:
        fi_par_check(nthreads, ntasks, reps, &count[0])
    return list(count)
