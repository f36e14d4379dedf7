/*
 * The scripted model's HTTP side: routes requests read by http.c to the
 * engine and writes the Messages API's responses (SSE with chunked
 * transfer, or JSON), the API's error bodies, and one log line per answered
 * request.
 *
 *	POST /v1/messages		the script (any query, e.g. ?beta=true)
 *	POST /v1/messages/count_tokens	{"input_tokens": N}
 *	HEAD|GET /api/hello		200, empty
 *	GET /v1/models[/ID]		the scripted model's id
 *	anything else			404 not_found_error
 *
 * Log lines go to the server's log stream, one per request, flushed:
 *	lb-model: #3 POST /v1/messages stream turn 2/3 tool_use fault=none
 *	lb-model: #4 POST /v1/messages json side-request title
 *	lb-model: #5 POST /v1/messages stream turn 2/3 fault=http 529
 *	lb-model: #6 POST /v1/messages stream exhausted final fault=none
 *	lb-model: #7 POST /v1/messages error 400 request cap 200 reached
 *	lb-model: #8 POST /v1/messages stream subagent turn 1/2 tool_use fault=none
 *	lb-model: #9 POST /v1/messages stream subagent exhausted final fault=none
 * "subagent" marks a request played from the subagent script (it carried
 * x-claude-code-agent-id; see engine.h). They never hold request content
 * beyond the path (without its query).
 */
#ifndef LEAKBENCH_MODEL_SERVER_H
#define LEAKBENCH_MODEL_SERVER_H

#include <pthread.h>
#include <stdio.h>

#include "common/http.h"
#include "model/engine.h"

#define SERVER_PING_MS 500 /* ping interval during a delay fault */

struct model_server {
	struct engine *engine; /* not owned */
	struct http_limits limits;
	FILE *log; /* usually stdout */
	pthread_mutex_t log_lock;
	unsigned long nreq;	/* requests answered, for logs */
	char org_id[40];	/* anthropic-organization-id */
	const char *record_dir; /* NULL, or where request bodies
						   are saved (debugging aid) */
};

/* Sets up srv around an engine; 0, or -1 (errno set). */
int model_server_init(struct model_server *srv, struct engine *e, FILE *log);
void model_server_fini(struct model_server *srv);

/* The http_handler: serves one connection until it closes. */
void model_server_handle(struct http_conn *c, void *ctx);

#endif
