#!/usr/bin/env python3
"""Random test vectors for TLSTests, made at test time by implementations other than the libcrypto the decoder
uses: HKDF-Expand-Label, the TLS 1.2 PRF, HKDF-Extract and HMAC composed here from CPython's own HMAC over its
built-in SHA modules (_sha1, _sha256, _sha512: not OpenSSL); AES-GCM, ChaCha20-Poly1305 and AES-CBC sealed by the
`cryptography` package (its own OpenSSL build, through its own bindings). Prints one JSON document; byte strings
are hex.

  crypto-vectors.py
"""
import hmac
import json
import os
import _sha1
import _sha256
import _sha512

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

HASHES = {"sha1": _sha1.sha1, "sha256": _sha256.sha256, "sha384": _sha512.sha384}


def mac(name, key, data):
    return hmac.HMAC(key, data, digestmod=HASHES[name]).digest()  # a callable digestmod: the pure Python HMAC


def expand(name, prk, info, length):  # RFC 5869 section 2.3
    out, block, counter = b"", b"", 1
    while len(out) < length:
        block = mac(name, prk, block + info + bytes([counter]))
        out += block
        counter += 1
    return out[:length]


def expand_label(name, secret, label, context, length):  # RFC 8446 section 7.1
    full = b"tls13 " + label
    info = length.to_bytes(2, "big") + bytes([len(full)]) + full + bytes([len(context)]) + context
    return expand(name, secret, info, length)


def p_hash(name, secret, seed, length):  # RFC 5246 section 5
    out, a = b"", mac(name, secret, seed)
    while len(out) < length:
        out += mac(name, secret, a + seed)
        a = mac(name, secret, a)
    return out[:length]


def main():
    r = os.urandom
    doc = {"expandLabel": [], "prf12": [], "extract": [], "hmac": [], "aead": [], "cbc": []}
    for name in ["sha256", "sha384"]:
        for secret_length in [1, 2, 31, 32, 48, 64, 200]:
            for label, context, length in [(b"key", b"", 16), (b"iv", b"", 12),
                                           (b"traffic upd", b"", 48 if name == "sha384" else 32),
                                           (b"finished", r(32), 32), (b"key", b"", 32), (b"quic hp", b"", 16)]:
                secret = r(secret_length)
                doc["expandLabel"].append({"sha384": name == "sha384", "secret": secret.hex(), "label": label.decode(),
                                           "context": context.hex(), "length": length,
                                           "out": expand_label(name, secret, label, context, length).hex()})
        for length in [1, 40, 72, 104, 136]:
            secret, seed = r(48), r(64)
            doc["prf12"].append({"sha384": name == "sha384", "secret": secret.hex(), "label": "key expansion",
                                 "seed": seed.hex(), "length": length,
                                 "out": p_hash(name, secret, b"key expansion" + seed, length).hex()})
        for salt_length, key_length in [(20, 8), (20, 0), (20, 20), (0, 16), (64, 1)]:
            salt, key = r(salt_length), r(key_length)
            doc["extract"].append({"sha384": name == "sha384", "salt": salt.hex(), "key": key.hex(),
                                   "out": mac(name, salt or bytes(48 if name == "sha384" else 32), key).hex()})
    for name in ["sha1", "sha256", "sha384"]:
        for key_length, first, second in [(20, 13, 0), (32, 13, 1), (48, 13, 1000), (20, 0, 16384), (64, 13, 17)]:
            key, a, b = r(key_length), r(first), r(second)
            doc["hmac"].append({"hash": name, "key": key.hex(), "first": a.hex(), "second": b.hex(),
                                "out": mac(name, key, a + b).hex()})
    for algorithm, key_length in [("aes128gcm", 16), ("aes256gcm", 32), ("chacha20poly1305", 32)]:
        for length in [0, 1, 15, 16, 17, 1000, 16384]:
            key, nonce, aad, plaintext = r(key_length), r(12), r(13), r(length)
            aead = ChaCha20Poly1305(key) if algorithm == "chacha20poly1305" else AESGCM(key)
            sealed = aead.encrypt(nonce, plaintext, aad)
            doc["aead"].append({"algorithm": algorithm, "key": key.hex(), "nonce": nonce.hex(), "aad": aad.hex(),
                                "plaintext": plaintext.hex(), "ciphertext": sealed[:-16].hex(), "tag": sealed[-16:].hex()})
    for key_length in [16, 32]:
        for blocks in [1, 2, 64, 1025]:
            key, iv, plaintext = r(key_length), r(16), r(16 * blocks)
            encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
            doc["cbc"].append({"key": key.hex(), "iv": iv.hex(), "plaintext": plaintext.hex(),
                               "ciphertext": (encryptor.update(plaintext) + encryptor.finalize()).hex()})
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
