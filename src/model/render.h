/*
 * Response generators of the scripted model: one assistant message written
 * either as the Messages API's JSON object (non-streaming) or as its SSE
 * event stream (message_start, content_block_start/delta/stop per block,
 * message_delta, message_stop; every event with an "event:" line), and the
 * API's error body. Pure functions over a struct message; output goes into
 * a growable struct buf (common/buf.h) owned by the caller.
 *
 * Faithfulness notes (Anthropic streaming docs, CLAUDE_CODE.md §1.2): text
 * arrives as a few text_delta chunks split on UTF-8 boundaries; tool input
 * as an empty input_json_delta followed by chunks of its compact JSON;
 * thinking as thinking_delta chunks and one signature_delta just before
 * content_block_stop; usage carries zeroed cache fields and message_delta's
 * counts are cumulative.
 */
#ifndef LEAKBENCH_MODEL_RENDER_H
#define LEAKBENCH_MODEL_RENDER_H

#include <stddef.h>

#include <jansson.h>

#include "common/buf.h"
#include "model/ids.h"
#include "model/script.h"

struct msg_block {
	enum block_type type;
	char *text;	  /* text or thinking; owned */
	size_t text_len;  /* may hold NULs from templating */
	char *signature;  /* thinking; owned */
	char id[IDS_BUF]; /* tool_use */
	char *name;	  /* tool_use; owned */
	json_t *input;	  /* tool_use; owned reference */
};

struct message {
	char id[IDS_BUF];	  /* "msg_01..." */
	char *model;		  /* owned */
	struct msg_block *blocks; /* owned */
	size_t nblocks;
	const char *stop_reason; /* static: "end_turn", ... */
	long long input_tokens;
	long long output_tokens;
};

/* Frees what a message owns (not the struct itself); safe on zeroes. */
void message_free(struct message *m);

/* Estimates output_tokens from the blocks (about bytes / 4, at least 1). */
void message_count_output(struct message *m);

/* The non-streaming body. 0 or -1 (out of memory). */
int render_json(struct buf *out, const struct message *m);

/* SSE pieces, appended to out; each 0 or -1. */
int render_sse_start(struct buf *out, const struct message *m);
int render_sse_block(struct buf *out, const struct message *m, size_t i);
int render_sse_end(struct buf *out, const struct message *m);
int render_sse_ping(struct buf *out);
int render_sse_error(struct buf *out, const char *type, const char *msg);

/* The whole stream: start, every block, end. */
int render_sse(struct buf *out, const struct message *m);

/*
 * The API's error body:
 * {"type":"error","error":{"type":T,"message":M},"request_id":R}.
 */
int render_error(struct buf *out, const char *type, const char *msg,
    const char *request_id);

/* Appends v as compact JSON. 0 or -1. */
int render_dump(struct buf *out, json_t *v);

/* Splits len bytes of UTF-8 into chunks no longer than about max bytes,
 * never inside a character: returns the length of the first chunk. */
size_t render_chunk_len(const char *s, size_t len, size_t max);

#endif
