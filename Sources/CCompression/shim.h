#ifndef TAPKIT_CCOMPRESSION_SHIM_H
#define TAPKIT_CCOMPRESSION_SHIM_H
// SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, but they run the same SHA-extension code
// on a plain struct, where EVP allocates a context and a provider context for every digest (see tapkit_sha256_*).
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <zlib.h>
// ISA-L's igzip inflate: gzip and deflate bodies, about twice as fast as zlib here (Scripts/inflate-bench).
#include <isa-l/igzip_lib.h>
#include <brotli/decode.h>
#include <zstd.h>
// SHA-256 of decoded bodies: OpenSSL's libcrypto uses the CPU's SHA extensions where present (sha_ni here).
#include <openssl/evp.h>
#include <openssl/sha.h>

static inline void tapkit_sha256_init(SHA256_CTX *context) { SHA256_Init(context); }
static inline void tapkit_sha256_update(SHA256_CTX *context, const void *bytes, size_t count) {
    SHA256_Update(context, bytes, count);
}
static inline void tapkit_sha256_final(SHA256_CTX *context, unsigned char digest[32]) { SHA256_Final(digest, context); }
#endif
