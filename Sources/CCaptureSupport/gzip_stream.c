#define _GNU_SOURCE
#include "CCaptureSupport.h"
#include <zlib.h>
#include <errno.h>

// fopencookie bridges zlib's gzread to a FILE*, which is what libpcap accepts.
static ssize_t gz_cookie_read(void *cookie, char *buffer, size_t size) {
    int n = gzread((gzFile)cookie, buffer, (unsigned)(size > 0x40000000 ? 0x40000000 : size));
    if (n < 0) { errno = EIO; return -1; }
    return n;
}

static int gz_cookie_close(void *cookie) {
    return gzclose((gzFile)cookie) == Z_OK ? 0 : EOF;
}

FILE *meteraudit_open_gzip_stream(const char *path) {
    gzFile gz = gzopen(path, "rb");
    if (gz == NULL) return NULL;
    gzbuffer(gz, 1 << 18);
    cookie_io_functions_t functions = { gz_cookie_read, NULL, NULL, gz_cookie_close };
    FILE *file = fopencookie(gz, "rb", functions);
    if (file == NULL) gzclose(gz);
    return file;
}
