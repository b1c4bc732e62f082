#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer; Swift cannot import it.
static inline sqlite3_destructor_type siwa_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

// Memory statistics make every SQLite allocation take one process-wide mutex, which the I/O
// threads' readers then contend on. Must run before SQLite initializes; sqlite3_config is
// variadic, so Swift cannot call it directly.
static inline int siwa_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
