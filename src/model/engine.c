/*
 * The scripted model's engine: request checks, script position, side
 * requests, templates, faults and the request cap (see engine.h). Request
 * bodies are hostile: every field is type-checked before use, nothing of
 * their content is echoed in an error, and their size only ever scales
 * work linearly.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/engine.h"

#define TEMPLATE_LAST_RESULT "{{last_result}}"
#define COMPACT_MARKER	     "CRITICAL: Respond with TEXT ONLY"
#define SCHEMA_MAX_DEPTH     16

struct engine *
engine_new(struct script *s, const struct ids *ids, int max_requests)
{
	struct engine *e;

	if ((e = calloc(1, sizeof(*e))) == NULL)
		goto fail;
	/* one fault cursor per turn, and one for the final answer */
	if ((e->fault_next = calloc(s->nturns + 1, sizeof(size_t))) == NULL ||
	    (e->sub_fault_next = calloc(s->subagent->nturns + 1,
		 sizeof(size_t))) == NULL)
		goto fail;
	if (pthread_mutex_init(&e->lock, NULL) != 0)
		goto fail;
	e->script = s;
	e->ids = *ids;
	e->max_requests = max_requests > 0 ? max_requests : s->max_requests;
	return e;
fail:
	if (e != NULL) {
		free(e->fault_next);
		free(e->sub_fault_next);
	}
	free(e);
	script_free(s);
	return NULL;
}

void
engine_free(struct engine *e)
{
	if (e == NULL)
		return;
	pthread_mutex_destroy(&e->lock);
	script_free(e->script);
	free(e->fault_next);
	free(e->sub_fault_next);
	free(e);
}

void
engine_request_id(struct engine *e, char *out)
{
	unsigned long n;

	pthread_mutex_lock(&e->lock);
	n = ++e->serial;
	pthread_mutex_unlock(&e->lock);
	ids_serial(&e->ids, "req_01", n, out);
}

/* ---- requests ---- */

void
mreq_free(struct mreq *r)
{
	json_decref(r->root);
	memset(r, 0, sizeof(*r));
}

/* Each message an object with a role and a content. 0, or -1 with err. */
static int
check_messages(json_t *messages, char *err, size_t errlen)
{
	const char *role;
	json_t *m, *v;
	size_t i;

	json_array_foreach(messages, i, m)
	{
		if (!json_is_object(m)) {
			snprintf(err, errlen,
			    "messages.%zu: Input should be an "
			    "object",
			    i);
			return -1;
		}
		v = json_object_get(m, "role");
		role = json_is_string(v) ? json_string_value(v) : "";
		if (strcmp(role, "user") != 0 &&
		    strcmp(role, "assistant") != 0) {
			snprintf(err, errlen,
			    "messages.%zu.role: Input should "
			    "be 'user' or 'assistant'",
			    i);
			return -1;
		}
		v = json_object_get(m, "content");
		if (!json_is_string(v) && !json_is_array(v)) {
			snprintf(err, errlen,
			    "messages.%zu.content: Input "
			    "should be a valid string or list",
			    i);
			return -1;
		}
	}
	return 0;
}

/*
 * max_tokens, required but for count_tokens, a whole number >= 0, into
 * r->max_tokens. 0, or -1 with err.
 */
static int
check_max_tokens(json_t *root, int count_tokens, struct mreq *r, char *err,
    size_t errlen)
{
	json_t *v;

	v = json_object_get(root, "max_tokens");
	if (v == NULL && !count_tokens) {
		snprintf(err, errlen, "max_tokens: Field required");
		return -1;
	}
	if (v != NULL) {
		if (!json_is_integer(v)) {
			snprintf(err, errlen,
			    "max_tokens: Input should be a "
			    "valid integer");
			return -1;
		}
		r->max_tokens = json_integer_value(v);
		if (r->max_tokens < 0) {
			snprintf(err, errlen,
			    "max_tokens: Input should be "
			    "greater than or equal to 0");
			return -1;
		}
	}
	return 0;
}

int
mreq_parse(const void *body, size_t len, int count_tokens, struct mreq *r,
    char *err, size_t errlen)
{
	json_t *root, *v;
	json_error_t je;
	int n;

	memset(r, 0, sizeof(*r));
	r->max_tokens = -1;
	r->body_len = len;
	root = json_loadb(body, len, JSON_ALLOW_NUL, &je);
	if (root == NULL) {
		const char *near = strstr(je.text, " near ");

		n = near ? (int)(near - je.text) : (int)strlen(je.text);
		snprintf(err, errlen,
		    "invalid JSON in request body at %d:%d: "
		    "%.*s",
		    je.line, je.column, n, je.text);
		return -1;
	}
	r->root = root;
	if (!json_is_object(root)) {
		snprintf(err, errlen,
		    "request body: Input should be an object");
		goto bad;
	}
	v = json_object_get(root, "model");
	if (v == NULL) {
		snprintf(err, errlen, "model: Field required");
		goto bad;
	}
	if (!json_is_string(v)) {
		snprintf(err, errlen, "model: Input should be a valid string");
		goto bad;
	}
	r->model = json_string_value(v);
	v = json_object_get(root, "messages");
	if (v == NULL) {
		snprintf(err, errlen, "messages: Field required");
		goto bad;
	}
	if (!json_is_array(v)) {
		snprintf(err, errlen, "messages: Input should be a valid list");
		goto bad;
	}
	r->messages = v;
	if (check_messages(r->messages, err, errlen) < 0 ||
	    check_max_tokens(root, count_tokens, r, err, errlen) < 0)
		goto bad;
	v = json_object_get(root, "stream");
	if (v != NULL && !json_is_boolean(v) && !json_is_null(v)) {
		snprintf(err, errlen,
		    "stream: Input should be a valid boolean");
		goto bad;
	}
	r->stream = json_is_true(v);
	v = json_object_get(root, "tools");
	if (v != NULL && !json_is_array(v) && !json_is_null(v)) {
		snprintf(err, errlen, "tools: Input should be a valid list");
		goto bad;
	}
	return 0;
bad:
	mreq_free(r);
	return -1;
}

/* ---- position ---- */

/*
 * 1 + the turn of id if it is one of ours naming a tool_use block of s,
 * the script whose ids carry flag (0, or IDS_SUBAGENT_TURN); 0 otherwise.
 */
static size_t
id_position(const struct engine *e, const struct script *s, uint32_t flag,
    json_t *id)
{
	uint32_t turn, block;

	if (!json_is_string(id) ||
	    !ids_decode_tool_use(&e->ids, json_string_value(id),
		json_string_length(id), &turn, &block) ||
	    (turn & IDS_SUBAGENT_TURN) != flag)
		return 0;
	turn &= ~IDS_SUBAGENT_TURN;
	if (turn >= s->nturns || block >= s->turns[turn].nblocks ||
	    s->turns[turn].blocks[block].type != BLOCK_TOOL_USE)
		return 0;
	return (size_t)turn + 1;
}

static size_t
position(const struct engine *e, const struct script *s, uint32_t flag,
    json_t *messages)
{
	json_t *m, *content, *b, *type;
	size_t i, j, pos = 0, p;
	const char *t;

	json_array_foreach(messages, i, m)
	{
		content = json_object_get(m, "content");
		if (!json_is_array(content))
			continue;
		json_array_foreach(content, j, b)
		{
			type = json_object_get(b, "type");
			if (!json_is_string(type))
				continue;
			t = json_string_value(type);
			if (strcmp(t, "tool_use") == 0)
				p = id_position(e, s, flag,
				    json_object_get(b, "id"));
			else if (strcmp(t, "tool_result") == 0)
				p = id_position(e, s, flag,
				    json_object_get(b, "tool_use_id"));
			else
				continue;
			if (p > pos)
				pos = p;
		}
	}
	return pos;
}

size_t
engine_position(const struct engine *e, json_t *messages)
{
	return position(e, e->script, 0, messages);
}

size_t
engine_subagent_position(const struct engine *e, json_t *messages)
{
	return position(e, e->script->subagent, IDS_SUBAGENT_TURN, messages);
}

/* ---- text helpers ---- */

/* Appends the text of v: a string, or the "text" of its text blocks. */
static int
add_text(struct buf *b, json_t *v)
{
	json_t *blk, *t;
	size_t i;

	if (json_is_string(v))
		return buf_add(b, json_string_value(v), json_string_length(v));
	if (!json_is_array(v))
		return 0;
	json_array_foreach(v, i, blk)
	{
		t = json_object_get(blk, "type");
		if (!json_is_string(t) ||
		    strcmp(json_string_value(t), "text") != 0)
			continue;
		t = json_object_get(blk, "text");
		if (json_is_string(t) &&
		    buf_add(b, json_string_value(t), json_string_length(t)) < 0)
			return -1;
	}
	return 0;
}

/*
 * The length of s without the <system-reminder> sections Claude Code
 * appends to tool results (and the blank lines before them); a reminder
 * elsewhere in the text is the tool's own output and stays.
 */
static size_t
strip_reminders(const char *s, size_t len)
{
	static const char open[] = "<system-reminder>";
	static const char close[] = "</system-reminder>";
	const size_t olen = sizeof(open) - 1, clen = sizeof(close) - 1;
	size_t n, i;

	for (;;) {
		n = len;
		while (n > 0 && isspace((unsigned char)s[n - 1]))
			n--;
		if (n < olen + clen || memcmp(s + n - clen, close, clen) != 0)
			return len;
		for (i = n - clen - olen + 1; i-- > 0;)
			if (memcmp(s + i, open, olen) == 0)
				break;
		if (i == (size_t)-1)
			return len;
		len = i;
		while (len > 0 && isspace((unsigned char)s[len - 1]))
			len--;
	}
}

char *
engine_last_result(json_t *messages, size_t *len)
{
	struct buf b = { 0 };
	json_t *m, *content, *blk, *t;
	size_t i, j;

	for (i = json_array_size(messages); i-- > 0;) {
		m = json_array_get(messages, i);
		content = json_object_get(m, "content");
		if (!json_is_array(content))
			continue;
		for (j = json_array_size(content); j-- > 0;) {
			blk = json_array_get(content, j);
			t = json_object_get(blk, "type");
			if (!json_is_string(t) ||
			    strcmp(json_string_value(t), "tool_result") != 0)
				continue;
			if (add_text(&b, json_object_get(blk, "content")) < 0)
				goto oom;
			goto done;
		}
	}
done:
	b.len = b.p ? strip_reminders(b.p, b.len) : 0;
	if (buf_add(&b, "", 0) < 0)
		goto oom;
	*len = b.len;
	return b.p;
oom:
	buf_free(&b);
	return NULL;
}

char *
engine_expand(const char *s, const char *result, size_t result_len,
    size_t *outlen)
{
	const size_t tlen = sizeof(TEMPLATE_LAST_RESULT) - 1;
	struct buf b = { 0 };
	const char *p;
	size_t room;

	while ((p = strstr(s, TEMPLATE_LAST_RESULT)) != NULL) {
		if (buf_add(&b, s, (size_t)(p - s)) < 0)
			goto oom;
		room = b.len < ENGINE_MAX_EXPANSION ?
		    ENGINE_MAX_EXPANSION - b.len :
		    0;
		if (result_len <= room) {
			if (buf_add(&b, result, result_len) < 0)
				goto oom;
		} else {
			/* cut, but never inside a UTF-8 character */
			if (buf_add(&b, result,
				render_chunk_len(result, result_len, room)) < 0)
				goto oom;
			s = p + strlen(p);
			break;
		}
		s = p + tlen;
	}
	if (b.len < ENGINE_MAX_EXPANSION && buf_add(&b, s, strlen(s)) < 0)
		goto oom;
	if (buf_add(&b, "", 0) < 0)
		goto oom;
	*outlen = b.len;
	return b.p;
oom:
	buf_free(&b);
	return NULL;
}

json_t *
engine_expand_json(json_t *v, const char *result, size_t result_len)
{
	const char *key;
	json_t *out, *x, *c;
	size_t i, n;
	char *s;

	switch (json_typeof(v)) {
	case JSON_STRING:
		/* script strings hold no NUL: json_string_value is all of it */
		if ((s = engine_expand(json_string_value(v), result, result_len,
			 &n)) == NULL)
			return NULL;
		out = json_stringn(s, n);
		free(s);
		return out;
	case JSON_OBJECT:
		if ((out = json_object()) == NULL)
			return NULL;
		json_object_foreach(v, key, x)
		{
			c = engine_expand_json(x, result, result_len);
			if (c == NULL || json_object_set_new(out, key, c) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	case JSON_ARRAY:
		if ((out = json_array()) == NULL)
			return NULL;
		json_array_foreach(v, i, x)
		{
			c = engine_expand_json(x, result, result_len);
			if (c == NULL || json_array_append_new(out, c) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	default:
		return json_deep_copy(v);
	}
}

/* ---- a subject's own model calls ---- */

/* Does the n-byte hay hold the NUL-terminated needle? */
static int
holds(const char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	for (i = 0; k <= n && i <= n - k; i++)
		if (memcmp(hay + i, needle, k) == 0)
			return 1;
	return 0;
}

int
engine_reply(const struct script *s, json_t *root, size_t *which)
{
	struct buf b = { 0 };
	json_t *msgs, *m, *role;
	size_t i;

	*which = 0;
	if (add_text(&b, json_object_get(root, "system")) < 0 ||
	    buf_add(&b, "\n", 1) < 0)
		goto oom;
	msgs = json_object_get(root, "messages");
	json_array_foreach(msgs, i, m)
	{
		role = json_object_get(m, "role");
		if (json_is_string(role) &&
		    strcmp(json_string_value(role), "user") == 0) {
			if (add_text(&b, json_object_get(m, "content")) < 0)
				goto oom;
			break;
		}
	}
	for (i = 0; i < s->nreplies && *which == 0; i++)
		if (holds(b.p, b.len, s->replies[i].match))
			*which = i + 1;
	buf_free(&b);
	return 0;
oom:
	buf_free(&b);
	return -1;
}

/* ---- side requests ---- */

/* Case-insensitive search for an ASCII needle in len bytes. */
static int
has_word(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle), i, j;

	for (i = 0; i + n <= len; i++) {
		for (j = 0; j < n; j++)
			if (tolower((unsigned char)s[i + j]) != needle[j])
				break;
		if (j == n)
			return 1;
	}
	return 0;
}

/* The text of the last user message (its text blocks), into b. */
static int
last_user_text(json_t *messages, struct buf *b)
{
	json_t *m, *role;
	size_t i;

	for (i = json_array_size(messages); i-- > 0;) {
		m = json_array_get(messages, i);
		role = json_object_get(m, "role");
		if (json_is_string(role) &&
		    strcmp(json_string_value(role), "user") == 0)
			return add_text(b, json_object_get(m, "content"));
	}
	return 0;
}

/* The JSON schema of a structured-output request, or NULL. */
static json_t *
output_schema(json_t *root)
{
	json_t *f;

	f = json_object_get(root, "output_format");
	if (!json_is_object(f))
		f = json_object_get(json_object_get(root, "output_config"),
		    "format");
	if (!json_is_object(f))
		return NULL;
	return json_object_get(f, "schema");
}

static int
has_format(json_t *root)
{
	return json_is_object(json_object_get(root, "output_format")) ||
	    json_is_object(
		json_object_get(json_object_get(root, "output_config"),
		    "format"));
}

const char *
engine_side_kind(json_t *root)
{
	struct buf b = { 0 };
	const char *kind = NULL;
	json_t *v, *schema;

	v = json_object_get(root, "max_tokens");
	if (json_is_integer(v) && json_integer_value(v) <= 1)
		return "probe";
	if (has_format(root)) {
		schema = output_schema(root);
		if (json_object_get(json_object_get(schema, "properties"),
			"title") != NULL)
			return "title";
		return "json-schema";
	}
	v = json_object_get(root, "tools");
	if (!json_is_array(v) || json_array_size(v) == 0) {
		if (add_text(&b, json_object_get(root, "system")) < 0 ||
		    last_user_text(json_object_get(root, "messages"), &b) < 0)
			kind = "no-tools";
		else if (has_word(b.p ? b.p : "", b.len, "title"))
			kind = "title";
		else if (has_word(b.p ? b.p : "", b.len, "summar"))
			kind = "summary";
		else
			kind = "no-tools";
		buf_free(&b);
		return kind;
	}
	if (last_user_text(json_object_get(root, "messages"), &b) == 0 &&
	    b.p != NULL && strstr(b.p, COMPACT_MARKER) != NULL)
		kind = "summary";
	buf_free(&b);
	return kind;
}

static json_t *example(json_t *schema, const char *name, int depth);

/*
 * The type a schema names: its "type", the first that is not "null" of a
 * list of them, or without one "object" when it has properties, else
 * "string".
 */
static const char *
schema_type(json_t *schema)
{
	json_t *type = json_object_get(schema, "type"), *x;
	size_t i;

	if (json_is_string(type))
		return json_string_value(type);
	if (json_is_array(type)) {
		json_array_foreach(type, i, x)
		{
			if (json_is_string(x) &&
			    strcmp(json_string_value(x), "null") != 0)
				return json_string_value(x);
		}
	}
	return json_is_object(json_object_get(schema, "properties")) ?
	    "object" :
	    "string";
}

/* Whether key is in the schema's "required" list, or there is none. */
static int
is_required(json_t *schema, const char *key)
{
	json_t *req = json_object_get(schema, "required"), *v;
	size_t i;

	if (!json_is_array(req) || json_array_size(req) == 0)
		return 1;
	json_array_foreach(req, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), key) == 0)
			return 1;
	}
	return 0;
}

/* An object schema's example: its required properties' examples. */
static json_t *
example_object(json_t *schema, int depth)
{
	json_t *props = json_object_get(schema, "properties"), *out, *x;
	const char *key;

	if ((out = json_object()) == NULL)
		return NULL;
	json_object_foreach(props, key, x)
	{
		if (!is_required(schema, key))
			continue;
		if (json_object_set_new(out, key, example(x, key, depth + 1)) <
		    0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* An array schema's example: minItems (at most 8) of its items'. */
static json_t *
example_array(json_t *schema, const char *name, int depth)
{
	json_t *out, *v;
	long long n;

	if ((out = json_array()) == NULL)
		return NULL;
	v = json_object_get(schema, "minItems");
	n = json_is_integer(v) ? json_integer_value(v) : 0;
	for (; n > 0 && json_array_size(out) < 8; n--)
		if (json_array_append_new(out,
			example(json_object_get(schema, "items"), name,
			    depth + 1)) < 0) {
			json_decref(out);
			return NULL;
		}
	return out;
}

static json_t *
example(json_t *schema, const char *name, int depth)
{
	json_t *v;
	const char *t;

	if (!json_is_object(schema) || depth > SCHEMA_MAX_DEPTH)
		return json_string("scripted");
	if ((v = json_object_get(schema, "const")) != NULL)
		return json_deep_copy(v);
	v = json_object_get(schema, "enum");
	if (json_is_array(v) && json_array_size(v) > 0)
		return json_deep_copy(json_array_get(v, 0));
	v = json_object_get(schema, "anyOf");
	if (!json_is_array(v))
		v = json_object_get(schema, "oneOf");
	if (json_is_array(v) && json_array_size(v) > 0)
		return example(json_array_get(v, 0), name, depth + 1);
	t = schema_type(schema);
	if (strcmp(t, "object") == 0)
		return example_object(schema, depth);
	if (strcmp(t, "array") == 0)
		return example_array(schema, name, depth);
	if (strcmp(t, "integer") == 0 || strcmp(t, "number") == 0) {
		v = json_object_get(schema, "minimum");
		return json_is_number(v) ? json_deep_copy(v) : json_integer(0);
	}
	if (strcmp(t, "boolean") == 0)
		return json_true();
	if (strcmp(t, "null") == 0)
		return json_null();
	if (name != NULL && strcmp(name, "title") == 0)
		return json_string("Scripted session");
	return json_string("scripted");
}

json_t *
engine_schema_example(json_t *schema)
{
	return example(schema, NULL, 0);
}

/* ---- answers ---- */

void
answer_free(struct answer *a)
{
	message_free(&a->msg);
}

static const char *
error_text(const char *type)
{
	if (strcmp(type, "overloaded_error") == 0)
		return "Overloaded";
	if (strcmp(type, "rate_limit_error") == 0)
		return "This request would exceed the rate limit for your "
		       "organization (leakbench scripted fault)";
	if (strcmp(type, "api_error") == 0)
		return "Internal server error";
	return "leakbench scripted fault";
}

/* Gives a message block a copy of text (len bytes, may hold NULs). */
static int
set_text(struct msg_block *b, char *text, size_t len)
{
	b->text = text;
	b->text_len = len;
	return text == NULL ? -1 : 0;
}

/* A message holding one text block. Takes text (malloc'd). */
static int
one_text(struct message *m, char *text, size_t len)
{
	if ((m->blocks = calloc(1, sizeof(*m->blocks))) == NULL) {
		free(text);
		return -1;
	}
	m->nblocks = 1;
	m->blocks[0].type = BLOCK_TEXT;
	return set_text(&m->blocks[0], text, len);
}

static int
side_message(const struct mreq *r, const char *kind, struct message *m)
{
	json_t *ex;
	char *s;

	m->stop_reason = "end_turn";
	if (strcmp(kind, "probe") == 0) {
		if (r->max_tokens <= 1)
			m->stop_reason = "max_tokens";
		return one_text(m, strdup("OK"), 2);
	}
	if (has_format(r->root)) {
		ex = engine_schema_example(output_schema(r->root));
		s = ex ? json_dumps(ex, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
		json_decref(ex);
		return one_text(m, s, s ? strlen(s) : 0);
	}
	if (strcmp(kind, "title") == 0)
		s = strdup("Scripted session");
	else if (strcmp(kind, "summary") == 0)
		s = strdup("Summary: a scripted leakbench session.");
	else
		s = strdup("OK.");
	return one_text(m, s, s ? strlen(s) : 0);
}

/*
 * An opaque thinking signature, stable for one position in one run; turn
 * carries the subagent flag.
 */
static char *
signature(const struct engine *e, uint32_t turn, size_t block)
{
	char part[IDS_BUF], *sig;
	size_t k;

	if ((sig = malloc(4 * IDS_BODY_LEN + 3)) == NULL)
		return NULL;
	strcpy(sig, "Eq");
	for (k = 0; k < 4; k++) {
		ids_serial(&e->ids, "",
		    ((uint64_t)0xfe << 48) | ((uint64_t)turn << 12) |
			(block << 2) | k,
		    part);
		strcat(sig, part);
	}
	return sig;
}

/*
 * The message of turn t of s, the script whose ids carry flag, with
 * templates expanded from res. 0, or -1 when out of memory.
 */
static int
turn_message(const struct engine *e, const struct script *s, uint32_t flag,
    size_t t, const char *res, size_t res_len, struct message *m)
{
	const struct turn *turn = &s->turns[t];
	const struct block *sb;
	struct msg_block *b;
	size_t i, n = 0;
	char *text;

	if ((m->blocks = calloc(turn->nblocks, sizeof(*m->blocks))) == NULL)
		return -1;
	m->nblocks = turn->nblocks;
	for (i = 0; i < turn->nblocks; i++) {
		sb = &turn->blocks[i];
		b = &m->blocks[i];
		b->type = sb->type;
		switch (sb->type) {
		case BLOCK_THINKING:
		case BLOCK_TEXT:
			text = engine_expand(sb->text, res, res_len, &n);
			if (set_text(b, text, n) < 0)
				return -1;
			if (sb->type == BLOCK_THINKING &&
			    (b->signature = signature(e, (uint32_t)t | flag,
				 i)) == NULL)
				return -1;
			break;
		case BLOCK_TOOL_USE:
			ids_tool_use(&e->ids, (uint32_t)t | flag, (uint32_t)i,
			    b->id);
			if ((b->name = strdup(sb->name)) == NULL ||
			    (b->input = engine_expand_json(sb->input, res,
				 res_len)) == NULL)
				return -1;
			break;
		}
	}
	m->stop_reason = turn->tool_use ? "tool_use" : "end_turn";
	return 0;
}

/* The answer past the request cap: a 400. */
static void
cap_answer(const struct engine *e, struct answer *a)
{
	a->what = ANSWER_CAP;
	a->status = 400;
	snprintf(a->error_type, sizeof(a->error_type), "%s",
	    "invalid_request_error");
	snprintf(a->error_message, sizeof(a->error_message),
	    "leakbench scripted model: request cap %d reached",
	    e->max_requests);
}

/*
 * Whether a->turn is a turn of play or its final answer (a->what), and
 * the next fault the script left for it (cursor counts them per turn).
 */
static void
pick_fault(struct engine *e, const struct script *play, size_t *cursor,
    struct answer *a)
{
	const struct fault *faults;
	size_t nfaults;

	if (a->turn >= play->nturns) {
		a->what = ANSWER_FINAL;
		a->turn = play->nturns;
		faults = play->final_faults;
		nfaults = play->nfinal_faults;
	} else {
		a->what = ANSWER_TURN;
		faults = play->turns[a->turn].faults;
		nfaults = play->turns[a->turn].nfaults;
	}
	pthread_mutex_lock(&e->lock);
	if (cursor[a->turn] < nfaults)
		a->fault = faults[cursor[a->turn]++];
	pthread_mutex_unlock(&e->lock);
}

/*
 * The error a fault makes: 1 when it takes the message's place (an HTTP
 * error); 0 when the message is still built (no fault, or a stream error,
 * which goes after it).
 */
static int
fault_error(const struct mreq *r, struct answer *a)
{
	if (a->fault.kind == FAULT_HTTP) {
		a->status = a->fault.status;
		snprintf(a->error_type, sizeof(a->error_type), "%s",
		    script_error_type(a->fault.status));
		snprintf(a->error_message, sizeof(a->error_message), "%s",
		    error_text(a->error_type));
		return 1;
	}
	if (a->fault.kind == FAULT_STREAM_ERROR) {
		snprintf(a->error_type, sizeof(a->error_type), "%s",
		    a->fault.error_type);
		snprintf(a->error_message, sizeof(a->error_message), "%s",
		    error_text(a->error_type));
		if (!r->stream) /* nothing to stream: a plain error */
			a->status = script_error_status(a->error_type);
	}
	return 0;
}

int
engine_answer(struct engine *e, const struct mreq *r, struct answer *a)
{
	const struct script *s = e->script, *play;
	unsigned long serial;
	size_t *cursor;
	uint32_t flag;
	char *res = NULL, *text;
	size_t res_len = 0, n;
	const char *model;
	int capped;

	memset(a, 0, sizeof(*a));
	a->nturns = s->nturns;
	a->status = 200;
	pthread_mutex_lock(&e->lock);
	a->n = ++e->requests;
	capped = a->n > (unsigned long)e->max_requests;
	serial = ++e->serial;
	pthread_mutex_unlock(&e->lock);
	ids_serial(&e->ids, "req_01", serial, a->request_id);
	ids_serial(&e->ids, "msg_01", serial, a->msg.id);

	if (capped) {
		cap_answer(e, a);
		return 0;
	}
	model = s->model ? s->model : r->model ? r->model : "claude-sonnet-4-5";
	if ((a->msg.model = strdup(model)) == NULL)
		goto oom;
	a->msg.input_tokens = (long long)(r->body_len / 4) + 1;

	if (s->nreplies > 0) {
		if (engine_reply(s, r->root, &a->reply) < 0)
			goto oom;
		if (a->reply > 0) {
			a->what = ANSWER_REPLY;
			a->msg.stop_reason = "end_turn";
			text = strdup(s->replies[a->reply - 1].text);
			if (one_text(&a->msg, text,
				text ? strlen(s->replies[a->reply - 1].text) :
				       0) < 0)
				goto oom;
			goto done;
		}
	}
	if ((a->side = engine_side_kind(r->root)) != NULL) {
		a->what = ANSWER_SIDE;
		if (side_message(r, a->side, &a->msg) < 0)
			goto oom;
		goto done;
	}
	if ((res = engine_last_result(r->messages, &res_len)) == NULL)
		goto oom;
	a->subagent = r->subagent != 0;
	play = a->subagent ? s->subagent : s;
	flag = a->subagent ? IDS_SUBAGENT_TURN : 0;
	cursor = a->subagent ? e->sub_fault_next : e->fault_next;
	a->nturns = play->nturns;
	a->turn = position(e, play, flag, r->messages);
	pick_fault(e, play, cursor, a);
	if (fault_error(r, a))
		goto done;
	if (a->what == ANSWER_FINAL) {
		a->msg.stop_reason = "end_turn";
		text = engine_expand(play->final, res, res_len, &n);
		if (one_text(&a->msg, text, n) < 0)
			goto oom;
	} else if (turn_message(e, play, flag, a->turn, res, res_len, &a->msg) <
	    0)
		goto oom;
done:
	free(res);
	message_count_output(&a->msg);
	return 0;
oom:
	free(res);
	answer_free(a);
	return -1;
}
