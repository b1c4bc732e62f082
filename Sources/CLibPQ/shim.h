// Debian puts libpq's headers in /usr/include/postgresql; pkg-config (`libpq`) adds that folder
// to the include path, so the plain name is found there.
#include <libpq-fe.h>
