// Inflate micro-benchmark for Scripts/inflate-bench: zlib against ISA-L (igzip) and libdeflate on real HTTP bodies.
// Each body is decoded ROUNDS times; streaming decoders get it in SEGMENT-byte pieces, as TCP delivers a body, into
// a 32 KiB output buffer (what ContentDecoders.swift does). libdeflate only decodes whole buffers, so it gets the
// whole body and an output buffer large enough for it. Prints CPU seconds and decoded MB/s per library and checks
// every library's output against zlib's (byte count and a checksum).
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zlib.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { OUT = 32 * 1024, MAXBODIES = 1024 };
struct body { unsigned char *data; size_t size; int gzip; size_t decoded; unsigned long check; };
static struct body bodies[MAXBODIES];
static int count;
static size_t segment = 1448;

static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static unsigned char out[OUT];
static unsigned long fold(unsigned long sum, const unsigned char *p, size_t n) { return adler32(sum, p, n); }

// zlib, one z_stream per body (inflateInit2/inflateEnd), as the decoder does today.
static size_t zlib_one(struct body *b, unsigned long *check, z_stream *reuse) {
    z_stream local, *s = reuse ? reuse : &local;
    int bits = b->gzip ? 15 + 32 : ((b->data[0] & 0x0f) == 8 && ((b->data[0] << 8 | b->data[1]) % 31) == 0 ? 15 : -15);
    if (reuse) inflateReset2(s, bits);
    else { memset(s, 0, sizeof *s); inflateInit2(s, bits); }
    size_t total = 0;
    for (size_t at = 0; at < b->size; at += segment) {
        size_t n = b->size - at < segment ? b->size - at : segment;
        s->next_in = b->data + at; s->avail_in = n;
        int status;
        do {
            s->next_out = out; s->avail_out = OUT;
            status = inflate(s, Z_NO_FLUSH);
            size_t produced = OUT - s->avail_out;
            total += produced; *check = fold(*check, out, produced);
            if (status == Z_STREAM_END) break;
            if (status != Z_OK && status != Z_BUF_ERROR) { fprintf(stderr, "zlib error %d\n", status); exit(1); }
        } while (s->avail_in > 0 || s->avail_out == 0);
        if (status == Z_STREAM_END) break;
    }
    if (!reuse) inflateEnd(s);
    return total;
}

static size_t isal_one(struct body *b, unsigned long *check, struct inflate_state *s) {
    isal_inflate_init(s);
    if (b->gzip) s->crc_flag = ISAL_GZIP;
    else s->crc_flag = ((b->data[0] & 0x0f) == 8 && ((b->data[0] << 8 | b->data[1]) % 31) == 0) ? ISAL_ZLIB : ISAL_DEFLATE;
    size_t total = 0;
    for (size_t at = 0; at < b->size && s->block_state != ISAL_BLOCK_FINISH; at += segment) {
        size_t n = b->size - at < segment ? b->size - at : segment;
        s->next_in = b->data + at; s->avail_in = n;
        do {
            s->next_out = out; s->avail_out = OUT;
            int status = isal_inflate(s);
            size_t produced = OUT - s->avail_out;
            total += produced; *check = fold(*check, out, produced);
            if (status < 0) { fprintf(stderr, "isa-l error %d\n", status); exit(1); }
        } while (s->block_state != ISAL_BLOCK_FINISH && (s->avail_in > 0 || s->avail_out == 0));
    }
    return total;
}

static unsigned char big[64 << 20];
static size_t deflate_one(struct body *b, unsigned long *check, struct libdeflate_decompressor *d) {
    size_t actual = 0;
    enum libdeflate_result r;
    if (b->gzip) r = libdeflate_gzip_decompress(d, b->data, b->size, big, sizeof big, &actual);
    else if ((b->data[0] & 0x0f) == 8 && ((b->data[0] << 8 | b->data[1]) % 31) == 0)
        r = libdeflate_zlib_decompress(d, b->data, b->size, big, sizeof big, &actual);
    else r = libdeflate_deflate_decompress(d, b->data, b->size, big, sizeof big, &actual);
    if (r != LIBDEFLATE_SUCCESS) { fprintf(stderr, "libdeflate error %d\n", r); exit(1); }
    // Fold in 32 KiB steps as the others do, so the checksum cost is the same.
    for (size_t at = 0; at < actual; at += OUT) *check = fold(*check, big + at, actual - at < OUT ? actual - at : OUT);
    return actual;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: inflate-bench ROUNDS DIR [SEGMENT]\n"); return 2; }
    int rounds = atoi(argv[1]);
    if (argc > 3) segment = strtoul(argv[3], 0, 10);
    DIR *dir = opendir(argv[2]);
    struct dirent *e;
    size_t compressed = 0;
    while ((e = readdir(dir)) && count < MAXBODIES) {
        const char *dot = strrchr(e->d_name, '.');
        if (!dot || (strcmp(dot, ".gzip") && strcmp(dot, ".deflate"))) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[2], e->d_name);
        FILE *f = fopen(path, "rb");
        fseek(f, 0, SEEK_END);
        struct body *b = &bodies[count++];
        b->size = ftell(f); rewind(f);
        b->data = malloc(b->size);
        if (fread(b->data, 1, b->size, f) != b->size) return 1;
        fclose(f);
        b->gzip = !strcmp(dot, ".gzip");
        compressed += b->size;
    }
    closedir(dir);
    size_t decoded = 0;
    for (int i = 0; i < count; i++) {
        bodies[i].check = 1;
        bodies[i].decoded = zlib_one(&bodies[i], &bodies[i].check, NULL);
        decoded += bodies[i].decoded;
    }
    printf("%d bodies, %zu bytes compressed, %zu decoded, %d rounds, %zu-byte segments\n", count, compressed, decoded,
           rounds, segment);
    z_stream reused; memset(&reused, 0, sizeof reused); inflateInit2(&reused, 15 + 32);
    struct inflate_state *isal = malloc(sizeof *isal);
    struct libdeflate_decompressor *ld = libdeflate_alloc_decompressor();
    const char *names[] = {"zlib 1.2.13 (new z_stream per body)", "zlib 1.2.13 (z_stream reused, inflateReset2)",
                           "ISA-L igzip 2.30 (streaming)", "libdeflate 1.14 (whole body only)"};
    for (int lib = 0; lib < 4; lib++) {
        double start = cpu();
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < count; i++) {
                unsigned long check = 1;
                size_t n = lib == 0 ? zlib_one(&bodies[i], &check, NULL)
                         : lib == 1 ? zlib_one(&bodies[i], &check, &reused)
                         : lib == 2 ? isal_one(&bodies[i], &check, isal)
                         : deflate_one(&bodies[i], &check, ld);
                if (n != bodies[i].decoded || check != bodies[i].check) {
                    fprintf(stderr, "%s: body %d differs from zlib's output\n", names[lib], i); return 1;
                }
            }
        }
        double seconds = cpu() - start;
        printf("%-46s %7.3f s CPU  %8.1f MB/s decoded  %7.2f us/body\n", names[lib], seconds,
               decoded * (double)rounds / seconds / 1e6, seconds * 1e6 / ((double)rounds * count));
    }
    return 0;
}
