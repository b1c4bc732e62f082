#include <zlib.h>

// deflateInit2 is a macro (it passes the zlib version and stream size). windowBits 15 + 16
// asks zlib for a gzip wrapper rather than a raw zlib stream.
static inline int siwa_deflate_init_gzip(z_streamp stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

// inflateInit2 likewise; 15 + 32 accepts both gzip and zlib wrappers.
static inline int siwa_inflate_init_auto(z_streamp stream) {
    return inflateInit2(stream, 15 + 32);
}
