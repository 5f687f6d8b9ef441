#ifndef TAPKIT_CCOMPRESSION_SHIM_H
#define TAPKIT_CCOMPRESSION_SHIM_H
#include <zlib.h>
#include <brotli/decode.h>
#include <zstd.h>
#endif
