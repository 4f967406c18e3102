/*
 * hash.c - SHA-256 as described in FIPS 180-4, section 6.2.
 *
 * Used for content hashes (the input hash in emitted headers, the cache key
 * of DOCC_REUSE_BINARIES), not for security. The state is the eight working
 * words h[], the message length n in bytes, and a partial block buf[] of
 * fill < 64 bytes; sha256_update feeds whole 64-byte blocks to the
 * compression function as soon as they are complete. sha256_final appends
 * the padding (0x80, zeros, the bit length as a big-endian 64-bit number)
 * and writes the digest big-endian.
 *
 * Weights are hashed as they are written (gigabytes for a large model), so
 * runs of whole blocks go to sha256_blocks: on x86-64 processors with the
 * SHA extensions (cpuid leaf 7, EBX bit 29) the compression runs on
 * sha256rnds2 / sha256msg1 / sha256msg2, about 1.5 GB/s against 0.3 for
 * the portable code, which stays the definition and the fallback.
 */
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <immintrin.h>
#define SHA_NI 1
#endif

#include "lib.h"

/* The first 32 bits of the fractional parts of the cube roots of the first
 * 64 primes (FIPS 180-4, 4.2.2). */
static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, int n)
{
	return (x >> n) | (x << (32 - n));
}

/* The compression function on one 64-byte block (FIPS 180-4, 6.2.2). */
static void sha256_block(uint32_t h[8], const unsigned char *p)
{
	uint32_t w[64];
	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
		       (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
	for (int t = 16; t < 64; t++) {
		uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
		uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
		w[t] = s1 + w[t - 7] + s0 + w[t - 16];
	}
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
	uint32_t e = h[4], f = h[5], g = h[6], hh = h[7];
	for (int t = 0; t < 64; t++) {
		uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
		uint32_t ch = (e & f) ^ (~e & g);
		uint32_t t1 = hh + S1 + ch + sha256_k[t] + w[t];
		uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
		uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
		uint32_t t2 = S0 + maj;
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += hh;
}

#ifdef SHA_NI
/* n blocks with the SHA extensions. The state lives as ABEF and CDGH in
 * two registers; each sha256rnds2 does two rounds, with the sums of
 * message words and constants in the low half of its third operand. */
__attribute__((target("sha,sse4.1,ssse3"))) static void sha256_blocks_ni(uint32_t h[8], const unsigned char *p, size_t n)
{
	const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL); /* big-endian words */
	__m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0xB1);
	__m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h + 4)), 0x1B);
	__m128i abef = _mm_alignr_epi8(dcba, efgh, 8), cdgh = _mm_blend_epi16(efgh, dcba, 0xF0);
	for (; n; n--, p += 64) {
		__m128i s0 = abef, s1 = cdgh, w[4];
		for (int i = 0; i < 4; i++)
			w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), swap);
		for (int j = 0; j < 16; j++) {
			__m128i x = w[j & 3];
			if (j >= 4) { /* w[j] from w[j-4..j-1], four words at a time */
				__m128i a = w[j & 3], b = w[(j + 1) & 3], c = w[(j + 2) & 3], d = w[(j + 3) & 3];
				x = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(a, b), _mm_alignr_epi8(d, c, 4)), d);
				w[j & 3] = x;
			}
			__m128i m = _mm_add_epi32(x, _mm_loadu_si128((const __m128i *)(sha256_k + 4 * j)));
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
			abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0E));
		}
		abef = _mm_add_epi32(abef, s0);
		cdgh = _mm_add_epi32(cdgh, s1);
	}
	__m128i feba = _mm_shuffle_epi32(abef, 0x1B), dchg = _mm_shuffle_epi32(cdgh, 0xB1);
	_mm_storeu_si128((__m128i *)h, _mm_blend_epi16(feba, dchg, 0xF0));
	_mm_storeu_si128((__m128i *)(h + 4), _mm_alignr_epi8(dchg, feba, 8));
}

static int sha_ni(void)
{
	static int have = -1;
	unsigned a, b, c, d;
	if (have < 0)
		have = getenv("DOCC_NO_SHA_NI") ? 0 : __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 29 & 1);
	return have;
}
#endif

/* n whole blocks at p. */
static void sha256_blocks(uint32_t h[8], const unsigned char *p, size_t n)
{
#ifdef SHA_NI
	if (sha_ni()) {
		sha256_blocks_ni(h, p, n);
		return;
	}
#endif
	for (; n; n--, p += 64)
		sha256_block(h, p);
}

void sha256_init(Sha256 *s)
{
	/* Fractional parts of the square roots of the first 8 primes (5.3.3). */
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};
	memcpy(s->h, h0, sizeof(h0));
	s->n = 0;
	s->fill = 0;
}

void sha256_update(Sha256 *s, const void *data, size_t n)
{
	const unsigned char *p = data;
	s->n += n;
	if (s->fill) {
		size_t take = MIN(n, 64 - s->fill);
		memcpy(s->buf + s->fill, p, take);
		s->fill += take;
		p += take;
		n -= take;
		if (s->fill < 64)
			return;
		sha256_blocks(s->h, s->buf, 1);
		s->fill = 0;
	}
	sha256_blocks(s->h, p, n / 64);
	p += n / 64 * 64;
	n %= 64;
	if (n)
		memcpy(s->buf, p, n);
	s->fill = n;
}

void sha256_final(Sha256 *s, unsigned char out[32])
{
	uint64_t bits = s->n * 8;
	unsigned char pad[72] = {0x80};
	/* Pad to 56 mod 64, then the 8-byte length completes the block. */
	size_t npad = s->fill < 56 ? 56 - s->fill : 120 - s->fill;
	for (int i = 0; i < 8; i++)
		pad[npad + i] = (unsigned char)(bits >> (56 - 8 * i));
	sha256_update(s, pad, npad + 8);
	DOCC_ASSERT(s->fill == 0);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(s->h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
		out[4 * i + 3] = (unsigned char)s->h[i];
	}
}

void sha256_hex(const unsigned char d[32], char out[65])
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
}

void sha256_hex_of(const void *data, size_t n, char out[65])
{
	Sha256 s;
	unsigned char d[32];
	sha256_init(&s);
	sha256_update(&s, data, n);
	sha256_final(&s, d);
	sha256_hex(d, out);
}
