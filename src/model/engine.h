/*
 * The scripted model's decisions: given a Messages API request, which
 * answer to give. Pure logic over a loaded script, no sockets; the HTTP
 * layer (server.c) renders what engine_answer decides.
 *
 * Position in the script comes from the tool_use ids already in the
 * request's history, never from counting messages (Claude Code merges
 * consecutive assistant messages and tool results, so counts drift):
 * position = 1 + the highest turn whose tool_use id, minted by this server
 * run, appears in an assistant tool_use block or a user tool_result's
 * tool_use_id; 0 when none does. A position past the last turn gets the
 * script's final end_turn text.
 *
 * Subagent requests (the client says so: Claude Code sends the header
 * x-claude-code-agent-id on every request of a subagent it spawned, and
 * server.c sets mreq.subagent from it) play the script's subagent script
 * instead, from a position found the same way among the subagent script's
 * own ids (ids.h: IDS_SUBAGENT_TURN), so the main conversation's ids never
 * move a subagent and a subagent's never move the main conversation. A
 * subagent's first request, which holds none of them, starts at its turn
 * 0; every subagent conversation (any agent id, nested or not) plays it
 * from its own position.
 *
 * A subject's own model calls (script.h, "replies"): a request whose
 * system prompt or first user message holds a reply's match gets that
 * reply, before anything else is considered; it neither advances the
 * script nor consumes a fault.
 *
 * Side requests do not advance the script and do not consume faults:
 * max_tokens <= 1 (probes), a structured-output request (output_format or
 * output_config.format), no tools at all (titles, summaries, other
 * auxiliary queries), or a compaction request. They get a short valid
 * answer; a JSON-schema request gets a minimal instance of its schema.
 *
 * Templates, expanded in text, thinking, the final text and every string
 * value inside tool input (recursively; object keys are left alone):
 *	{{last_result}}	the text of the most recent tool_result block in
 *			the request: its string content, or the text of its
 *			text blocks concatenated; "" when there is none.
 *			The <system-reminder> sections Claude Code appends
 *			to a result are not part of it.
 * Any other {{...}} is left as written.
 *
 * Faults belong to a turn and fire once each, in order, on successive
 * requests that reach that turn (faults of trailing fault-only turns
 * belong to the final answer); a subagent turn's faults are shared by all
 * subagent conversations. After max_requests /v1/messages requests (main,
 * subagent and side requests alike) every further one is refused, which
 * ends any loop.
 *
 * Thread safety: one struct engine serves all connections; its mutable
 * state (request count, fault cursors) is under a mutex.
 */
#ifndef LEAKBENCH_MODEL_ENGINE_H
#define LEAKBENCH_MODEL_ENGINE_H

#include <pthread.h>
#include <stddef.h>

#include <jansson.h>

#include "model/ids.h"
#include "model/render.h"
#include "model/script.h"

#define ENGINE_MAX_EXPANSION (16u << 20) /* bytes per expanded string */

struct engine {
	struct script *script; /* owned */
	struct ids ids;
	int max_requests;
	pthread_mutex_t lock;
	size_t *fault_next;	/* per turn, then the final answer: the
					   index of its next fault */
	size_t *sub_fault_next; /* the same for the subagent script */
	unsigned long requests; /* /v1/messages requests seen */
	unsigned long serial;	/* message ids */
};

/*
 * Takes ownership of s. max_requests <= 0 means the script's own. Returns
 * NULL only when out of memory (s is freed then).
 */
struct engine *engine_new(struct script *s, const struct ids *ids,
    int max_requests);
void engine_free(struct engine *e);

/* A parsed request body; root is owned, the other pointers point into it. */
struct mreq {
	json_t *root;
	const char *model; /* NULL when absent */
	json_t *messages;  /* an array */
	int stream;
	long long max_tokens; /* -1 when absent */
	size_t body_len;
	int subagent; /* a subagent's request: set by the
					   caller, from the HTTP headers */
};

/*
 * Parses and checks a /v1/messages (or, with count_tokens set,
 * /v1/messages/count_tokens) body. Returns 0, or -1 with an
 * invalid_request_error message in err that never quotes the body.
 */
int mreq_parse(const void *body, size_t len, int count_tokens, struct mreq *r,
    char *err, size_t errlen);
void mreq_free(struct mreq *r);

/* Script position for a request's messages (see above). */
size_t engine_position(const struct engine *e, json_t *messages);

/* The same in the subagent script, for a subagent's request. */
size_t engine_subagent_position(const struct engine *e, json_t *messages);

/*
 * The text of the most recent tool_result in messages, malloc'd (caller
 * frees), its length in *len; "" when there is none. NULL when out of
 * memory.
 */
char *engine_last_result(json_t *messages, size_t *len);

/*
 * Expands templates in s (NUL-terminated). Returns a malloc'd string, its
 * length in *outlen (it may hold NULs from the tool result), NULL when out
 * of memory. Output past ENGINE_MAX_EXPANSION bytes is cut.
 */
char *engine_expand(const char *s, const char *result, size_t result_len,
    size_t *outlen);

/* The same over a JSON value: a new value with every string expanded. */
json_t *engine_expand_json(json_t *v, const char *result, size_t result_len);

/*
 * Which of s's replies answers the request root: *which is its 1-based
 * index, 0 when none matches. Returns 0, or -1 when out of memory.
 */
int engine_reply(const struct script *s, json_t *root, size_t *which);

/* The side-request kind of a request, or NULL for a main-loop request. */
const char *engine_side_kind(json_t *root);

/* A minimal JSON instance of a JSON schema (new reference). */
json_t *engine_schema_example(json_t *schema);

enum answer_what {
	ANSWER_TURN,  /* a scripted turn (possibly with a fault) */
	ANSWER_SIDE,  /* a side request's short answer */
	ANSWER_FINAL, /* the script is exhausted */
	ANSWER_CAP,   /* the request cap was reached */
	ANSWER_REPLY  /* one of the script's replies (a subject's call) */
};

struct answer {
	enum answer_what what;
	unsigned long n;    /* this /v1/messages request's number */
	const char *side;   /* ANSWER_SIDE: "probe", "title", ... */
	int subagent;	    /* TURN, FINAL: of the subagent script */
	size_t turn;	    /* ANSWER_TURN: 0-based; FINAL: nturns */
	size_t nturns;	    /* of the script played */
	size_t reply;	    /* ANSWER_REPLY: 1-based index in replies */
	struct fault fault; /* kind FAULT_NONE when none fired;
					   error_type points into the script */
	int status;	    /* 200, or the error status */
	char error_type[40];
	char error_message[160];
	char request_id[IDS_BUF];
	struct message msg; /* status 200 (stream_error too) */
};

/*
 * Decides the answer to a parsed /v1/messages request. Returns 0 and fills
 * *a (free with answer_free), or -1 when out of memory.
 */
int engine_answer(struct engine *e, const struct mreq *r, struct answer *a);
void answer_free(struct answer *a);

/* A fresh "req_01..." id for responses that are not answers. */
void engine_request_id(struct engine *e, char *out);

#endif
