#include "util/page_prep.h"

#include <sys/mman.h>
#include <unistd.h>

namespace nasd::util {

void prepare_for_stores(uint8_t* base, size_t size) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
#ifdef MADV_POPULATE_WRITE
  (void)madvise(base, size, MADV_POPULATE_WRITE);  // an older kernel: the stores below fault
#endif
  for (size_t off = 0; off < size; off += page) {
    volatile uint8_t* p = base + off;
    *p = *p;
  }
}

}  // namespace nasd::util
