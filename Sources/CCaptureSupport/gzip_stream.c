#ifndef __APPLE__
#define _GNU_SOURCE  // fopencookie is a glibc extension
#endif
#include "CCaptureSupport.h"
#include <zlib.h>
#include <errno.h>

// A stdio stream whose reads come from zlib's gzread: libpcap accepts only a FILE*. glibc
// builds it with fopencookie, macOS (and the BSDs) with funopen; both streams are read-only
// and close the gzFile with them.

// gzread takes an unsigned count and returns int: ask for at most 1 GiB at a time.
static int gz_read_some(void *cookie, char *buffer, size_t size) {
    int n = gzread((gzFile)cookie, buffer, (unsigned)(size > 0x40000000 ? 0x40000000 : size));
    if (n < 0) errno = EIO;
    return n;
}

static int gz_close(void *cookie) {
    return gzclose((gzFile)cookie) == Z_OK ? 0 : EOF;
}

#ifdef __APPLE__

static int gz_funopen_read(void *cookie, char *buffer, int size) {
    return gz_read_some(cookie, buffer, size > 0 ? (size_t)size : 0);
}

static FILE *open_read_stream(gzFile gz) {
    return funopen(gz, gz_funopen_read, NULL, NULL, gz_close);
}

#else

static ssize_t gz_cookie_read(void *cookie, char *buffer, size_t size) {
    int n = gz_read_some(cookie, buffer, size);
    return n < 0 ? -1 : n;
}

static FILE *open_read_stream(gzFile gz) {
    cookie_io_functions_t functions = { gz_cookie_read, NULL, NULL, gz_close };
    return fopencookie(gz, "rb", functions);
}

#endif

FILE *meteraudit_open_gzip_stream(const char *path) {
    gzFile gz = gzopen(path, "rb");
    if (gz == NULL) return NULL;
    gzbuffer(gz, 1 << 18);
    FILE *file = open_read_stream(gz);
    if (file == NULL) gzclose(gz);
    return file;
}
