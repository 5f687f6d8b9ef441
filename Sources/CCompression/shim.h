#ifndef TAPKIT_CCOMPRESSION_SHIM_H
#define TAPKIT_CCOMPRESSION_SHIM_H
#include <zlib.h>
#include <brotli/decode.h>
#include <zstd.h>
// SHA-256 of decoded bodies: OpenSSL's libcrypto uses the CPU's SHA extensions where present.
#include <openssl/evp.h>
#endif
