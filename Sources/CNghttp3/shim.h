// nghttp3's QPACK decoder (nghttp3_qpack_decoder_*, nghttp3_qpack_stream_context_*): HTTP/3's
// header compression, read through a well-kept library rather than a coder of our own.
#include <nghttp3/nghttp3.h>
