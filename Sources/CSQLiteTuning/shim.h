#ifndef WEFT_CSQLITETUNING_SHIM_H
#define WEFT_CSQLITETUNING_SHIM_H
#include <sqlite3.h>

/* sqlite3_config is variadic, which Swift cannot call: these wrappers fix its arguments. */

/* Turns off SQLite's memory statistics, which take a global mutex on every allocation and free.
   Effective only before SQLite initializes (the first connection); returns SQLITE_MISUSE after. */
static inline int weft_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
