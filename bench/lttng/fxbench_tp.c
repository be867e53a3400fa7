/* Instantiates the probes of the fxbench provider (fxbench_tp.h), linked
 * statically into bench_lttng. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "fxbench_tp.h"
