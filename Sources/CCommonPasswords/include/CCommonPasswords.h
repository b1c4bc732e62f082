#ifndef C_COMMON_PASSWORDS_H
#define C_COMMON_PASSWORDS_H

#include <stddef.h>

/// The bytes of common-passwords.txt, compiled into the binary: one password a line, each line
/// ending in "\n", most common first. Sets *length to their count. The bytes are constant and
/// live as long as the process.
const unsigned char *_Nonnull siwa_common_passwords(size_t *_Nonnull length);

#endif
