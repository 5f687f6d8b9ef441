#ifndef TAPKIT_CNGHTTP3_SHIM_H
#define TAPKIT_CNGHTTP3_SHIM_H
// nghttp3's QPACK decoder (RFC 9204): HTTP/3 header blocks and the encoder stream's dynamic table. Only the
// HTTP3 module imports it; nghttp3's connection layer is not used (a capture decodes both sides passively).
#include <nghttp3/nghttp3.h>
#endif
