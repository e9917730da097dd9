// Makes memory ready for stores before a hot path writes it, without changing a byte.
//
// Why: on this kind of virtual machine the first store into a page is dear, and it lands on
// whoever touches the page first -- the event loop copying a journal record, the kernel
// receiving a WRITE into a fresh buffer. MADV_POPULATE_WRITE (Linux 5.14) maps every page
// writable in one call (for a shared file mapping MAP_POPULATE maps them read-only, so each
// first store still took a write-protect fault); even then the first store into each guest
// page costs ~1 us more, so each page also gets one store of the byte it already holds. The
// contents are unchanged, so a crash in the middle leaves file-backed memory as it was.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nasd::util {

void prepare_for_stores(uint8_t* base, size_t size);

}  // namespace nasd::util
