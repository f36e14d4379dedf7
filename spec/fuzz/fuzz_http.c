/*
 * libFuzzer target for the HTTP request reader (src/common/http.c). The
 * input is put in a connection's buffer with fd -1, so http_read_request parses
 * exactly those bytes and sees end of stream after them; requests are read
 * until an error, as a keep-alive connection would. Small limits make the
 * size checks reachable. Invariants checked: a parsed request has its
 * strings, a NUL-terminated body of body_len bytes within max_body, and the
 * reader always consumes or stops.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_limits lim = { .max_header_bytes = 512,
		.max_body = 4096,
		.idle_ms = 10,
		.header_ms = 10 };
	struct http_conn c;
	struct http_request req;
	size_t before;
	int rc, n = 0;

	memset(&c, 0, sizeof(c));
	c.fd = -1;
	if (buf_add(&c.in, data, size) < 0)
		return 0;
	for (;;) {
		before = c.in.len;
		rc = http_read_request(&c, &req, &lim);
		if (rc != HTTP_OK)
			break;
		if (req.method == NULL || req.target == NULL ||
		    req.path == NULL || req.body == NULL ||
		    req.body_len > lim.max_body ||
		    req.body[req.body_len] != '\0' || c.in.len >= before)
			abort();
		(void)http_header(&req, "content-type");
		http_request_free(&req);
		if (++n > 10000)
			abort();
	}
	if (rc != HTTP_EOF && http_error_status(rc) == 0 && rc != HTTP_IO)
		abort();
	buf_free(&c.in);
	return 0;
}
