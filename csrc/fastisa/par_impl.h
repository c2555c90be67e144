/* The pool of par.h itself: included only by fastisa._kernels.par (one pool per process). */
#ifndef FASTISA_PAR_IMPL_H
#define FASTISA_PAR_IMPL_H
#define FI_PAR_IMPL 1
#include "par.h"
#endif
