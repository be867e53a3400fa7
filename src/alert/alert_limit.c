/* The count limit on alerts (alert_limit.h). */
#include "alert/alert_limit.h"

bool alert_limit__admit(alert_limit_t* limit, uint64_t now_ns) {
  uint64_t window = now_ns / ALERT_LIMIT_WINDOW_NS;
  uint64_t old = __atomic_load_n(&limit->word, __ATOMIC_RELAXED);
  for (;;) {
    uint64_t count = (old >> 8) == window ? (old & 0xff) : 0;
    if (count >= ALERT_LIMIT_PER_WINDOW) return false;
    uint64_t next = window << 8 | (count + 1);
    if (__atomic_compare_exchange_n(&limit->word, &old, next, true, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      return true;
  }
}

void alert_limit__reset(alert_limit_t* limit) {
  __atomic_store_n(&limit->word, 0, __ATOMIC_RELAXED);
}
