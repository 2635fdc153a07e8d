#ifndef WEFT_CPREFETCH_H
#define WEFT_CPREFETCH_H

/* Asks the processor to bring the cache line holding `address` closer, without waiting for it and
   without faulting on an address that is no longer mapped: Swift has no spelling for this. */
static inline void weft_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}
#endif
