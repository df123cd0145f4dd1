/*
 * Tests libaesx from C: the SuiteB_FFI symbols against NIST vectors (ECB KAT, AESAVS ECB Monte
 * Carlo 100 x 1000) and FIPS-197 appendix A key schedules, and the aesx_* API (ECB, CBC,
 * streaming CTR, backend forcing, AES-GCM on the NIST GCM vectors one-shot and streamed, every
 * bad-input status).
 *
 * Usage: capi_test TESTDATA_AES_DIR [--mct-all-backends] [--quick]
 * Exit status 0 and a final "ALL OK" line on success. Run by tests/c_api.rs.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aesx.h"

static int failures = 0;
static long checks = 0;

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    if (++failures > 20) {
        fprintf(stderr, "too many failures\n");
        exit(1);
    }
}

#define CHECK(cond, ...)          \
    do {                          \
        checks++;                 \
        if (!(cond)) fail(__VA_ARGS__); \
    } while (0)

#define CHECK_STATUS(call, want)                                                        \
    do {                                                                                \
        aesx_status got_ = (call);                                                      \
        checks++;                                                                       \
        if (got_ != (want))                                                             \
            fail("%s:%d: %s returned %d (%s), want %s", __FILE__, __LINE__, #call,      \
                 (int)got_, aesx_status_str((int)got_), #want);                         \
    } while (0)

static void hex_to(const char *hex, uint8_t *out, size_t *len, size_t cap) {
    size_t n = 0;
    while (hex[0] && hex[1] && hex[0] != '\r' && hex[0] != '\n') {
        unsigned v;
        if (n >= cap || sscanf(hex, "%2x", &v) != 1) {
            fprintf(stderr, "bad hex: %s\n", hex);
            exit(2);
        }
        out[n++] = (uint8_t)v;
        hex += 2;
    }
    *len = n;
}

static const char *hex(const uint8_t *b, size_t n) {
    static char buf[4][300];
    static int which = 0;
    char *s = buf[which++ & 3];
    for (size_t i = 0; i < n && i < 140; i++) sprintf(s + 2 * i, "%02x", b[i]);
    return s;
}

/* ------------------------------------------------------------------------------------------ */
/* NIST .rsp records                                                                           */

typedef struct {
    int decrypt; /* from a [DECRYPT] section */
    int count;
    uint8_t key[32], iv[16], pt[64], ct[64];
    size_t key_len, iv_len, pt_len, ct_len;
} record;

typedef struct {
    record *r;
    size_t n;
} records;

static records load(const char *dir, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    records rs = {0};
    size_t cap = 0;
    record cur;
    memset(&cur, 0, sizeof cur);
    int have = 0, decrypt = 0;
    char line[1024];
    for (;;) {
        char *l = fgets(line, sizeof line, f);
        int blank = !l || l[0] == '\r' || l[0] == '\n';
        if ((blank || (l && strncmp(l, "COUNT", 5) == 0)) && have) {
            if (rs.n == cap) {
                cap = cap ? 2 * cap : 64;
                rs.r = realloc(rs.r, cap * sizeof *rs.r);
            }
            rs.r[rs.n++] = cur;
            memset(&cur, 0, sizeof cur);
            have = 0;
        }
        if (!l) break;
        if (strncmp(l, "[ENCRYPT]", 9) == 0) decrypt = 0;
        if (strncmp(l, "[DECRYPT]", 9) == 0) decrypt = 1;
        char *eq = strstr(l, " = ");
        if (!eq || l[0] == '#') continue;
        const char *v = eq + 3;
        cur.decrypt = decrypt;
        if (strncmp(l, "COUNT", 5) == 0) {
            cur.count = atoi(v);
            have = 1;
        } else if (strncmp(l, "KEY", 3) == 0) {
            hex_to(v, cur.key, &cur.key_len, sizeof cur.key);
        } else if (strncmp(l, "IV", 2) == 0) {
            hex_to(v, cur.iv, &cur.iv_len, sizeof cur.iv);
        } else if (strncmp(l, "PLAINTEXT", 9) == 0) {
            hex_to(v, cur.pt, &cur.pt_len, sizeof cur.pt);
        } else if (strncmp(l, "CIPHERTEXT", 10) == 0) {
            hex_to(v, cur.ct, &cur.ct_len, sizeof cur.ct);
        }
    }
    fclose(f);
    if (rs.n == 0) {
        fprintf(stderr, "no records in %s\n", path);
        exit(2);
    }
    return rs;
}

/* ------------------------------------------------------------------------------------------ */
/* SuiteB_FFI helpers                                                                          */

/* One schedule in SuiteB layout: initial (4 words), middle (4 * (k + 5)), final (4). */
typedef struct {
    uint32_t init[4], mid[4 * 13], fin[4];
} sched;

static void expand_enc(size_t k, const uint8_t *key, sched *s) {
    if (k == 4) aesniExpandEncrypt128(key, s->init, s->mid, s->fin);
    if (k == 6) aesniExpandEncrypt192(key, s->init, s->mid, s->fin);
    if (k == 8) aesniExpandEncrypt256(key, s->init, s->mid, s->fin);
}

static void expand_dec(size_t k, const uint8_t *key, sched *s) {
    if (k == 4) aesniExpandDecrypt128(key, s->init, s->mid, s->fin);
    if (k == 6) aesniExpandDecrypt192(key, s->init, s->mid, s->fin);
    if (k == 8) aesniExpandDecrypt256(key, s->init, s->mid, s->fin);
}

static void expand_both(size_t k, const uint8_t *key, sched *e, sched *d) {
    if (k == 4) aesniExpandEncryptDecrypt128(key, e->init, e->mid, e->fin, d->init, d->mid, d->fin);
    if (k == 6) aesniExpandEncryptDecrypt192(key, e->init, e->mid, e->fin, d->init, d->mid, d->fin);
    if (k == 8) aesniExpandEncryptDecrypt256(key, e->init, e->mid, e->fin, d->init, d->mid, d->fin);
}

/* Word i (0 .. 4 * (rounds + 1)) of a schedule. */
static uint32_t word(const sched *s, size_t k, size_t i) {
    size_t rounds = k + 6;
    if (i < 4) return s->init[i];
    if (i >= 4 * rounds) return s->fin[i - 4 * rounds];
    return s->mid[i - 4];
}

/* An independent InvMixColumns on one round-key word (GF(2^8) multiply by 0e 0b 0d 09). */
static uint8_t gmul(uint8_t a, uint8_t b) {
    uint8_t p = 0;
    while (b) {
        if (b & 1) p ^= a;
        a = (uint8_t)((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
        b >>= 1;
    }
    return p;
}

static uint32_t inv_mix_word(uint32_t w) {
    uint8_t a[4] = {(uint8_t)(w >> 24), (uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w};
    static const uint8_t m[4] = {0x0e, 0x0b, 0x0d, 0x09};
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t x = 0;
        for (int j = 0; j < 4; j++) x ^= gmul(a[j], m[(j - i + 4) % 4]);
        r = (r << 8) | x;
    }
    return r;
}

/* ------------------------------------------------------------------------------------------ */
/* FIPS-197 appendix A: key expansion examples (w[0] .. w[4 * (rounds + 1) - 1]).               */

static const uint32_t A1[44] = {
    0x2b7e1516, 0x28aed2a6, 0xabf71588, 0x09cf4f3c, 0xa0fafe17, 0x88542cb1, 0x23a33939, 0x2a6c7605,
    0xf2c295f2, 0x7a96b943, 0x5935807a, 0x7359f67f, 0x3d80477d, 0x4716fe3e, 0x1e237e44, 0x6d7a883b,
    0xef44a541, 0xa8525b7f, 0xb671253b, 0xdb0bad00, 0xd4d1c6f8, 0x7c839d87, 0xcaf2b8bc, 0x11f915bc,
    0x6d88a37a, 0x110b3efd, 0xdbf98641, 0xca0093fd, 0x4e54f70e, 0x5f5fc9f3, 0x84a64fb2, 0x4ea6dc4f,
    0xead27321, 0xb58dbad2, 0x312bf560, 0x7f8d292f, 0xac7766f3, 0x19fadc21, 0x28d12941, 0x575c006e,
    0xd014f9a8, 0xc9ee2589, 0xe13f0cc8, 0xb6630ca6};
static const uint32_t A2[52] = {
    0x8e73b0f7, 0xda0e6452, 0xc810f32b, 0x809079e5, 0x62f8ead2, 0x522c6b7b, 0xfe0c91f7, 0x2402f5a5,
    0xec12068e, 0x6c827f6b, 0x0e7a95b9, 0x5c56fec2, 0x4db7b4bd, 0x69b54118, 0x85a74796, 0xe92538fd,
    0xe75fad44, 0xbb095386, 0x485af057, 0x21efb14f, 0xa448f6d9, 0x4d6dce24, 0xaa326360, 0x113b30e6,
    0xa25e7ed5, 0x83b1cf9a, 0x27f93943, 0x6a94f767, 0xc0a69407, 0xd19da4e1, 0xec1786eb, 0x6fa64971,
    0x485f7032, 0x22cb8755, 0xe26d1352, 0x33f0b7b3, 0x40beeb28, 0x2f18a259, 0x6747d26b, 0x458c553e,
    0xa7e1466c, 0x9411f1df, 0x821f750a, 0xad07d753, 0xca400538, 0x8fcc5006, 0x282d166a, 0xbc3ce7b5,
    0xe98ba06f, 0x448c773c, 0x8ecc7204, 0x01002202};
static const uint32_t A3[60] = {
    0x603deb10, 0x15ca71be, 0x2b73aef0, 0x857d7781, 0x1f352c07, 0x3b6108d7, 0x2d9810a3, 0x0914dff4,
    0x9ba35411, 0x8e6925af, 0xa51a8b5f, 0x2067fcde, 0xa8b09c1a, 0x93d194cd, 0xbe49846e, 0xb75d5b9a,
    0xd59aecb8, 0x5bf3c917, 0xfee94248, 0xde8ebe96, 0xb5a9328a, 0x2678a647, 0x98312229, 0x2f6c79b3,
    0x812c81ad, 0xdadf48ba, 0x24360af2, 0xfab8b464, 0x98c5bfc9, 0xbebd198e, 0x268c3ba7, 0x09e04214,
    0x68007bac, 0xb2df3316, 0x96e939e4, 0x6c518d80, 0xc814e204, 0x76a9fb8a, 0x5025c02d, 0x59c58239,
    0xde136967, 0x6ccc5a71, 0xfa256395, 0x9674ee15, 0x5886ca5d, 0x2e2f31d7, 0x7e0af1fa, 0x27cf73c3,
    0x749c47ab, 0x18501dda, 0xe2757e4f, 0x7401905a, 0xcafaaae3, 0xe4d59b34, 0x9adf6ace, 0xbd10190d,
    0xfe4890d1, 0xe6188d0b, 0x046df344, 0x706c631e};

static void test_fips197_schedules(void) {
    const uint32_t *want[3] = {A1, A2, A3};
    for (int v = 0; v < 3; v++) {
        size_t k = 4 + 2 * (size_t)v, rounds = k + 6, nw = 4 * (rounds + 1);
        uint8_t key[32];
        for (size_t i = 0; i < 4 * k; i++) key[i] = (uint8_t)(want[v][i / 4] >> (24 - 8 * (i % 4)));
        sched e, d, e2, d2;
        memset(&e, 0xee, sizeof e);
        expand_enc(k, key, &e);
        for (size_t i = 0; i < nw; i++)
            CHECK(word(&e, k, i) == want[v][i], "FIPS-197 A.%d w[%zu] = %08x, want %08x", v + 1, i,
                  word(&e, k, i), want[v][i]);
        /* Nothing past the end of the middle array was written. */
        for (size_t i = 4 * (rounds - 1); i < 4 * 13; i++)
            CHECK(e.mid[i] == 0xeeeeeeee, "A.%d: wrote past roundKeys", v + 1);
        /* Decrypt schedule: equivalent inverse cipher, checked with an independent InvMixColumns. */
        expand_dec(k, key, &d);
        for (size_t r = 0; r <= rounds; r++)
            for (size_t j = 0; j < 4; j++) {
                uint32_t src = want[v][4 * (rounds - r) + j];
                uint32_t exp = (r == 0 || r == rounds) ? src : inv_mix_word(src);
                CHECK(word(&d, k, 4 * r + j) == exp, "A.%d dec round %zu word %zu", v + 1, r, j);
            }
        expand_both(k, key, &e2, &d2);
        for (size_t i = 0; i < nw; i++) {
            CHECK(word(&e2, k, i) == word(&e, k, i), "ExpandEncryptDecrypt enc differs");
            CHECK(word(&d2, k, i) == word(&d, k, i), "ExpandEncryptDecrypt dec differs");
        }
    }
    /* FIPS-197 appendix C: the example block under the three example keys. */
    static const char *c_ct[3] = {"69c4e0d86a7b0430d8cdb78070b4c55a",
                                  "dda97ca4864cdfe06eaf70a0ec0d7191",
                                  "8ea2b7ca516745bfeafc49904b496089"};
    uint8_t key[32], pt[16], ct[16], want_ct[16];
    size_t n;
    for (int i = 0; i < 32; i++) key[i] = (uint8_t)i;
    hex_to("00112233445566778899aabbccddeeff", pt, &n, 16);
    for (int v = 0; v < 3; v++) {
        size_t k = 4 + 2 * (size_t)v;
        sched e, d;
        expand_both(k, key, &e, &d);
        hex_to(c_ct[v], want_ct, &n, 16);
        aesniEncryptBlock(k, e.init, e.mid, e.fin, pt, ct);
        CHECK(memcmp(ct, want_ct, 16) == 0, "FIPS-197 C.%d encrypt: %s", v + 1, hex(ct, 16));
        aesniDecryptBlock(k, d.init, d.mid, d.fin, ct, ct); /* in place */
        CHECK(memcmp(ct, pt, 16) == 0, "FIPS-197 C.%d decrypt", v + 1);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* ECB known-answer tests through SuiteB_FFI                                                   */

static long test_kat_file(const char *dir, const char *name) {
    records rs = load(dir, name);
    long n = 0;
    for (size_t i = 0; i < rs.n; i++) {
        const record *r = &rs.r[i];
        size_t k = r->key_len / 4;
        sched e, d;
        uint8_t out[16], out2[16];
        if (!r->decrypt) {
            expand_enc(k, r->key, &e);
            aesniEncryptBlock(k, e.init, e.mid, e.fin, r->pt, out);
            CHECK(memcmp(out, r->ct, 16) == 0, "%s enc #%d: got %s want %s", name, r->count,
                  hex(out, 16), hex(r->ct, 16));
            aesniEncryptBlocks(k, 1, e.init, e.mid, e.fin, r->pt, out2);
            CHECK(memcmp(out2, r->ct, 16) == 0, "%s bulk enc #%d", name, r->count);
        } else {
            expand_dec(k, r->key, &d);
            aesniDecryptBlock(k, d.init, d.mid, d.fin, r->ct, out);
            CHECK(memcmp(out, r->pt, 16) == 0, "%s dec #%d: got %s want %s", name, r->count,
                  hex(out, 16), hex(r->pt, 16));
            aesniDecryptBlocks(k, 1, d.init, d.mid, d.fin, r->ct, out2);
            CHECK(memcmp(out2, r->pt, 16) == 0, "%s bulk dec #%d", name, r->count);
        }
        n++;
    }
    /* Runs of records with one key (GFSbox, VarTxt): all of them in one bulk call, in place. */
    for (size_t i = 0; i < rs.n;) {
        size_t j = i;
        while (j < rs.n && rs.r[j].decrypt == rs.r[i].decrypt && rs.r[j].key_len == rs.r[i].key_len &&
               memcmp(rs.r[j].key, rs.r[i].key, rs.r[i].key_len) == 0)
            j++;
        size_t m = j - i, k = rs.r[i].key_len / 4;
        if (m > 1) {
            uint8_t *buf = malloc(16 * m);
            sched s;
            int dec = rs.r[i].decrypt;
            for (size_t t = 0; t < m; t++) memcpy(buf + 16 * t, dec ? rs.r[i + t].ct : rs.r[i + t].pt, 16);
            if (dec) {
                expand_dec(k, rs.r[i].key, &s);
                aesniDecryptBlocks(k, m, s.init, s.mid, s.fin, buf, buf);
            } else {
                expand_enc(k, rs.r[i].key, &s);
                aesniEncryptBlocks(k, m, s.init, s.mid, s.fin, buf, buf);
            }
            for (size_t t = 0; t < m; t++)
                CHECK(memcmp(buf + 16 * t, dec ? rs.r[i + t].pt : rs.r[i + t].ct, 16) == 0,
                      "%s bulk run of %zu, record %zu", name, m, t);
            free(buf);
        }
        i = j;
    }
    free(rs.r);
    return n;
}

/* ------------------------------------------------------------------------------------------ */
/* AESAVS ECB Monte Carlo (s. 6.4): 100 records x 1000 chained calls, key update checked.      */

static long test_mct_file(const char *dir, const char *name) {
    records rs = load(dir, name);
    long n = 0;
    for (size_t i = 0; i < rs.n; i++) {
        const record *r = &rs.r[i];
        size_t k = r->key_len / 4, kb = r->key_len;
        sched s;
        uint8_t x[16], prev[16];
        memcpy(x, r->decrypt ? r->ct : r->pt, 16);
        if (r->decrypt)
            expand_dec(k, r->key, &s);
        else
            expand_enc(k, r->key, &s);
        for (int j = 0; j < 1000; j++) {
            memcpy(prev, x, 16);
            if (r->decrypt)
                aesniDecryptBlock(k, s.init, s.mid, s.fin, x, x);
            else
                aesniEncryptBlock(k, s.init, s.mid, s.fin, x, x);
        }
        const uint8_t *want = r->decrypt ? r->pt : r->ct;
        CHECK(memcmp(x, want, 16) == 0, "%s %s #%d: got %s want %s", name,
              r->decrypt ? "dec" : "enc", r->count, hex(x, 16), hex(want, 16));
        /* The next record's key and input follow from this one (AESAVS key update). */
        if (i + 1 < rs.n && rs.r[i + 1].decrypt == r->decrypt) {
            uint8_t key[32], last2[32];
            memcpy(last2, prev, 16);
            memcpy(last2 + 16, x, 16);
            for (size_t b = 0; b < kb; b++) key[b] = r->key[b] ^ last2[32 - kb + b];
            const record *nx = &rs.r[i + 1];
            CHECK(memcmp(key, nx->key, kb) == 0, "%s #%d: next key", name, r->count);
            CHECK(memcmp(x, r->decrypt ? nx->ct : nx->pt, 16) == 0, "%s #%d: next input", name,
                  r->count);
        }
        n++;
    }
    free(rs.r);
    return n;
}

/* ------------------------------------------------------------------------------------------ */
/* SuiteB_FFI bad input: no-ops, never crashes.                                                */

static void test_suiteb_bad_input(void) {
    uint8_t key[32] = {1, 2, 3}, pt[64] = {0}, ct[64];
    sched e, s;
    expand_enc(4, key, &e);
    memset(&s, 0x5a, sizeof s);
    aesniExpandEncrypt128(NULL, s.init, s.mid, s.fin);
    aesniExpandEncrypt256(key, NULL, s.mid, s.fin);
    aesniExpandDecrypt192(key, s.init, NULL, s.fin);
    aesniExpandEncryptDecrypt128(key, s.init, s.mid, s.fin, s.init, s.mid, NULL);
    for (size_t i = 0; i < 4; i++) CHECK(s.init[i] == 0x5a5a5a5a && s.fin[i] == 0x5a5a5a5a, "expand with NULL wrote");
    CHECK(s.mid[0] == 0x5a5a5a5a, "expand with NULL wrote");
    memset(ct, 0xa5, sizeof ct);
    static const size_t bad_k[] = {0, 3, 5, 7, 9, 10, 16, (size_t)-1};
    for (size_t i = 0; i < sizeof bad_k / sizeof *bad_k; i++) {
        aesniEncryptBlock(bad_k[i], e.init, e.mid, e.fin, pt, ct);
        aesniDecryptBlock(bad_k[i], e.init, e.mid, e.fin, pt, ct);
        aesniEncryptBlocks(bad_k[i], 4, e.init, e.mid, e.fin, pt, ct);
        aesniDecryptBlocks(bad_k[i], 4, e.init, e.mid, e.fin, pt, ct);
    }
    aesniEncryptBlock(4, NULL, e.mid, e.fin, pt, ct);
    aesniEncryptBlock(4, e.init, NULL, e.fin, pt, ct);
    aesniEncryptBlock(4, e.init, e.mid, NULL, pt, ct);
    aesniEncryptBlock(4, e.init, e.mid, e.fin, NULL, ct);
    aesniEncryptBlock(4, e.init, e.mid, e.fin, pt, NULL);
    aesniDecryptBlock(4, e.init, e.mid, e.fin, NULL, ct);
    aesniEncryptBlocks(4, 4, e.init, e.mid, e.fin, NULL, ct);
    aesniDecryptBlocks(4, 4, e.init, e.mid, e.fin, pt, NULL);
    aesniEncryptBlocks(4, 0, e.init, e.mid, e.fin, pt, ct);
    aesniEncryptBlocks(4, SIZE_MAX / 8, e.init, e.mid, e.fin, pt, ct); /* n * 16 overflows */
    aesniEncryptBlocks(4, SIZE_MAX / 16, e.init, e.mid, e.fin, pt, ct); /* > PTRDIFF_MAX */
    for (size_t i = 0; i < sizeof ct; i++) CHECK(ct[i] == 0xa5, "bad-input call wrote output byte %zu", i);
    CHECK(checkAESNISupported() <= 1, "checkAESNISupported is 0 or 1");

    /* Overlapping bulk buffers behave as if the input were copied first. */
    uint8_t buf[80], want[64];
    for (int i = 0; i < 80; i++) buf[i] = (uint8_t)(i * 7);
    aesniEncryptBlocks(4, 4, e.init, e.mid, e.fin, buf, want);
    aesniEncryptBlocks(4, 4, e.init, e.mid, e.fin, buf, buf + 5);
    CHECK(memcmp(buf + 5, want, 64) == 0, "overlapping bulk encrypt");
}

/* ------------------------------------------------------------------------------------------ */
/* aesx_* API                                                                                   */

static aesx_cipher *new_cipher(const uint8_t *key, size_t len, aesx_backend b) {
    aesx_cipher *c = NULL;
    CHECK_STATUS(aesx_cipher_new(key, len, b, &c), AESX_OK);
    CHECK(c != NULL, "aesx_cipher_new gave NULL");
    return c;
}

/* SP 800-38A ECB and CBC examples, whole, in place, and CBC split into two calls. */
static void test_api_sp800_38a(const char *dir, aesx_backend b) {
    records ecb = load(dir, "sp800-38a/SP800-38A-ECB.rsp");
    for (size_t i = 0; i < ecb.n; i++) {
        const record *r = &ecb.r[i];
        aesx_cipher *c = new_cipher(r->key, r->key_len, b);
        uint8_t out[64];
        if (!r->decrypt) {
            CHECK_STATUS(aesx_ecb_encrypt(c, r->pt, out, r->pt_len), AESX_OK);
            CHECK(memcmp(out, r->ct, 64) == 0, "SP 800-38A ECB enc #%d", r->count);
        } else {
            memcpy(out, r->ct, 64);
            CHECK_STATUS(aesx_ecb_decrypt(c, out, out, 64), AESX_OK);
            CHECK(memcmp(out, r->pt, 64) == 0, "SP 800-38A ECB dec in place #%d", r->count);
        }
        aesx_cipher_free(c);
    }
    free(ecb.r);
    records cbc = load(dir, "sp800-38a/SP800-38A-CBC.rsp");
    for (size_t i = 0; i < cbc.n; i++) {
        const record *r = &cbc.r[i];
        aesx_cipher *c = new_cipher(r->key, r->key_len, b);
        uint8_t out[64], iv[16];
        const uint8_t *in = r->decrypt ? r->ct : r->pt, *want = r->decrypt ? r->pt : r->ct;
        aesx_status (*f)(const aesx_cipher *, uint8_t *, const uint8_t *, uint8_t *, size_t) =
            r->decrypt ? aesx_cbc_decrypt : aesx_cbc_encrypt;
        memcpy(iv, r->iv, 16);
        CHECK_STATUS(f(c, iv, in, out, 64), AESX_OK);
        CHECK(memcmp(out, want, 64) == 0, "SP 800-38A CBC #%d", r->count);
        CHECK(memcmp(iv, r->ct + 48, 16) == 0, "CBC iv becomes the last ciphertext block");
        /* Two calls (1 block + 3 blocks, in place) continue the chain. */
        memcpy(iv, r->iv, 16);
        memcpy(out, in, 64);
        CHECK_STATUS(f(c, iv, out, out, 16), AESX_OK);
        CHECK_STATUS(f(c, iv, out + 16, out + 16, 48), AESX_OK);
        CHECK(memcmp(out, want, 64) == 0, "SP 800-38A CBC split #%d", r->count);
        aesx_cipher_free(c);
    }
    free(cbc.r);
    records ctr = load(dir, "sp800-38a/SP800-38A-CTR.rsp");
    for (size_t i = 0; i < ctr.n; i++) {
        const record *r = &ctr.r[i];
        aesx_cipher *c = new_cipher(r->key, r->key_len, b);
        uint8_t out[64];
        const uint8_t *in = r->decrypt ? r->ct : r->pt, *want = r->decrypt ? r->pt : r->ct;
        CHECK_STATUS(aesx_ctr_xor_at(c, r->iv, 0, in, out, 64), AESX_OK);
        CHECK(memcmp(out, want, 64) == 0, "SP 800-38A CTR #%d", r->count);
        aesx_ctr *s = NULL;
        CHECK_STATUS(aesx_ctr_new(c, r->iv, &s), AESX_OK);
        aesx_cipher_free(c); /* the stream keeps the key alive */
        memcpy(out, in, 64);
        CHECK_STATUS(aesx_ctr_xor(s, out, out, 7), AESX_OK);
        CHECK_STATUS(aesx_ctr_xor(s, out + 7, out + 7, 57), AESX_OK);
        CHECK(memcmp(out, want, 64) == 0, "SP 800-38A CTR streamed #%d", r->count);
        aesx_ctr_free(s);
    }
    free(ctr.r);
}

/* Big-endian increment of a 128-bit counter block, mod 2^128. */
static void ctr_inc(uint8_t c[16]) {
    for (int i = 15; i >= 0; i--)
        if (++c[i]) break;
}

/* CTR streaming over odd chunk sizes, counters that carry at 2^64 and wrap at 2^128, checked
 * against a keystream made here from ECB on counter blocks. */
static void test_api_ctr_stream(aesx_backend b, int light) {
    enum { LEN = 16 * 70 + 9 };
    static const size_t chunks[] = {0, 1, 2, 5, 15, 16, 17, 31, 32, 33, 63, 64, 65, 512};
    static const char *ivs[] = {"000102030405060708090a0b0c0d0e0f", "0000000000000000fffffffffffffffa",
                                "fffffffffffffffffffffffffffffffc", "00000000ffffffffffffffffffffffff"};
    uint8_t key[32];
    for (int i = 0; i < 32; i++) key[i] = (uint8_t)(0xc0 + i);
    /* light: one key size and the two IVs that carry, for slow (debug-built soft) backends. */
    for (size_t kl = 16; kl <= (light ? 16u : 32u); kl += 8)
        for (size_t v = light ? 2 : 0; v < sizeof ivs / sizeof *ivs; v++) {
            aesx_cipher *c = new_cipher(key, kl, b);
            uint8_t iv[16], cb[16], *ks = malloc(LEN + 16), *msg = malloc(LEN), *want = malloc(LEN),
                                    *out = malloc(LEN);
            size_t n;
            hex_to(ivs[v], iv, &n, 16);
            memcpy(cb, iv, 16);
            for (size_t i = 0; i < LEN; i += 16) {
                memcpy(ks + i, cb, 16);
                ctr_inc(cb);
            }
            CHECK_STATUS(aesx_ecb_encrypt(c, ks, ks, (LEN + 15) / 16 * 16), AESX_OK);
            for (size_t i = 0; i < LEN; i++) {
                msg[i] = (uint8_t)(i * 31 + 7);
                want[i] = msg[i] ^ ks[i];
            }
            for (size_t ci = 0; ci < sizeof chunks / sizeof *chunks; ci++) {
                for (int inplace = 0; inplace < 2; inplace++) {
                    aesx_ctr *s = NULL;
                    CHECK_STATUS(aesx_ctr_new(c, iv, &s), AESX_OK);
                    if (inplace) memcpy(out, msg, LEN);
                    size_t pos = 0, step = chunks[ci];
                    while (pos < LEN) {
                        size_t m = step == 0 ? 0 : (LEN - pos < step ? LEN - pos : step);
                        const uint8_t *src = inplace ? out + pos : msg + pos;
                        CHECK_STATUS(aesx_ctr_xor(s, src, out + pos, m), AESX_OK);
                        if (step == 0) { /* a zero-length call, then the rest at once */
                            CHECK_STATUS(aesx_ctr_xor(s, NULL, NULL, 0), AESX_OK);
                            m = LEN;
                            CHECK_STATUS(aesx_ctr_xor(s, src, out, m), AESX_OK);
                        }
                        pos += m;
                    }
                    uint64_t p = 0;
                    CHECK_STATUS(aesx_ctr_position(s, &p), AESX_OK);
                    CHECK(p == LEN, "ctr position %llu", (unsigned long long)p);
                    CHECK(memcmp(out, want, LEN) == 0, "CTR stream key %zu iv %s chunk %zu inplace %d",
                          kl, ivs[v], step, inplace);
                    /* Seek back into the middle of a block and redo the tail. */
                    CHECK_STATUS(aesx_ctr_seek(s, 100), AESX_OK);
                    memcpy(out + 100, msg + 100, LEN - 100);
                    CHECK_STATUS(aesx_ctr_xor(s, out + 100, out + 100, LEN - 100), AESX_OK);
                    CHECK(memcmp(out, want, LEN) == 0, "CTR after seek");
                    aesx_ctr_free(s);
                }
            }
            aesx_cipher_free(c);
            free(ks), free(msg), free(want), free(out);
        }
}

static void test_api_backends(void) {
    aesx_backend best = 0, b = 0, cur = 0;
    const char *name = NULL;
    CHECK_STATUS(aesx_backend_detect(&best), AESX_OK);
    CHECK(best >= AESX_BACKEND_SOFT && best <= AESX_BACKEND_VAES512, "detect gave %u", best);
    CHECK_STATUS(aesx_backend_check(AESX_BACKEND_SOFT), AESX_OK);
    CHECK_STATUS(aesx_backend_check(AESX_BACKEND_AUTO), AESX_OK);
    CHECK_STATUS(aesx_backend_check(best), AESX_OK);
    CHECK_STATUS(aesx_backend_check(6), AESX_ERR_UNKNOWN_BACKEND);
    CHECK_STATUS(aesx_backend_check(0xffffffffu), AESX_ERR_UNKNOWN_BACKEND);
    static const char *names[] = {"auto", "soft", "vpaes", "aesni", "vaes256", "vaes512"};
    uint8_t key[16] = {0};
    for (aesx_backend id = 0; id <= 5; id++) {
        CHECK_STATUS(aesx_backend_name(id, &name), AESX_OK);
        CHECK(name && strcmp(name, names[id]) == 0, "name of %u", id);
        CHECK_STATUS(aesx_backend_from_name(names[id], &b), AESX_OK);
        CHECK(b == id, "from_name(%s)", names[id]);
        aesx_cipher *c = NULL;
        aesx_status st = aesx_backend_check(id);
        if (st == AESX_OK) {
            CHECK(id <= best, "backend %u available but detect gave %u", id, best);
            CHECK_STATUS(aesx_cipher_new(key, 16, id, &c), AESX_OK);
            CHECK_STATUS(aesx_cipher_backend(c, &b), AESX_OK);
            CHECK(b == (id ? id : best), "cipher backend %u for request %u", b, id);
            CHECK_STATUS(aesx_set_default_backend(id), AESX_OK);
        } else {
            CHECK(st == AESX_ERR_BACKEND_UNAVAILABLE, "check(%u) = %d", id, st);
            c = (aesx_cipher *)&key; /* must be reset to NULL */
            CHECK_STATUS(aesx_cipher_new(key, 16, id, &c), AESX_ERR_BACKEND_UNAVAILABLE);
            CHECK(c == NULL, "out not cleared on failure");
            CHECK_STATUS(aesx_set_default_backend(id), AESX_ERR_BACKEND_UNAVAILABLE);
        }
        aesx_cipher_free(c);
    }
    CHECK_STATUS(aesx_backend_from_name("VAES512", &b), AESX_OK);
    CHECK(b == AESX_BACKEND_VAES512, "case-insensitive name");
    CHECK_STATUS(aesx_backend_from_name("aes", &b), AESX_ERR_UNKNOWN_BACKEND);
    CHECK_STATUS(aesx_backend_from_name("\xff\xfe", &b), AESX_ERR_UNKNOWN_BACKEND);
    CHECK_STATUS(aesx_backend_from_name(NULL, &b), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_backend_from_name("soft", NULL), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_backend_name(6, &name), AESX_ERR_UNKNOWN_BACKEND);
    CHECK_STATUS(aesx_backend_name(1, NULL), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_backend_detect(NULL), AESX_ERR_NULL_POINTER);
    /* Forcing the default: AUTO-created ciphers follow it. */
    CHECK_STATUS(aesx_set_default_backend(AESX_BACKEND_SOFT), AESX_OK);
    CHECK_STATUS(aesx_default_backend(&cur), AESX_OK);
    CHECK(cur == AESX_BACKEND_SOFT, "default after forcing soft: %u", cur);
    aesx_cipher *c = new_cipher(key, 16, AESX_BACKEND_AUTO);
    CHECK_STATUS(aesx_cipher_backend(c, &b), AESX_OK);
    CHECK(b == AESX_BACKEND_SOFT, "AUTO cipher under forced soft: %u", b);
    aesx_cipher_free(c);
    CHECK_STATUS(aesx_set_default_backend(99), AESX_ERR_UNKNOWN_BACKEND);
    CHECK_STATUS(aesx_set_default_backend(AESX_BACKEND_AUTO), AESX_OK);
    CHECK_STATUS(aesx_default_backend(&cur), AESX_OK);
    CHECK(cur == best, "default restored");
    CHECK_STATUS(aesx_default_backend(NULL), AESX_ERR_NULL_POINTER);
}

static void test_api_bad_input(void) {
    uint8_t key[32] = {0}, iv[16] = {0}, buf[64], out[64];
    aesx_cipher *c = NULL;
    uint32_t bits = 0;
    /* Key and context creation. Every out-parameter is cleared (NULL / 0) on failure,
     * whatever it held: each check starts from a stale value. */
    c = (aesx_cipher *)key;
    CHECK_STATUS(aesx_cipher_new(NULL, 16, 0, &c), AESX_ERR_NULL_POINTER);
    CHECK(c == NULL, "cipher_new(NULL key) left *out stale");
    CHECK_STATUS(aesx_cipher_new(key, 16, 0, NULL), AESX_ERR_NULL_POINTER);
    static const size_t bad_len[] = {0, 1, 15, 17, 23, 25, 31, 33, 64, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad_len / sizeof *bad_len; i++) {
        c = (aesx_cipher *)key;
        CHECK_STATUS(aesx_cipher_new(key, bad_len[i], 0, &c), AESX_ERR_KEY_LENGTH);
        CHECK(c == NULL, "cipher_new(key_len %zu) left *out stale", bad_len[i]);
    }
    c = (aesx_cipher *)key;
    CHECK_STATUS(aesx_cipher_new(key, 16, 6, &c), AESX_ERR_UNKNOWN_BACKEND);
    CHECK(c == NULL, "cipher_new(backend 6) left *out stale");
    c = (aesx_cipher *)key;
    CHECK_STATUS(aesx_cipher_new(key, 16, 0x80000001u, &c), AESX_ERR_UNKNOWN_BACKEND);
    CHECK(c == NULL, "failed new leaves NULL");
    {
        const char *name = "stale";
        aesx_backend b = 77;
        uint64_t p = 77;
        CHECK_STATUS(aesx_backend_name(6, &name), AESX_ERR_UNKNOWN_BACKEND);
        CHECK(name == NULL, "backend_name(6) left *name stale");
        CHECK_STATUS(aesx_backend_from_name("nope", &b), AESX_ERR_UNKNOWN_BACKEND);
        CHECK(b == 0, "backend_from_name(\"nope\") left *out = %u", b);
        b = 77;
        CHECK_STATUS(aesx_backend_from_name(NULL, &b), AESX_ERR_NULL_POINTER);
        CHECK(b == 0, "backend_from_name(NULL) left *out = %u", b);
        b = 77;
        CHECK_STATUS(aesx_cipher_backend(NULL, &b), AESX_ERR_NULL_POINTER);
        CHECK(b == 0, "cipher_backend(NULL) left *out = %u", b);
        bits = 77;
        CHECK_STATUS(aesx_cipher_key_bits(NULL, &bits), AESX_ERR_NULL_POINTER);
        CHECK(bits == 0, "cipher_key_bits(NULL) left *out = %u", bits);
        CHECK_STATUS(aesx_ctr_position(NULL, &p), AESX_ERR_NULL_POINTER);
        CHECK(p == 0, "ctr_position(NULL) left *out = %llu", (unsigned long long)p);
        aesx_ctr *st = (aesx_ctr *)key;
        CHECK_STATUS(aesx_ctr_new(NULL, iv, &st), AESX_ERR_NULL_POINTER);
        CHECK(st == NULL, "ctr_new(NULL cipher) left *out stale");
    }
    for (size_t kl = 16; kl <= 32; kl += 8) {
        c = new_cipher(key, kl, 0);
        CHECK_STATUS(aesx_cipher_key_bits(c, &bits), AESX_OK);
        CHECK(bits == 8 * kl, "key bits %u", bits);
        aesx_cipher_free(c);
    }
    c = new_cipher(key, 24, 0);
    CHECK_STATUS(aesx_cipher_key_bits(NULL, &bits), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_cipher_key_bits(c, NULL), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_cipher_backend(NULL, &bits), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_cipher_backend(c, NULL), AESX_ERR_NULL_POINTER);

    /* ECB / CBC / CTR: NULLs, lengths, overlap; nothing written on failure. */
    memset(buf, 0x11, sizeof buf);
    memset(out, 0x22, sizeof out);
    aesx_status (*ecb[2])(const aesx_cipher *, const uint8_t *, uint8_t *, size_t) = {aesx_ecb_encrypt,
                                                                                        aesx_ecb_decrypt};
    aesx_status (*cbc[2])(const aesx_cipher *, uint8_t *, const uint8_t *, uint8_t *, size_t) = {
        aesx_cbc_encrypt, aesx_cbc_decrypt};
    for (int d = 0; d < 2; d++) {
        CHECK_STATUS(ecb[d](NULL, buf, out, 16), AESX_ERR_NULL_POINTER);
        CHECK_STATUS(ecb[d](c, NULL, out, 16), AESX_ERR_NULL_POINTER);
        CHECK_STATUS(ecb[d](c, buf, NULL, 16), AESX_ERR_NULL_POINTER);
        CHECK_STATUS(ecb[d](c, NULL, NULL, 0), AESX_OK);
        CHECK_STATUS(ecb[d](c, buf, out, 15), AESX_ERR_NOT_BLOCK_ALIGNED);
        CHECK_STATUS(ecb[d](c, buf, out, 17), AESX_ERR_NOT_BLOCK_ALIGNED);
        CHECK_STATUS(ecb[d](c, buf, buf + 1, 32), AESX_ERR_OVERLAP);
        CHECK_STATUS(ecb[d](c, buf + 16, buf, 32), AESX_ERR_OVERLAP);
        CHECK_STATUS(ecb[d](c, buf, buf, (SIZE_MAX / 2 + 1)), AESX_ERR_LENGTH_LIMIT);
        CHECK_STATUS(ecb[d](c, buf, buf + 32, 32), AESX_OK); /* adjacent is fine */
        memset(buf, 0x11, sizeof buf);
        CHECK_STATUS(cbc[d](NULL, iv, buf, out, 16), AESX_ERR_NULL_POINTER);
        CHECK_STATUS(cbc[d](c, NULL, buf, out, 16), AESX_ERR_NULL_POINTER);
        CHECK_STATUS(cbc[d](c, iv, NULL, out, 16), AESX_ERR_NULL_POINTER);
        CHECK_STATUS(cbc[d](c, iv, buf, NULL, 16), AESX_ERR_NULL_POINTER);
        CHECK_STATUS(cbc[d](c, iv, buf, out, 8), AESX_ERR_NOT_BLOCK_ALIGNED);
        CHECK_STATUS(cbc[d](c, iv, buf, buf + 8, 32), AESX_ERR_OVERLAP);
        CHECK_STATUS(cbc[d](c, iv, NULL, NULL, 0), AESX_OK);
    }
    aesx_ctr *s = NULL;
    CHECK_STATUS(aesx_ctr_new(NULL, iv, &s), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_ctr_new(c, NULL, &s), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_ctr_new(c, iv, NULL), AESX_ERR_NULL_POINTER);
    CHECK(s == NULL, "failed ctr_new leaves NULL");
    CHECK_STATUS(aesx_ctr_xor_at(NULL, iv, 0, buf, out, 5), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_ctr_xor_at(c, NULL, 0, buf, out, 5), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_ctr_xor_at(c, iv, 0, NULL, out, 5), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_ctr_xor_at(c, iv, 0, buf, buf + 3, 5), AESX_ERR_OVERLAP);
    CHECK_STATUS(aesx_ctr_xor_at(c, iv, UINT64_MAX, buf, out, 2), AESX_ERR_LENGTH_LIMIT);
    CHECK_STATUS(aesx_ctr_new(c, iv, &s), AESX_OK);
    CHECK_STATUS(aesx_ctr_xor(NULL, buf, out, 5), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_ctr_xor(s, NULL, out, 5), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_ctr_xor(s, buf, NULL, 5), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_ctr_xor(s, buf, buf + 4, 5), AESX_ERR_OVERLAP);
    CHECK_STATUS(aesx_ctr_seek(NULL, 0), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_ctr_position(NULL, NULL), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_ctr_position(s, NULL), AESX_ERR_NULL_POINTER);
    /* The stream ends at byte 2^64 - 1: the last byte is allowed, one more is not. */
    CHECK_STATUS(aesx_ctr_seek(s, UINT64_MAX - 1), AESX_OK);
    CHECK_STATUS(aesx_ctr_xor(s, buf, out, 2), AESX_ERR_LENGTH_LIMIT);
    uint8_t last[1] = {0};
    CHECK_STATUS(aesx_ctr_xor(s, last, last, 1), AESX_OK);
    CHECK_STATUS(aesx_ctr_xor(s, buf, out, 1), AESX_ERR_LENGTH_LIMIT);
    CHECK_STATUS(aesx_ctr_xor(s, NULL, NULL, 0), AESX_OK);
    uint64_t p = 0;
    CHECK_STATUS(aesx_ctr_position(s, &p), AESX_OK);
    CHECK(p == UINT64_MAX, "position at the end");
    CHECK(buf[0] == 0x11 && out[0] == 0x22, "failed calls wrote data");
    for (int i = 0; i < 64; i++) CHECK(out[i] == 0x22, "failed calls wrote out[%d]", i);
    CHECK_STATUS(aesx_ctr_free(s), AESX_OK);
    CHECK_STATUS(aesx_ctr_free(NULL), AESX_OK);
    CHECK_STATUS(aesx_cipher_free(c), AESX_OK);
    CHECK_STATUS(aesx_cipher_free(NULL), AESX_OK);
    CHECK_STATUS(aesx_clear_thread_cache(), AESX_OK);
    /* Status strings for every value, known or not. */
    for (int st = -2; st <= 14; st++) CHECK(aesx_status_str(st) != NULL && aesx_status_str(st)[0], "status_str(%d)", st);
    CHECK(strcmp(aesx_status_str(AESX_OK), "ok") == 0, "status_str(0)");
}


/* ------------------------------------------------------------------------------------------ */
/* AES-GCM                                                                                     */

typedef struct {
    int fail; /* a decrypt record marked FAIL */
    size_t tag_bits;
    uint8_t key[32], iv[160], pt[64], aad[128], ct[64], tag[16];
    size_t key_len, iv_len, pt_len, aad_len, ct_len, tag_len;
} gcm_record;

/* Calls `f` on every record of a NIST GCM .rsp file (CRLF, [Taglen = N] headers, FAIL lines);
 * returns the number of records. */
static long gcm_file(const char *dir, const char *name, void (*f)(const gcm_record *, aesx_backend),
                     aesx_backend b) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    gcm_record cur;
    memset(&cur, 0, sizeof cur);
    size_t tag_bits = 0;
    int have = 0;
    long n = 0;
    char line[1024];
    for (;;) {
        char *l = fgets(line, sizeof line, fp);
        int blank = !l || l[0] == '\r' || l[0] == '\n';
        if (blank && have) {
            cur.tag_bits = tag_bits;
            f(&cur, b);
            n++;
            memset(&cur, 0, sizeof cur);
            have = 0;
        }
        if (!l) break;
        if (strncmp(l, "[Taglen = ", 10) == 0) tag_bits = (size_t)atoi(l + 10);
        if (strncmp(l, "FAIL", 4) == 0) cur.fail = 1;
        char *eq = strstr(l, " = ");
        if (!eq || l[0] == '#' || l[0] == '[') continue;
        const char *v = eq + 3;
        if (strncmp(l, "Count", 5) == 0) have = 1;
        else if (strncmp(l, "Key", 3) == 0) hex_to(v, cur.key, &cur.key_len, sizeof cur.key);
        else if (strncmp(l, "IV", 2) == 0) hex_to(v, cur.iv, &cur.iv_len, sizeof cur.iv);
        else if (strncmp(l, "PT", 2) == 0) hex_to(v, cur.pt, &cur.pt_len, sizeof cur.pt);
        else if (strncmp(l, "AAD", 3) == 0) hex_to(v, cur.aad, &cur.aad_len, sizeof cur.aad);
        else if (strncmp(l, "CT", 2) == 0) hex_to(v, cur.ct, &cur.ct_len, sizeof cur.ct);
        else if (strncmp(l, "Tag", 3) == 0) hex_to(v, cur.tag, &cur.tag_len, sizeof cur.tag);
    }
    fclose(fp);
    return n;
}

static aesx_gcm *new_gcm(const uint8_t *key, size_t len, size_t tag_len, aesx_backend b) {
    aesx_gcm *g = NULL;
    CHECK_STATUS(aesx_gcm_new(key, len, tag_len, b, &g), AESX_OK);
    CHECK(g != NULL, "aesx_gcm_new gave NULL");
    return g;
}

static void gcm_encrypt_record(const gcm_record *r, aesx_backend b) {
    CHECK(r->tag_len * 8 == r->tag_bits, "tag length vs [Taglen]");
    aesx_gcm *g = new_gcm(r->key, r->key_len, r->tag_len, b);
    uint8_t out[64], tag[16];
    /* Buffer to buffer; then in place through a stream, byte by byte after 3 bytes of AAD. */
    CHECK_STATUS(aesx_gcm_seal(g, r->iv, r->iv_len, r->aad, r->aad_len, r->pt, out, r->pt_len, tag, r->tag_len),
                 AESX_OK);
    CHECK(memcmp(out, r->ct, r->ct_len) == 0, "GCM seal CT (key %zu, iv %zu, pt %zu)", r->key_len, r->iv_len,
          r->pt_len);
    CHECK(memcmp(tag, r->tag, r->tag_len) == 0, "GCM seal tag %s want %s", hex(tag, r->tag_len),
          hex(r->tag, r->tag_len));
    aesx_gcm_stream *s = NULL;
    CHECK_STATUS(aesx_gcm_stream_new(g, 0, r->iv, r->iv_len, &s), AESX_OK);
    size_t a = r->aad_len < 3 ? r->aad_len : 3;
    CHECK_STATUS(aesx_gcm_stream_aad(s, r->aad, a), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_aad(s, r->aad + a, r->aad_len - a), AESX_OK);
    memcpy(out, r->pt, r->pt_len);
    for (size_t i = 0; i < r->pt_len; i++) CHECK_STATUS(aesx_gcm_stream_update(s, out + i, out + i, 1), AESX_OK);
    memset(tag, 0, sizeof tag);
    CHECK_STATUS(aesx_gcm_stream_tag(s, tag, r->tag_len), AESX_OK);
    CHECK(memcmp(out, r->ct, r->ct_len) == 0 && memcmp(tag, r->tag, r->tag_len) == 0, "GCM stream seal");
    aesx_gcm_stream_free(s);
    aesx_gcm_free(g);
}

static void gcm_decrypt_record(const gcm_record *r, aesx_backend b) {
    aesx_gcm *g = new_gcm(r->key, r->key_len, r->tag_len, b);
    uint8_t out[64];
    memcpy(out, r->ct, r->ct_len);
    aesx_status st = aesx_gcm_open(g, r->iv, r->iv_len, r->aad, r->aad_len, out, out, r->ct_len, r->tag, r->tag_len);
    if (r->fail) {
        CHECK(st == AESX_ERR_AUTH, "GCM FAIL record: status %d", (int)st);
        for (size_t i = 0; i < r->ct_len; i++) CHECK(out[i] == 0, "plaintext left after AESX_ERR_AUTH");
    } else {
        CHECK(st == AESX_OK, "GCM open: status %d", (int)st);
        CHECK(memcmp(out, r->pt, r->pt_len) == 0, "GCM open PT");
    }
    /* The stream gives the same verdict (after releasing unverified plaintext). */
    aesx_gcm_stream *s = NULL;
    CHECK_STATUS(aesx_gcm_stream_new(g, 1, r->iv, r->iv_len, &s), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_aad(s, r->aad, r->aad_len), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_update(s, r->ct, out, r->ct_len), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_verify(s, r->tag, r->tag_len), r->fail ? AESX_ERR_AUTH : AESX_OK);
    aesx_gcm_stream_free(s);
    aesx_gcm_free(g);
}

static void test_gcm_vectors(const char *dir, aesx_backend b, int light) {
    long n = 0;
    for (int bits = 128; bits <= 256; bits += 64) {
        if (light && bits == 192) continue;
        char name[64];
        snprintf(name, sizeof name, "nist-gcm/gcmEncryptExtIV%d.rsp", bits);
        n += gcm_file(dir, name, gcm_encrypt_record, b);
        snprintf(name, sizeof name, "nist-gcm/gcmDecrypt%d.rsp", bits);
        n += gcm_file(dir, name, gcm_decrypt_record, b);
    }
    CHECK(n > 3000, "GCM records read: %ld", n);
}

/* Every bad input of the GCM calls; nothing written on failure (except the zeroing on AUTH). */
static void test_gcm_bad_input(void) {
    uint8_t key[32] = {1}, nonce[12] = {2}, aad[8] = {3}, buf[64], out[64], tag[16];
    aesx_gcm *g = (aesx_gcm *)&key;
    CHECK_STATUS(aesx_gcm_new(NULL, 16, 16, 0, &g), AESX_ERR_NULL_POINTER);
    CHECK(g == NULL, "failed gcm_new leaves NULL");
    CHECK_STATUS(aesx_gcm_new(key, 16, 16, 0, NULL), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_new(key, 20, 16, 0, &g), AESX_ERR_KEY_LENGTH);
    CHECK_STATUS(aesx_gcm_new(key, 16, 16, 77, &g), AESX_ERR_UNKNOWN_BACKEND);
    static const size_t bad_tag[] = {0, 1, 3, 5, 7, 9, 10, 11, 17, 32, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad_tag / sizeof *bad_tag; i++)
        CHECK_STATUS(aesx_gcm_new(key, 16, bad_tag[i], 0, &g), AESX_ERR_TAG_LENGTH);
    CHECK(g == NULL, "failed gcm_new leaves NULL");
    g = new_gcm(key, 32, 16, 0);
    memset(buf, 0x11, sizeof buf);
    memset(out, 0x22, sizeof out);
    memset(tag, 0x33, sizeof tag);
    CHECK_STATUS(aesx_gcm_seal(NULL, nonce, 12, aad, 8, buf, out, 5, tag, 16), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_seal(g, NULL, 12, aad, 8, buf, out, 5, tag, 16), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 0, aad, 8, buf, out, 5, tag, 16), AESX_ERR_NONCE_LENGTH);
    CHECK_STATUS(aesx_gcm_seal(g, NULL, 0, aad, 8, buf, out, 5, tag, 16), AESX_ERR_NONCE_LENGTH);
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, NULL, 8, buf, out, 5, tag, 16), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, aad, 8, NULL, out, 5, tag, 16), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, aad, 8, buf, NULL, 5, tag, 16), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, aad, 8, buf, out, 5, NULL, 16), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, aad, 8, buf, out, 5, tag, 12), AESX_ERR_TAG_LENGTH);
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, aad, 8, buf, buf + 1, 5, tag, 16), AESX_ERR_OVERLAP);
    /* 2^32 - 1 blocks is one block too many (checked before any data is touched). */
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, aad, 8, buf, buf, (size_t)68719476720ull, tag, 16),
                 AESX_ERR_LENGTH_LIMIT);
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, aad, 8, buf, buf, SIZE_MAX / 2 + 1, tag, 16), AESX_ERR_LENGTH_LIMIT);
    for (int i = 0; i < 64; i++) CHECK(buf[i] == 0x11 && out[i] == 0x22, "failed seal wrote data [%d]", i);
    for (int i = 0; i < 16; i++) CHECK(tag[i] == 0x33, "failed seal wrote the tag");
    /* Empty message and AAD, NULL pointers allowed with length 0. */
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, NULL, 0, NULL, NULL, 0, tag, 16), AESX_OK);
    CHECK_STATUS(aesx_gcm_open(g, nonce, 12, NULL, 0, NULL, NULL, 0, tag, 16), AESX_OK);
    tag[0] ^= 1;
    CHECK_STATUS(aesx_gcm_open(g, nonce, 12, NULL, 0, NULL, NULL, 0, tag, 16), AESX_ERR_AUTH);
    /* A real message: buffer to buffer, then a forgery zeroes the output, a bad length does not. */
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, aad, 8, buf, out, 40, tag, 16), AESX_OK);
    uint8_t pt[64];
    memset(pt, 0x44, sizeof pt);
    CHECK_STATUS(aesx_gcm_open(g, nonce, 12, aad, 8, out, pt, 40, tag, 15), AESX_ERR_TAG_LENGTH);
    CHECK_STATUS(aesx_gcm_open(g, nonce, 12, aad, 8, out, pt, 40, NULL, 16), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_open(g, nonce, 0, aad, 8, out, pt, 40, tag, 16), AESX_ERR_NONCE_LENGTH);
    for (int i = 0; i < 64; i++) CHECK(pt[i] == 0x44, "failed open wrote data");
    CHECK_STATUS(aesx_gcm_open(g, nonce, 12, aad, 8, out, pt, 40, tag, 16), AESX_OK);
    CHECK(memcmp(pt, buf, 40) == 0, "open buffer to buffer");
    out[39] ^= 0x80;
    CHECK_STATUS(aesx_gcm_open(g, nonce, 12, aad, 8, out, pt, 40, tag, 16), AESX_ERR_AUTH);
    for (int i = 0; i < 40; i++) CHECK(pt[i] == 0, "AESX_ERR_AUTH left plaintext");
    CHECK(pt[40] == 0x44, "open wrote past len");
    out[39] ^= 0x80;
    /* The tag may sit right after the ciphertext in the same buffer (a common wire layout). */
    memcpy(out + 40, tag, 16);
    CHECK_STATUS(aesx_gcm_open(g, nonce, 12, aad, 8, out, out, 40, out + 40, 16), AESX_OK);
    CHECK(memcmp(out, buf, 40) == 0, "open in place with the tag after the data");

    /* Streams: order of calls, NULLs, the other direction's finish. */
    aesx_gcm_stream *s = (aesx_gcm_stream *)&key;
    CHECK_STATUS(aesx_gcm_stream_new(NULL, 0, nonce, 12, &s), AESX_ERR_NULL_POINTER);
    CHECK(s == NULL, "failed stream_new leaves NULL");
    CHECK_STATUS(aesx_gcm_stream_new(g, 0, nonce, 0, &s), AESX_ERR_NONCE_LENGTH);
    CHECK_STATUS(aesx_gcm_stream_new(g, 0, NULL, 12, &s), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_stream_new(g, 0, nonce, 12, NULL), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_stream_new(g, 0, nonce, 12, &s), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_aad(NULL, aad, 8), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_stream_aad(s, NULL, 8), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_stream_aad(s, aad, 8), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_update(s, buf, buf + 2, 8), AESX_ERR_OVERLAP);
    CHECK_STATUS(aesx_gcm_stream_update(s, NULL, NULL, 0), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_aad(s, aad, 8), AESX_OK); /* no data yet: still allowed */
    memcpy(pt, buf, 40);
    CHECK_STATUS(aesx_gcm_stream_update(s, pt, pt, 40), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_aad(s, aad, 1), AESX_ERR_STATE);
    CHECK_STATUS(aesx_gcm_stream_verify(s, tag, 16), AESX_ERR_STATE);
    CHECK_STATUS(aesx_gcm_stream_tag(s, tag, 8), AESX_ERR_TAG_LENGTH);
    CHECK_STATUS(aesx_gcm_stream_tag(s, NULL, 16), AESX_ERR_NULL_POINTER);
    uint8_t t2[16];
    CHECK_STATUS(aesx_gcm_stream_tag(s, t2, 16), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_tag(s, t2, 16), AESX_ERR_STATE);
    CHECK_STATUS(aesx_gcm_stream_update(s, pt, pt, 1), AESX_ERR_STATE);
    CHECK_STATUS(aesx_gcm_stream_aad(s, aad, 1), AESX_ERR_STATE);
    CHECK_STATUS(aesx_gcm_stream_free(s), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_free(NULL), AESX_OK);
    /* That stream had 16 bytes of AAD (8 + 8): one-shot with the same must agree. */
    uint8_t aad16[16], ct2[64], t3[16];
    memcpy(aad16, aad, 8), memcpy(aad16 + 8, aad, 8);
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, aad16, 16, buf, ct2, 40, t3, 16), AESX_OK);
    CHECK(memcmp(ct2, pt, 40) == 0 && memcmp(t2, t3, 16) == 0, "stream with split AAD = one-shot");
    /* A decrypting stream outlives its key, and refuses a tag of the wrong length. */
    CHECK_STATUS(aesx_gcm_stream_new(g, 1, nonce, 12, &s), AESX_OK);
    CHECK_STATUS(aesx_gcm_free(g), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_aad(s, aad16, 16), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_update(s, ct2, out, 40), AESX_OK);
    CHECK_STATUS(aesx_gcm_stream_tag(s, t2, 16), AESX_ERR_STATE);
    CHECK_STATUS(aesx_gcm_stream_verify(s, t3, 4), AESX_ERR_TAG_LENGTH);
    CHECK_STATUS(aesx_gcm_stream_verify(s, NULL, 16), AESX_ERR_NULL_POINTER);
    CHECK_STATUS(aesx_gcm_stream_verify(s, t3, 16), AESX_OK);
    CHECK(memcmp(out, buf, 40) == 0, "stream open");
    CHECK_STATUS(aesx_gcm_stream_verify(s, t3, 16), AESX_ERR_STATE);
    aesx_gcm_stream_free(s);
    CHECK_STATUS(aesx_gcm_free(NULL), AESX_OK);
    /* Truncated tags where the key says so. */
    g = new_gcm(key, 16, 8, 0);
    CHECK_STATUS(aesx_gcm_seal(g, nonce, 12, aad, 8, buf, out, 40, tag, 8), AESX_OK);
    CHECK_STATUS(aesx_gcm_open(g, nonce, 12, aad, 8, out, out, 40, tag, 8), AESX_OK);
    CHECK_STATUS(aesx_gcm_open(g, nonce, 12, aad, 8, out, out, 40, tag, 16), AESX_ERR_TAG_LENGTH);
    aesx_gcm_free(g);
}

/* ------------------------------------------------------------------------------------------ */

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s TESTDATA_AES_DIR [--mct-all-backends] [--quick]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    int mct_all = 0, quick = 0;
    for (int i = 2; i < argc; i++) {
        mct_all |= strcmp(argv[i], "--mct-all-backends") == 0;
        quick |= strcmp(argv[i], "--quick") == 0;
    }
    aesx_backend best = 0;
    aesx_backend_detect(&best);
    const char *best_name = "?";
    aesx_backend_name(best, &best_name);
    printf("fastest backend: %s; checkAESNISupported() = %u\n", best_name, checkAESNISupported());

    test_fips197_schedules();
    test_suiteb_bad_input();
    test_api_backends();
    test_api_bad_input();
    test_gcm_bad_input();

    static const char *kat[] = {"GFSbox", "KeySbox", "VarTxt", "VarKey"};
    for (aesx_backend b = AESX_BACKEND_SOFT; b <= AESX_BACKEND_VAES512; b++) {
        if (aesx_backend_check(b) != AESX_OK) continue;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        const char *bn = "?";
        aesx_backend_name(b, &bn);
        CHECK_STATUS(aesx_set_default_backend(b), AESX_OK);
        long nk = 0, nm = 0;
        for (int f = 0; f < 4; f++)
            for (int bits = 128; bits <= 256; bits += 64) {
                char name[64];
                snprintf(name, sizeof name, "nist-kat/ECB%s%d.rsp", kat[f], bits);
                nk += test_kat_file(dir, name);
            }
        /* Same-key calls hit the schedule cache; alternate keys to exercise misses too. */
        test_fips197_schedules();
        /* The Monte Carlo test and the full CTR matrix run on the fastest backend and on aesni
         * (--mct-all-backends: on all; --quick: the fastest only, for the ASan build). */
        int heavy = mct_all || b == best || (!quick && b == AESX_BACKEND_AESNI);
        if (heavy) {
            for (int bits = 128; bits <= 256; bits += 64) {
                char name[64];
                snprintf(name, sizeof name, "nist-mct/ECBMCT%d.rsp", bits);
                nm += test_mct_file(dir, name);
            }
        }
        test_api_sp800_38a(dir, b);
        test_api_ctr_stream(b, !heavy);
        test_gcm_vectors(dir, b, !heavy);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("backend %-8s ECB KAT vectors %ld, MCT records %ld (x1000 calls), %.2f s\n", bn, nk, nm,
               (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
        /* GFSbox 14+12+10, KeySbox 42+48+32, VarKey 256+384+512, VarTxt 3 x 256 (SOURCE.md). */
        CHECK(nk == 2078, "KAT count %ld", nk);
        CHECK(nm == 0 || nm == 600, "MCT count %ld", nm);
    }
    CHECK_STATUS(aesx_set_default_backend(AESX_BACKEND_AUTO), AESX_OK);
    aesx_clear_thread_cache();
    if (failures) {
        printf("%d FAILURES (%ld checks)\n", failures, checks);
        return 1;
    }
    printf("ALL OK (%ld checks)\n", checks);
    return 0;
}
