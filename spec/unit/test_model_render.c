/*
 * The scripted model's response generators: the SSE stream is parsed back
 * event by event (every event has an "event:" line naming its data's type),
 * its order checked against the Messages API's, and the text, thinking and
 * tool input reassembled from their deltas; the non-streaming JSON and the
 * error body are checked field by field.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "model/render.h"

struct ev {
	char name[32];
	json_t *data;
};

/* Parses an SSE stream; returns the number of events, -1 if malformed. */
static int
parse_sse(const char *s, struct ev *evs, int max)
{
	const char *end, *nl;
	int n = 0;

	while (*s != '\0') {
		if (n == max || strncmp(s, "event: ", 7) != 0)
			return -1;
		s += 7;
		nl = strchr(s, '\n');
		if (nl == NULL || (size_t)(nl - s) >= sizeof(evs[n].name))
			return -1;
		memcpy(evs[n].name, s, (size_t)(nl - s));
		evs[n].name[nl - s] = '\0';
		s = nl + 1;
		if (strncmp(s, "data: ", 6) != 0)
			return -1;
		s += 6;
		end = strstr(s, "\n\n");
		if (end == NULL)
			return -1;
		evs[n].data = json_loadb(s, (size_t)(end - s), JSON_ALLOW_NUL,
		    NULL);
		if (evs[n].data == NULL)
			return -1;
		n++;
		s = end + 2;
	}
	return n;
}

static void
free_evs(struct ev *evs, int n)
{
	while (n-- > 0)
		json_decref(evs[n].data);
}

static const char *
str(json_t *v, const char *path)
{
	char key[64];
	const char *dot;

	while ((dot = strchr(path, '.')) != NULL) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		v = json_object_get(v, key);
		path = dot + 1;
	}
	v = json_object_get(v, path);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static long long
num(json_t *v, const char *path)
{
	char key[64];
	const char *dot;

	while ((dot = strchr(path, '.')) != NULL) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		v = json_object_get(v, key);
		path = dot + 1;
	}
	v = json_object_get(v, path);
	return json_is_integer(v) ? json_integer_value(v) : -999;
}

static void
make_message(struct message *m, const char *text, json_t *input)
{
	memset(m, 0, sizeof(*m));
	strcpy(m->id, "msg_01test");
	m->model = strdup("claude-test");
	m->blocks = calloc(3, sizeof(*m->blocks));
	m->nblocks = 3;
	m->blocks[0].type = BLOCK_THINKING;
	m->blocks[0].text = strdup("pondering");
	m->blocks[0].text_len = 9;
	m->blocks[0].signature = strdup("EqSIG");
	m->blocks[1].type = BLOCK_TEXT;
	m->blocks[1].text = strdup(text);
	m->blocks[1].text_len = strlen(text);
	m->blocks[2].type = BLOCK_TOOL_USE;
	strcpy(m->blocks[2].id, "toolu_01abc");
	m->blocks[2].name = strdup("Read");
	m->blocks[2].input = input;
	m->stop_reason = "tool_use";
	m->input_tokens = 21000;
	message_count_output(m);
}

static void
test_sse(void)
{
	/* long enough for several chunks, with multibyte characters */
	const char *text =
	    "Let me look at the file — é, ü, 日本語, and more "
	    "text so that it is split into several deltas of the stream.";
	json_t *input = json_pack("{s:s, s:[i, s]}", "file_path",
	    "/work/.env — ünïcode", "n", 1, "x");
	struct buf out = { 0 };
	struct ev evs[64];
	struct message m;
	char got[512] = "", thinking[64] = "", partial[512] = "", *want;
	int n, i, ntext = 0, order_ok = 1, names_ok = 1;
	const char *t;
	json_t *back;

	make_message(&m, text, input);
	ok(render_sse(&out, &m) == 0, "the stream renders");
	n = parse_sse(out.p, evs, 64);
	ok(n > 10, "it parses as SSE (%d events)", n);
	if (n <= 10)
		return;
	for (i = 0; i < n; i++)
		if (strcmp(evs[i].name, str(evs[i].data, "type")) != 0)
			names_ok = 0;
	ok(names_ok, "every event's name is its data's type");
	is_str(evs[0].name, "message_start", "message_start first");
	is_str(str(evs[0].data, "message.id"), "msg_01test", "message id");
	is_str(str(evs[0].data, "message.role"), "assistant", "role");
	is_str(str(evs[0].data, "message.model"), "claude-test", "model");
	ok(json_is_null(json_object_get(json_object_get(evs[0].data, "message"),
	       "stop_reason")),
	    "stop_reason null at the start");
	ok(json_array_size(
	       json_object_get(json_object_get(evs[0].data, "message"),
		   "content")) == 0,
	    "empty content at the start");
	is_int(num(evs[0].data, "message.usage.input_tokens"), 21000,
	    "input tokens");
	is_int(num(evs[0].data, "message.usage.cache_read_input_tokens"), 0,
	    "cache read zeroed");
	is_int(num(evs[0].data, "message.usage.cache_creation_input_tokens"), 0,
	    "cache creation zeroed");
	is_str(evs[1].name, "ping", "a ping after message_start");
	is_str(evs[n - 2].name, "message_delta", "message_delta");
	is_str(str(evs[n - 2].data, "delta.stop_reason"), "tool_use",
	    "stop_reason tool_use");
	ok(json_is_null(
	       json_object_get(json_object_get(evs[n - 2].data, "delta"),
		   "stop_sequence")),
	    "stop_sequence null");
	is_int(num(evs[n - 2].data, "usage.output_tokens"), m.output_tokens,
	    "cumulative output tokens");
	is_int(num(evs[n - 2].data, "usage.input_tokens"), 21000,
	    "input tokens repeated");
	is_str(evs[n - 1].name, "message_stop", "message_stop last");

	/* blocks: start, deltas, stop, with increasing indices */
	{
		int idx = -1, open = 0;

		for (i = 2; i < n - 2; i++) {
			t = evs[i].name;
			if (strcmp(t, "content_block_start") == 0) {
				if (open ||
				    num(evs[i].data, "index") != idx + 1)
					order_ok = 0;
				idx++;
				open = 1;
			} else if (strcmp(t, "content_block_delta") == 0) {
				if (!open || num(evs[i].data, "index") != idx)
					order_ok = 0;
				t = str(evs[i].data, "delta.type");
				if (strcmp(t, "text_delta") == 0) {
					strcat(got,
					    str(evs[i].data, "delta.text"));
					ntext++;
				} else if (strcmp(t, "thinking_delta") == 0)
					strcat(thinking,
					    str(evs[i].data, "delta.thinking"));
				else if (strcmp(t, "signature_delta") == 0) {
					if (strcmp(evs[i + 1].name,
						"content_block_stop") != 0)
						order_ok = 0;
				} else if (strcmp(t, "input_json_delta") == 0)
					strcat(partial,
					    str(evs[i].data,
						"delta.partial_json"));
			} else if (strcmp(t, "content_block_stop") == 0) {
				if (!open || num(evs[i].data, "index") != idx)
					order_ok = 0;
				open = 0;
			} else
				order_ok = 0;
		}
		ok(order_ok && idx == 2 && !open,
		    "blocks in order, each "
		    "started and stopped");
	}
	is_str(str(evs[2].data, "content_block.type"), "thinking",
	    "thinking block start");
	is_str(str(evs[2].data, "content_block.signature"), "",
	    "with an empty signature");
	is_str(thinking, "pondering", "thinking reassembled");
	is_str(got, text, "text reassembled from its deltas");
	ok(ntext >= 3, "text came in several deltas (%d)", ntext);
	back = json_loads(partial, 0, NULL);
	ok(back != NULL && json_equal(back, input),
	    "tool input reassembled from partial_json");
	json_decref(back);
	for (i = 0; i < n; i++)
		if (strcmp(str(evs[i].data, "type"), "content_block_start") ==
			0 &&
		    num(evs[i].data, "index") == 2)
			break;
	is_str(str(evs[i].data, "content_block.id"), "toolu_01abc",
	    "tool_use id in the start");
	is_str(str(evs[i].data, "content_block.name"), "Read", "tool name");
	ok(json_object_size(
	       json_object_get(json_object_get(evs[i].data, "content_block"),
		   "input")) == 0,
	    "start input is {}");
	is_str(str(evs[i + 1].data, "delta.partial_json"), "",
	    "first partial_json is empty");
	free_evs(evs, n);

	/* JSON */
	buf_reset(&out);
	ok(render_json(&out, &m) == 0, "the JSON renders");
	back = json_loads(out.p, 0, NULL);
	ok(back != NULL, "it parses");
	is_str(str(back, "type"), "message", "type message");
	is_str(str(back, "stop_reason"), "tool_use", "stop_reason");
	is_int(num(back, "usage.output_tokens"), m.output_tokens, "usage");
	want = json_dumps(json_object_get(back, "content"), JSON_COMPACT);
	ok(want != NULL && strstr(want, "\"signature\":\"EqSIG\"") != NULL,
	    "the thinking block carries its signature");
	is_str(str(json_array_get(json_object_get(back, "content"), 1), "text"),
	    text, "the text whole");
	ok(json_equal(json_object_get(json_array_get(json_object_get(back,
							 "content"),
					  2),
			  "input"),
	       input),
	    "the tool input whole");
	free(want);
	json_decref(back);
	message_free(&m);
	buf_free(&out);
}

static void
test_small_pieces(void)
{
	struct buf out = { 0 };
	struct ev evs[4];
	json_t *e;
	int n;

	ok(render_sse_error(&out, "overloaded_error", "Overloaded") == 0,
	    "an error event renders");
	is_str(out.p,
	    "event: error\ndata: {\"type\":\"error\",\"error\":"
	    "{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
	    "the error event, exactly");
	buf_reset(&out);
	render_sse_ping(&out);
	is_str(out.p, "event: ping\ndata: {\"type\":\"ping\"}\n\n", "ping");
	n = parse_sse(out.p, evs, 4);
	is_int(n, 1, "one event");
	free_evs(evs, n);
	buf_reset(&out);
	ok(render_error(&out, "not_found_error", "Not found", "req_01x") == 0,
	    "an error body renders");
	is_str(out.p,
	    "{\"type\":\"error\",\"error\":{\"type\":"
	    "\"not_found_error\",\"message\":\"Not found\"},\"request_id\":"
	    "\"req_01x\"}",
	    "the error body, exactly");
	e = json_loads(out.p, 0, NULL);
	ok(e != NULL, "it is JSON");
	json_decref(e);
	buf_free(&out);
}

static void
test_chunks(void)
{
	const char *s = "ab\xc3\xa9"
			"cd"; /* "abécd" */

	is_int(render_chunk_len(s, 6, 10), 6, "short: whole");
	is_int(render_chunk_len(s, 6, 3), 2, "never inside a character");
	is_int(render_chunk_len(s, 6, 4), 4, "after the character");
	is_int(render_chunk_len(s, 6, 2), 2, "on a boundary");
}

static void
test_nul_text(void)
{
	struct buf out = { 0 };
	struct message m;
	struct ev evs[16];
	json_t *back;
	int n;

	memset(&m, 0, sizeof(m));
	strcpy(m.id, "msg_01x");
	m.model = strdup("m");
	m.blocks = calloc(1, sizeof(*m.blocks));
	m.nblocks = 1;
	m.blocks[0].type = BLOCK_TEXT;
	m.blocks[0].text = malloc(3);
	memcpy(m.blocks[0].text, "a\0b", 3);
	m.blocks[0].text_len = 3;
	m.stop_reason = "end_turn";
	ok(render_sse(&out, &m) == 0 && strstr(out.p, "a\\u0000b"),
	    "a NUL in text is escaped in the stream");
	n = parse_sse(out.p, evs, 16);
	ok(n == 7, "text-only stream: 7 events (%d)", n);
	free_evs(evs, n > 0 ? n : 0);
	buf_reset(&out);
	render_json(&out, &m);
	back = json_loads(out.p, JSON_ALLOW_NUL, NULL);
	ok(back != NULL, "and in JSON");
	json_decref(back);
	message_free(&m);
	buf_free(&out);
}

int
main(void)
{
	test_sse();
	test_small_pieces();
	test_chunks();
	test_nul_text();
	return tap_done();
}
