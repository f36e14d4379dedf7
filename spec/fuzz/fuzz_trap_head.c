/*
 * libFuzzer target for the trap's request head parser
 * (src/trap/httptrap.c) and the lossless record fields (src/trap/log.c).
 * Invariants checked: a head is parsed only within len and max_head bytes,
 * with a method and a non-empty target; an error has a reason; the record
 * line built from the parse (headers, raw head, the rest as body) is valid
 * JSON, and the head comes back byte for byte from "head" or
 * "head_base64".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/jsonw.h"
#include "trap/trap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trap_req r;
	struct jline j;
	const char *why = NULL;
	json_t *v, *h;
	long rc;

	rc = trap_parse_head(data, size, 512, &r, &why);
	if (rc < 0) {
		if (why == NULL)
			abort();
		return 0;
	}
	if (rc == 0)
		return 0;
	if ((size_t)rc > size || rc > 514 || r.method == NULL ||
	    r.target == NULL || r.target[0] == '\0' || r.clen < -2)
		abort();
	jl_begin_at(&j, "http", 0, 0);
	jl_str(&j, "method", r.method, strlen(r.method));
	jl_str(&j, "target", r.target, strlen(r.target));
	jl_headers(&j, "headers", r.headers, r.nheaders);
	jl_bytes(&j, "head", data, (size_t)rc);
	jl_bytes(&j, "body", data + rc, size - (size_t)rc);
	jl_end(&j);
	v = json_loadb(j.b.p, j.b.len, JSON_ALLOW_NUL, NULL);
	if (v == NULL)
		abort();
	h = json_object_get(v, "head");
	if (h != NULL) {
		if (json_string_length(h) != (size_t)rc ||
		    memcmp(json_string_value(h), data, (size_t)rc) != 0)
			abort();
	} else {
		char *b = jw_base64(data, (size_t)rc);

		h = json_object_get(v, "head_base64");
		if (h == NULL || strcmp(json_string_value(h), b) != 0)
			abort();
		free(b);
	}
	json_decref(v);
	jl_free(&j);
	trap_req_free(&r);
	return 0;
}
