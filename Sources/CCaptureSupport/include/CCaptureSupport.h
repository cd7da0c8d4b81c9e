#ifndef CCAPTURESUPPORT_H
#define CCAPTURESUPPORT_H
#include <stdio.h>

/// Opens `path` for reading as a stdio stream that inflates gzip transparently (plain files
/// pass through unchanged), so libpcap's pcap_fopen_offline can read .pcap.gz without a
/// temporary file. Returns NULL with errno set on failure.
FILE *meteraudit_open_gzip_stream(const char *path);

#endif
