/*
 * Writing messages as JSON and as SSE. Events are built as jansson values
 * and dumped compactly straight into the output buffer; insertion order is
 * kept, so "type" leads every object as in the real API's output.
 */
#include <stdlib.h>
#include <string.h>

#include "model/render.h"

void
message_free(struct message *m)
{
	size_t i;

	for (i = 0; i < m->nblocks; i++) {
		free(m->blocks[i].text);
		free(m->blocks[i].signature);
		free(m->blocks[i].name);
		json_decref(m->blocks[i].input);
	}
	free(m->blocks);
	free(m->model);
	m->blocks = NULL;
	m->model = NULL;
	m->nblocks = 0;
}

void
message_count_output(struct message *m)
{
	size_t bytes = 0, i;
	char *s;

	for (i = 0; i < m->nblocks; i++) {
		bytes += m->blocks[i].text_len;
		if (m->blocks[i].input != NULL &&
		    (s = json_dumps(m->blocks[i].input, JSON_COMPACT)) !=
			NULL) {
			bytes += strlen(s);
			free(s);
		}
		if (m->blocks[i].name != NULL)
			bytes += strlen(m->blocks[i].name) + 16;
	}
	m->output_tokens = (long long)(bytes / 4) + 1;
}

size_t
render_chunk_len(const char *s, size_t len, size_t max)
{
	size_t n;

	if (len <= max || max == 0)
		return len;
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n > 0 ? n : max;
}

/* Chunk size for a text of len bytes: a few chunks, none huge. */
static size_t
chunk_max(size_t len)
{
	size_t max = (len + 2) / 3;

	if (max < 16)
		max = 16;
	if (max > 4096)
		max = 4096;
	return max;
}

static int
dump_cb(const char *p, size_t len, void *data)
{
	return buf_add(data, p, len);
}

int
render_dump(struct buf *out, json_t *v)
{
	return json_dump_callback(v, dump_cb, out, JSON_COMPACT);
}

/* Appends "event: NAME\ndata: JSON\n\n" and drops the reference to ev. */
static int
event(struct buf *out, const char *name, json_t *ev)
{
	int rc;

	if (ev == NULL)
		return -1;
	rc = buf_add(out, "event: ", 7);
	if (rc == 0)
		rc = buf_add(out, name, strlen(name));
	if (rc == 0)
		rc = buf_add(out, "\ndata: ", 7);
	if (rc == 0)
		rc = json_dump_callback(ev, dump_cb, out, JSON_COMPACT);
	if (rc == 0)
		rc = buf_add(out, "\n\n", 2);
	json_decref(ev);
	return rc;
}

static json_t *
usage(const struct message *m, int final)
{
	json_t *u;

	u = json_pack("{s:I, s:i, s:i, s:{s:i, s:i}, s:I, s:s}", "input_tokens",
	    (json_int_t)m->input_tokens, "cache_creation_input_tokens", 0,
	    "cache_read_input_tokens", 0, "cache_creation",
	    "ephemeral_5m_input_tokens", 0, "ephemeral_1h_input_tokens", 0,
	    "output_tokens", (json_int_t)(final ? m->output_tokens : 1),
	    "service_tier", "standard");
	return u;
}

/* The complete block as it appears in a non-streaming message. */
static json_t *
block_json(const struct msg_block *b)
{
	switch (b->type) {
	case BLOCK_TEXT:
		return json_pack("{s:s, s:s%}", "type", "text", "text", b->text,
		    b->text_len);
	case BLOCK_THINKING:
		return json_pack("{s:s, s:s%, s:s}", "type", "thinking",
		    "thinking", b->text, b->text_len, "signature",
		    b->signature ? b->signature : "");
	case BLOCK_TOOL_USE:
		return json_pack("{s:s, s:s, s:s, s:O}", "type", "tool_use",
		    "id", b->id, "name", b->name, "input", b->input);
	}
	return NULL;
}

int
render_json(struct buf *out, const struct message *m)
{
	json_t *msg, *content, *b;
	size_t i;
	int rc;

	if ((content = json_array()) == NULL)
		return -1;
	for (i = 0; i < m->nblocks; i++) {
		if ((b = block_json(&m->blocks[i])) == NULL ||
		    json_array_append_new(content, b) < 0) {
			json_decref(content);
			return -1;
		}
	}
	msg = json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:n, s:o}", "id", m->id,
	    "type", "message", "role", "assistant", "model", m->model,
	    "content", content, "stop_reason", m->stop_reason, "stop_sequence",
	    "usage", usage(m, 1));
	if (msg == NULL)
		return -1;
	rc = json_dump_callback(msg, dump_cb, out, JSON_COMPACT);
	json_decref(msg);
	return rc;
}

int
render_sse_ping(struct buf *out)
{
	return event(out, "ping", json_pack("{s:s}", "type", "ping"));
}

int
render_sse_start(struct buf *out, const struct message *m)
{
	json_t *ev;

	ev = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:[], s:n, s:n, s:o}}",
	    "type", "message_start", "message", "id", m->id, "type", "message",
	    "role", "assistant", "model", m->model, "content", "stop_reason",
	    "stop_sequence", "usage", usage(m, 0));
	if (event(out, "message_start", ev) < 0)
		return -1;
	return render_sse_ping(out);
}

/* content_block_delta events carrying s in chunks as delta.<field>. */
static int
deltas(struct buf *out, size_t index, const char *dtype, const char *field,
    const char *s, size_t len)
{
	size_t max = chunk_max(len), n;

	while (len > 0) {
		n = render_chunk_len(s, len, max);
		if (event(out, "content_block_delta",
			json_pack("{s:s, s:I, s:{s:s, s:s%}}", "type",
			    "content_block_delta", "index", (json_int_t)index,
			    "delta", "type", dtype, field, s, n)) < 0)
			return -1;
		s += n;
		len -= n;
	}
	return 0;
}

int
render_sse_block(struct buf *out, const struct message *m, size_t i)
{
	const struct msg_block *b = &m->blocks[i];
	json_t *start;
	char *js;
	int rc;

	switch (b->type) {
	case BLOCK_TEXT:
		start = json_pack("{s:s, s:s}", "type", "text", "text", "");
		break;
	case BLOCK_THINKING:
		start = json_pack("{s:s, s:s, s:s}", "type", "thinking",
		    "thinking", "", "signature", "");
		break;
	case BLOCK_TOOL_USE:
		start = json_pack("{s:s, s:s, s:s, s:{}}", "type", "tool_use",
		    "id", b->id, "name", b->name, "input");
		break;
	default:
		return -1;
	}
	if (event(out, "content_block_start",
		json_pack("{s:s, s:I, s:o}", "type", "content_block_start",
		    "index", (json_int_t)i, "content_block", start)) < 0)
		return -1;
	switch (b->type) {
	case BLOCK_TEXT:
		rc = deltas(out, i, "text_delta", "text", b->text, b->text_len);
		break;
	case BLOCK_THINKING:
		rc = deltas(out, i, "thinking_delta", "thinking", b->text,
		    b->text_len);
		if (rc == 0)
			rc = event(out, "content_block_delta",
			    json_pack("{s:s, s:I, s:{s:s, s:s}}", "type",
				"content_block_delta", "index", (json_int_t)i,
				"delta", "type", "signature_delta", "signature",
				b->signature ? b->signature : ""));
		break;
	case BLOCK_TOOL_USE:
		if ((js = json_dumps(b->input, JSON_COMPACT)) == NULL)
			return -1;
		rc = event(out, "content_block_delta",
		    json_pack("{s:s, s:I, s:{s:s, s:s}}", "type",
			"content_block_delta", "index", (json_int_t)i, "delta",
			"type", "input_json_delta", "partial_json", ""));
		if (rc == 0)
			rc = deltas(out, i, "input_json_delta", "partial_json",
			    js, strlen(js));
		free(js);
		break;
	default:
		rc = -1;
	}
	if (rc < 0)
		return -1;
	return event(out, "content_block_stop",
	    json_pack("{s:s, s:I}", "type", "content_block_stop", "index",
		(json_int_t)i));
}

int
render_sse_end(struct buf *out, const struct message *m)
{
	if (event(out, "message_delta",
		json_pack("{s:s, s:{s:s, s:n}, s:o}", "type", "message_delta",
		    "delta", "stop_reason", m->stop_reason, "stop_sequence",
		    "usage", usage(m, 1))) < 0)
		return -1;
	return event(out, "message_stop",
	    json_pack("{s:s}", "type", "message_stop"));
}

int
render_sse_error(struct buf *out, const char *type, const char *msg)
{
	return event(out, "error",
	    json_pack("{s:s, s:{s:s, s:s}}", "type", "error", "error", "type",
		type, "message", msg));
}

int
render_sse(struct buf *out, const struct message *m)
{
	size_t i;

	if (render_sse_start(out, m) < 0)
		return -1;
	for (i = 0; i < m->nblocks; i++)
		if (render_sse_block(out, m, i) < 0)
			return -1;
	return render_sse_end(out, m);
}

int
render_error(struct buf *out, const char *type, const char *msg,
    const char *request_id)
{
	json_t *e;
	int rc;

	e = json_pack("{s:s, s:{s:s, s:s}, s:s}", "type", "error", "error",
	    "type", type, "message", msg, "request_id", request_id);
	if (e == NULL)
		return -1;
	rc = json_dump_callback(e, dump_cb, out, JSON_COMPACT);
	json_decref(e);
	return rc;
}
