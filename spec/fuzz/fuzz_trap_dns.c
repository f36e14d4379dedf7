/*
 * libFuzzer target for the trap's DNS parser and answer (src/trap/dns.c)
 * and the record line a question becomes (src/trap/log.c). Invariants
 * checked: a parsed query has 1..8 questions with NUL-terminated names
 * inside their buffers and questions ending within the message; the
 * answer is never longer than the query nor than the buffer (with the
 * simulated internet's table: than the query and one A record per
 * question); the record line is valid JSON and gives the name back
 * unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "trap/trap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct trap_sim *sim; /* one table for the process, as in lb-trap */

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_query q;
	unsigned char out[65536];
	const char *why = NULL;
	struct jline j;
	json_t *v;
	size_t n;
	int i;

	if (size > 65535)
		return 0;
	if (dns_parse_query(data, size, &q, &why) == 0) {
		if (q.nq < 1 || q.nq > DNS_MAX_QUESTIONS || q.qend > size ||
		    q.qend < 12)
			abort();
		for (i = 0; i < q.nq; i++) {
			if (memchr(q.q[i].name, '\0', DNS_NAME_MAX) == NULL)
				abort();
			jl_begin_at(&j, "dns", 0, 0);
			jl_str(&j, "name", q.q[i].name, strlen(q.q[i].name));
			jl_end(&j);
			v = json_loadb(j.b.p, j.b.len, 0, NULL);
			if (v == NULL ||
			    strcmp(json_string_value(
				       json_object_get(v, "name")),
				q.q[i].name) != 0)
				abort();
			json_decref(v);
			jl_free(&j);
		}
	} else if (why == NULL) {
		abort();
	}
	n = dns_answer(data, size, out, sizeof(out));
	if (n > size || (n > 0 && n < 12))
		abort();
	n = dns_answer(data, size, out, 12);
	if (n > 12)
		abort();
	if (sim == NULL && (sim = trap_sim_new(64)) == NULL)
		abort();
	n = dns_answer_sim(data, size, out, sizeof(out), sim);
	if (n > size + 16 * DNS_MAX_QUESTIONS || (n > 0 && n < 12))
		abort();
	n = dns_answer_sim(data, size, out, 40, sim);
	if (n > 40)
		abort();
	return 0;
}
