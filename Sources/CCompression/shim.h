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

// TLS key derivation by libcrypto's own KDFs: TLS13-KDF (HKDF-Expand-Label, RFC 8446 7.1) and TLS1-PRF (RFC 5246
// section 5), each fetched once by the caller (EVP_KDF_fetch); a context per derivation, as they are few.
#include <openssl/core_names.h>
#include <openssl/kdf.h>

/// HKDF-Expand-Label(secret, "tls13 " + label, context, length) with SHA-256 or SHA-384. 1 on success.
static inline int tapkit_tls13_expand_label(EVP_KDF *tls13_kdf, int sha384, const unsigned char *secret,
                                            size_t secret_length, const unsigned char *label, size_t label_length,
                                            const unsigned char *context, size_t context_length,
                                            unsigned char *out, size_t out_length) {
    EVP_KDF_CTX *kdf = tls13_kdf ? EVP_KDF_CTX_new(tls13_kdf) : NULL;
    if (!kdf) return 0;
    int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, sha384 ? "SHA384" : "SHA256", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)secret, secret_length),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PREFIX, "tls13 ", 6),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_LABEL, (void *)label, label_length),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_DATA, (void *)context, context_length),
        OSSL_PARAM_construct_end(),
    };
    int ok = EVP_KDF_derive(kdf, out, out_length, params) == 1;
    EVP_KDF_CTX_free(kdf);
    return ok;
}

/// The TLS 1.2 PRF: P_SHA256 or P_SHA384(secret, label + seed), `out_length` bytes. 1 on success.
static inline int tapkit_tls12_prf(EVP_KDF *prf_kdf, int sha384, const unsigned char *secret, size_t secret_length,
                                   const unsigned char *label, size_t label_length,
                                   const unsigned char *seed, size_t seed_length,
                                   unsigned char *out, size_t out_length) {
    EVP_KDF_CTX *kdf = prf_kdf ? EVP_KDF_CTX_new(prf_kdf) : NULL;
    if (!kdf) return 0;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, sha384 ? "SHA384" : "SHA256", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SECRET, (void *)secret, secret_length),
        // Seeds given in turn are concatenated.
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, (void *)label, label_length),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SEED, (void *)seed, seed_length),
        OSSL_PARAM_construct_end(),
    };
    int ok = EVP_KDF_derive(kdf, out, out_length, params) == 1;
    EVP_KDF_CTX_free(kdf);
    return ok;
}

// HKDF-Extract (RFC 5869 section 2.2) by libcrypto's HKDF in extract-only mode: QUIC's Initial secret.
static inline int tapkit_hkdf_extract(EVP_KDF *hkdf, int sha384, const unsigned char *salt, size_t salt_length,
                                      const unsigned char *key, size_t key_length,
                                      unsigned char *out, size_t out_length) {
    EVP_KDF_CTX *kdf = hkdf ? EVP_KDF_CTX_new(hkdf) : NULL;
    if (!kdf) return 0;
    int mode = EVP_KDF_HKDF_MODE_EXTRACT_ONLY;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, sha384 ? "SHA384" : "SHA256", 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, key_length),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, salt_length),
        OSSL_PARAM_construct_end(),
    };
    int ok = EVP_KDF_derive(kdf, out, out_length, params) == 1;
    EVP_KDF_CTX_free(kdf);
    return ok;
}

// Keys an HMAC context (EVP_MAC "HMAC") with the named digest. 1 on success.
#include <openssl/params.h>
static inline int tapkit_hmac_init(EVP_MAC_CTX *context, const char *digest, const unsigned char *key, size_t key_length) {
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)digest, 0),
        OSSL_PARAM_construct_end(),
    };
    return EVP_MAC_init(context, key, key_length, params);
}
#endif
