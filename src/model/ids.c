/*
 * Identifiers: a 128-bit block (nonce, kind, payload) run through a
 * four-round Feistel permutation keyed per process, then written as 22
 * base62 digits (62^22 > 2^128, so every block has exactly one spelling).
 * Decoding inverts both steps and accepts only blocks that carry this
 * process's nonce and the tool_use kind, so ids from another run, from the
 * real API or made up by a client are never mistaken for ours.
 */
#include <string.h>
#include <sys/random.h>

#include "model/ids.h"

__extension__ typedef unsigned __int128 u128;

static const char b62[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

enum { KIND_TOOL_USE = 1 };

#define TOOL_PREFIX "toolu_01"
#define BLOCK_BITS  20

static uint64_t
mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static u128
permute(const struct ids *ids, uint64_t l, uint64_t r)
{
	uint64_t t;
	int i;

	for (i = 0; i < 4; i++) {
		t = l ^ mix64(r ^ ids->key[i]);
		l = r;
		r = t;
	}
	return ((u128)l << 64) | r;
}

static void
unpermute(const struct ids *ids, u128 v, uint64_t *lo, uint64_t *ro)
{
	uint64_t l = (uint64_t)(v >> 64), r = (uint64_t)v, t;
	int i;

	for (i = 3; i >= 0; i--) {
		t = r ^ mix64(l ^ ids->key[i]);
		r = l;
		l = t;
	}
	*lo = l;
	*ro = r;
}

/* Writes prefix + 22 digits of v + NUL into out (IDS_BUF bytes). */
static void
spell(const char *prefix, u128 v, char *out)
{
	size_t plen = strlen(prefix);
	int i;

	if (plen > IDS_BUF - IDS_BODY_LEN - 1)
		plen = IDS_BUF - IDS_BODY_LEN - 1;
	memcpy(out, prefix, plen);
	for (i = IDS_BODY_LEN - 1; i >= 0; i--) {
		out[plen + (size_t)i] = b62[(unsigned)(v % 62)];
		v /= 62;
	}
	out[plen + IDS_BODY_LEN] = '\0';
}

static void
derive(struct ids *ids, uint64_t seed)
{
	int i;

	ids->nonce = mix64(seed ^ 0x6c65616b62656e63ULL);
	for (i = 0; i < 4; i++)
		ids->key[i] = mix64(
		    ids->nonce + (uint64_t)i * 0x2545f4914f6cdd1dULL);
}

int
ids_init(struct ids *ids)
{
	uint64_t seed[2];
	ssize_t n;

	n = getrandom(seed, sizeof(seed), 0);
	if (n != (ssize_t)sizeof(seed))
		return -1;
	derive(ids, seed[0]);
	ids->key[0] ^= seed[1];
	return 0;
}

void
ids_init_seed(struct ids *ids, uint64_t seed)
{
	derive(ids, seed);
}

void
ids_tool_use(const struct ids *ids, uint32_t turn, uint32_t block, char *out)
{
	uint64_t payload;

	payload = ((uint64_t)KIND_TOOL_USE << 56) |
	    ((uint64_t)turn << BLOCK_BITS) | (block & ((1u << BLOCK_BITS) - 1));
	spell(TOOL_PREFIX, permute(ids, ids->nonce, payload), out);
}

int
ids_decode_tool_use(const struct ids *ids, const char *s, size_t len,
    uint32_t *turn, uint32_t *block)
{
	const size_t plen = sizeof(TOOL_PREFIX) - 1;
	const u128 max = ~(u128)0;
	uint64_t l, r;
	u128 v = 0;
	const char *p;
	size_t i;
	unsigned d;

	if (s == NULL || len != plen + IDS_BODY_LEN ||
	    memcmp(s, TOOL_PREFIX, plen) != 0)
		return 0;
	for (i = plen; i < len; i++) {
		if (s[i] == '\0' || (p = strchr(b62, s[i])) == NULL)
			return 0;
		d = (unsigned)(p - b62);
		if (v > (max - d) / 62)
			return 0;
		v = v * 62 + d;
	}
	unpermute(ids, v, &l, &r);
	if (l != ids->nonce || (r >> 56) != KIND_TOOL_USE ||
	    ((r >> BLOCK_BITS) >> 32 & 0xf) != 0)
		return 0;
	*turn = (uint32_t)(r >> BLOCK_BITS);
	*block = (uint32_t)(r & ((1u << BLOCK_BITS) - 1));
	return 1;
}

void
ids_serial(const struct ids *ids, const char *prefix, uint64_t n, char *out)
{
	uint64_t kind = 2;
	const char *p;

	for (p = prefix; *p != '\0'; p++)
		kind = (kind * 31 + (unsigned char)*p) % 250;
	kind += 2;
	spell(prefix,
	    permute(ids, ids->nonce,
		(kind << 56) | (n & 0x00ffffffffffffffULL)),
	    out);
}
