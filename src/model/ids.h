/*
 * Identifiers the scripted model hands out: tool_use ids, message ids and
 * request ids, shaped like the real API's ("toolu_01" + 22 base62
 * characters).
 *
 * A tool_use id is not random: it encodes a per-process nonce, the script
 * turn and the block index, scrambled by a keyed permutation so that it looks
 * random, is the same for the same script position during one server run,
 * and differs between runs. ids_decode_tool_use() recognizes the server's
 * own ids in a request's history; that is how the model finds its place in
 * the script without counting messages. The top bit of a turn,
 * IDS_SUBAGENT_TURN, marks a turn of the subagent script: such an id looks
 * like any other and decodes with the bit set, so neither script's
 * position is ever moved by the other's ids. Nothing here allocates; a
 * struct ids is immutable after ids_init() and safe to share between
 * threads.
 */
#ifndef LEAKBENCH_MODEL_IDS_H
#define LEAKBENCH_MODEL_IDS_H

#include <stddef.h>
#include <stdint.h>

#define IDS_BODY_LEN	  22	      /* base62 characters after the prefix */
#define IDS_LEN		  30	      /* "toolu_01" + 22 */
#define IDS_BUF		  40	      /* room for any id and its NUL */
#define IDS_SUBAGENT_TURN 0x80000000u /* turn flag: the subagent's */

struct ids {
	uint64_t nonce;	 /* random per process */
	uint64_t key[4]; /* round keys of the permutation */
};

/* Seeds from the kernel's random source. 0, or -1 if none could be read. */
int ids_init(struct ids *ids);

/* Seeds deterministically (tests, fuzzing). */
void ids_init_seed(struct ids *ids, uint64_t seed);

/* "toolu_01..." for (turn, block); out has IDS_BUF bytes. */
void ids_tool_use(const struct ids *ids, uint32_t turn, uint32_t block,
    char *out);

/*
 * Recognizes an id made by ids_tool_use() with the same ids. Returns 1 and
 * fills *turn and *block, or 0 for anything else (another run's ids, real
 * API ids, garbage of any length).
 */
int ids_decode_tool_use(const struct ids *ids, const char *s, size_t len,
    uint32_t *turn, uint32_t *block);

/*
 * prefix ("msg_01", "req_01") + 22 base62 characters, unique per counter
 * value within one process. out has IDS_BUF bytes.
 */
void ids_serial(const struct ids *ids, const char *prefix, uint64_t n,
    char *out);

#endif
