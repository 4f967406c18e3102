/*
 * weights.h - --external-weights: dc_weights_map(path, &map, msg, n) maps
 * NAME.weights and checks all of it before create() uses it: the file's
 * size, the 128-byte header (magic, the blob's size, the sha256 this
 * library was built with) and the sha256 of the data itself, so that a
 * truncated, foreign or altered file is refused with DOCCC_ERR_WEIGHTS and
 * a message that names it (an mmap that fails for memory gives
 * DOCCC_ERR_NOMEM). Hashing runs at about 200 MB/s in plain C and 1 GB/s
 * or more with the x86 SHA extensions, used where cpuid has them (not in
 * CUDA or HIP sources, whose compilers may not take the intrinsics);
 * DOCCC_TRUST_WEIGHTS=1 in the environment skips that one check for a file
 * the caller vouches for. The map is 128 + DC_WEIGHTS_SIZE bytes. Valid
 * C11 and C++; printed after DC_WEIGHTS_SIZE and dc_weights_sha (backends/
 * emit.c); DC_NAME is the model's name, a string literal.
 *
 * The opening comment is for this file's reader: the library gets what
 * follows it (rt_body).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static const uint32_t dc_sha_k[64] = {
	0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
	0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
	0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
	0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
	0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
	0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
	0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
	0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u};

static inline uint32_t dc_ror(uint32_t x, int n) { return x >> n | x << (32 - n); }

static void dc_sha_block(uint32_t *h, const unsigned char *p)
{
	uint32_t w[64];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++)
		w[i] = w[i - 16] + (dc_ror(w[i - 15], 7) ^ dc_ror(w[i - 15], 18) ^ w[i - 15] >> 3) + w[i - 7] +
		       (dc_ror(w[i - 2], 17) ^ dc_ror(w[i - 2], 19) ^ w[i - 2] >> 10);
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = k + (dc_ror(e, 6) ^ dc_ror(e, 11) ^ dc_ror(e, 25)) + ((e & f) ^ (~e & g)) + dc_sha_k[i] + w[i];
		uint32_t t2 = (dc_ror(a, 2) ^ dc_ror(a, 13) ^ dc_ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		k = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

#if defined(__x86_64__) && !defined(__CUDACC__) && !defined(__HIPCC__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <immintrin.h>
/* n blocks with the SHA extensions (state as ABEF, CDGH), where cpuid has them */
__attribute__((target("sha,sse4.1,ssse3"))) static void dc_sha_ni(uint32_t *h, const unsigned char *p, size_t n)
{
	const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0xB1);
	__m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h + 4)), 0x1B);
	__m128i abef = _mm_alignr_epi8(dcba, efgh, 8), cdgh = _mm_blend_epi16(efgh, dcba, 0xF0);
	for (; n; n--, p += 64) {
		__m128i s0 = abef, s1 = cdgh, w[4];
		for (int i = 0; i < 4; i++)
			w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), swap);
		for (int j = 0; j < 16; j++) {
			__m128i x = w[j & 3];
			if (j >= 4)
				x = w[j & 3] = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w[j & 3], w[(j + 1) & 3]),
				                                   _mm_alignr_epi8(w[(j + 3) & 3], w[(j + 2) & 3], 4)), w[(j + 3) & 3]);
			__m128i m = _mm_add_epi32(x, _mm_loadu_si128((const __m128i *)(dc_sha_k + 4 * j)));
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

static size_t dc_sha_blocks(uint32_t *h, const unsigned char *p, size_t n)
{
	unsigned a, b, c, d;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b >> 29 & 1))
		return 0;
	dc_sha_ni(h, p, n / 64);
	return n / 64 * 64;
}
#else
static size_t dc_sha_blocks(uint32_t *h, const unsigned char *p, size_t n)
{
	(void)h, (void)p, (void)n;
	return 0;
}
#endif

/* sha256 of p[0..n) in lower-case hex. n goes through an empty asm, which
 * the compiler cannot see through: with n the constant 64 (a 64-byte blob)
 * clang 14 at -O2 folds the hash until it runs out of memory. */
static void dc_sha256_hex(const unsigned char *p, size_t n, char hex[65])
{
	__asm__("" : "+r"(n));
	uint32_t h[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au, 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
	size_t i = dc_sha_blocks(h, p, n);
	for (; i + 64 <= n; i += 64)
		dc_sha_block(h, p + i);
	unsigned char t[128] = {0};
	size_t r = n - i, len = r < 56 ? 64 : 128;
	memcpy(t, p + i, r);
	t[r] = 0x80;
	for (int k = 0; k < 8; k++)
		t[len - 1 - k] = (unsigned char)((uint64_t)n * 8 >> 8 * k);
	for (size_t k = 0; k < len; k += 64)
		dc_sha_block(h, t + k);
	for (int k = 0; k < 32; k++)
		snprintf(hex + 2 * k, 3, "%02x", (unsigned)(h[k / 4] >> (24 - 8 * (k % 4)) & 255));
}

/* DOCCC_TRUST_WEIGHTS=1: skip the data's hash, keep the other checks */
static int dc_trust_weights(void)
{
	const char *v = getenv("DOCCC_TRUST_WEIGHTS");
	return v && *v && strcmp(v, "0");
}

static int dc_weights_map(const char *path, void **map, char *msg, size_t msgn)
{
	*map = NULL;
	if (!path) {
		snprintf(msg, msgn, DC_NAME " was built with --external-weights: pass the path of its weights file (" DC_NAME
		         ".weights) to " DC_NAME "_create_from");
		return DOCCC_ERR_WEIGHTS;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(msg, msgn, "%s: cannot open the weights file: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return DOCCC_ERR_WEIGHTS;
	}
	if ((uint64_t)st.st_size != 128 + (uint64_t)DC_WEIGHTS_SIZE) {
		snprintf(msg, msgn, "%s: the weights file holds %lld bytes where " DC_NAME " needs %llu (truncated, or made for another model)",
		         path, (long long)st.st_size, 128 + (unsigned long long)DC_WEIGHTS_SIZE);
		close(fd);
		return DOCCC_ERR_WEIGHTS;
	}
	void *p = mmap(NULL, 128 + DC_WEIGHTS_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	int err = errno;
	close(fd);
	if (p == MAP_FAILED) {
		snprintf(msg, msgn, "%s: cannot map the weights file: %s", path, strerror(err));
		return err == ENOMEM ? DOCCC_ERR_NOMEM : DOCCC_ERR_WEIGHTS;
	}
	const unsigned char *c = (const unsigned char *)p;
	uint64_t size;
	char hex[65];
	memcpy(&size, c + 8, 8);
	if (memcmp(c, "DOCCCW01", 8) || size != DC_WEIGHTS_SIZE)
		snprintf(msg, msgn, "%s: not a doccc weights file (bad header)", path);
	else if (memcmp(c + 16, dc_weights_sha, 64))
		snprintf(msg, msgn, "%s: the weights file was made for another build of " DC_NAME " (its sha256 %.64s, " DC_NAME " needs %s)", path,
		         (const char *)c + 16, dc_weights_sha);
	else if (!dc_trust_weights() && (dc_sha256_hex(c + 128, DC_WEIGHTS_SIZE, hex), memcmp(hex, dc_weights_sha, 64)))
		snprintf(msg, msgn, "%s: the weights file is damaged or was altered (the data's sha256 is %s, its header's %s)", path,
		         hex, dc_weights_sha);
	else {
		*map = p;
		return DOCCC_OK;
	}
	munmap(p, 128 + DC_WEIGHTS_SIZE);
	return DOCCC_ERR_WEIGHTS;
}

