/* test_tp_compile.sh: includes tp_nest.h, which must not compile. */
#include "tp_nest.h"
