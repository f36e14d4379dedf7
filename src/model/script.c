/*
 * Script loading and validation. The file comes from the Lua side but is
 * treated as hostile anyway: every key is checked against the grammar in
 * script.h, every number against its range, and error messages name the
 * place, never the content (a script may hold a scenario's canaries).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/script.h"

static const struct {
	int status;
	const char *type;
} error_types[] = {
	{ 400, "invalid_request_error" },
	{ 401, "authentication_error" },
	{ 402, "billing_error" },
	{ 403, "permission_error" },
	{ 404, "not_found_error" },
	{ 409, "conflict_error" },
	{ 413, "request_too_large" },
	{ 429, "rate_limit_error" },
	{ 500, "api_error" },
	{ 504, "timeout_error" },
	{ 529, "overloaded_error" },
};

const char *
script_error_type(int status)
{
	size_t i;

	for (i = 0; i < sizeof(error_types) / sizeof(error_types[0]); i++)
		if (error_types[i].status == status)
			return error_types[i].type;
	return status >= 500 ? "api_error" : "invalid_request_error";
}

int
script_error_status(const char *type)
{
	size_t i;

	for (i = 0; i < sizeof(error_types) / sizeof(error_types[0]); i++)
		if (strcmp(error_types[i].type, type) == 0)
			return error_types[i].status;
	return 500;
}

/*
 * An error type as the API spells them: lowercase letters and underscores,
 * short enough for the engine's buffers. The API adds types now and then,
 * so any such name is accepted.
 */
static int
valid_error_type(const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > SCRIPT_MAX_ERROR_TYPE)
		return 0;
	return strspn(t, "abcdefghijklmnopqrstuvwxyz_") == n;
}

/* Validation context: the path of the value being checked, for messages. */
struct ctx {
	char *err;
	size_t errlen;
	char path[128];
};

__attribute__((format(printf, 2, 3))) static int
fail(struct ctx *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->path[0] != '\0')
		snprintf(c->err, c->errlen, "%s: %s", c->path, msg);
	else
		snprintf(c->err, c->errlen, "%s", msg);
	return -1;
}

static const char *
type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

/* Every key of obj must be in the NULL-terminated list allowed. */
static int
only_keys(struct ctx *c, json_t *obj, const char *const *allowed)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(obj, key, v)
	{
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (allowed[i] == NULL)
			return fail(c, "unknown key '%.64s'", key);
	}
	return 0;
}

/*
 * A required (or optional, when out already holds a default) string field,
 * copied into *out (malloc'd). Returns 0, or -1 with the message set.
 */
static int
get_string(struct ctx *c, json_t *obj, const char *key, int required,
    int nonempty, char **out)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL) {
		if (required)
			return fail(c, "missing key '%s'", key);
		return 0;
	}
	if (!json_is_string(v))
		return fail(c, "key '%s' is %s, expected a string", key,
		    type_name(v));
	if (nonempty && json_string_length(v) == 0)
		return fail(c, "key '%s' is empty", key);
	free(*out);
	if ((*out = strdup(json_string_value(v))) == NULL)
		return fail(c, "out of memory");
	return 0;
}

/* An integer field within [lo, hi]; *out keeps its default when absent. */
static int
get_int(struct ctx *c, json_t *obj, const char *key, int required, long long lo,
    long long hi, int *out)
{
	json_t *v = json_object_get(obj, key);
	long long n;

	if (v == NULL) {
		if (required)
			return fail(c, "missing key '%s'", key);
		return 0;
	}
	if (!json_is_integer(v))
		return fail(c, "key '%s' is %s, expected an integer", key,
		    type_name(v));
	n = json_integer_value(v);
	if (n < lo || n > hi)
		return fail(c, "key '%s' is %lld, expected %lld to %lld", key,
		    n, lo, hi);
	*out = (int)n;
	return 0;
}

/*
 * A number of seconds (an integer or not: Lua numbers may be either),
 * 0 to 86400, rounded up; *out keeps its default when absent.
 */
static int
get_seconds(struct ctx *c, json_t *obj, const char *key, int *out)
{
	json_t *v = json_object_get(obj, key);
	double d;

	if (v == NULL)
		return 0;
	if (!json_is_number(v))
		return fail(c, "key '%s' is %s, expected a number", key,
		    type_name(v));
	d = json_number_value(v);
	if (!(d >= 0 && d <= 86400))
		return fail(c, "key '%s' is out of range, expected 0 to 86400",
		    key);
	*out = (int)d;
	if (*out < d)
		(*out)++;
	return 0;
}

static int
parse_block(struct ctx *c, json_t *v, struct block *b)
{
	static const char *const text_keys[] = { "type", "text", NULL };
	static const char *const thinking_keys[] = { "type", "thinking", NULL };
	static const char *const tool_keys[] = { "type", "name", "input",
		NULL };
	const char *type;
	json_t *t, *input;

	if (!json_is_object(v))
		return fail(c, "is %s, expected an object", type_name(v));
	t = json_object_get(v, "type");
	if (t == NULL)
		return fail(c, "missing key 'type'");
	if (!json_is_string(t))
		return fail(c, "key 'type' is %s, expected a string",
		    type_name(t));
	type = json_string_value(t);
	if (strcmp(type, "text") == 0) {
		b->type = BLOCK_TEXT;
		if (only_keys(c, v, text_keys) < 0 ||
		    get_string(c, v, "text", 1, 0, &b->text) < 0)
			return -1;
	} else if (strcmp(type, "thinking") == 0) {
		b->type = BLOCK_THINKING;
		if (only_keys(c, v, thinking_keys) < 0 ||
		    get_string(c, v, "thinking", 1, 0, &b->text) < 0)
			return -1;
	} else if (strcmp(type, "tool_use") == 0) {
		b->type = BLOCK_TOOL_USE;
		if (only_keys(c, v, tool_keys) < 0 ||
		    get_string(c, v, "name", 1, 1, &b->name) < 0)
			return -1;
		input = json_object_get(v, "input");
		if (input == NULL)
			b->input = json_object();
		else if (!json_is_object(input))
			return fail(c, "key 'input' is %s, expected an object",
			    type_name(input));
		else
			b->input = json_deep_copy(input);
		if (b->input == NULL)
			return fail(c, "out of memory");
	} else
		return fail(c,
		    "unknown block type '%.32s' (expected text, "
		    "thinking or tool_use)",
		    type);
	return 0;
}

static int
parse_fault(struct ctx *c, json_t *v, struct fault *f)
{
	static const char *const http_keys[] = { "kind", "status",
		"retry_after", NULL };
	static const char *const stream_keys[] = { "kind", "error_type",
		"after_blocks", NULL };
	static const char *const delay_keys[] = { "kind", "ms", NULL };
	char *kind = NULL;
	int rc = -1;

	f->retry_after = -1;
	if (!json_is_object(v))
		return fail(c, "is %s, expected an object", type_name(v));
	if (get_string(c, v, "kind", 1, 0, &kind) < 0)
		return -1;
	if (strcmp(kind, "http") == 0) {
		f->kind = FAULT_HTTP;
		if (only_keys(c, v, http_keys) < 0 ||
		    get_int(c, v, "status", 1, 400, 599, &f->status) < 0 ||
		    get_seconds(c, v, "retry_after", &f->retry_after) < 0)
			goto out;
	} else if (strcmp(kind, "stream_error") == 0) {
		f->kind = FAULT_STREAM_ERROR;
		f->after_blocks = 1;
		if (only_keys(c, v, stream_keys) < 0 ||
		    get_string(c, v, "error_type", 0, 1, &f->error_type) < 0 ||
		    get_int(c, v, "after_blocks", 0, 0, SCRIPT_MAX_BLOCKS,
			&f->after_blocks) < 0)
			goto out;
		if (f->error_type == NULL &&
		    (f->error_type = strdup("overloaded_error")) == NULL) {
			fail(c, "out of memory");
			goto out;
		}
		if (!valid_error_type(f->error_type)) {
			fail(c,
			    "key 'error_type' is not an API error type "
			    "(lowercase letters and '_', like "
			    "'overloaded_error')");
			goto out;
		}
	} else if (strcmp(kind, "delay") == 0) {
		f->kind = FAULT_DELAY;
		if (only_keys(c, v, delay_keys) < 0 ||
		    get_int(c, v, "ms", 1, 0, SCRIPT_MAX_DELAY_MS, &f->ms) < 0)
			goto out;
	} else {
		fail(c,
		    "unknown fault kind '%.32s' (expected http, "
		    "stream_error or delay)",
		    kind);
		goto out;
	}
	rc = 0;
out:
	free(kind);
	return rc;
}

/*
 * A list field: an array, or {} (an empty Lua table, which lua-cjson
 * cannot tell from an empty object) meaning an empty list. Sets *out to
 * the array, or to NULL for an absent or empty list (json_array_size and
 * json_array_foreach take NULL as empty). 0, or -1 with the message set.
 */
static int
get_list(struct ctx *c, json_t *obj, const char *key, size_t max, json_t **out)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (v == NULL || (json_is_object(v) && json_object_size(v) == 0))
		return 0;
	if (!json_is_array(v))
		return fail(c, "key '%s' is %s, expected an array", key,
		    type_name(v));
	if (json_array_size(v) > max)
		return fail(c, "key '%s' has more than %zu entries", key, max);
	*out = v;
	return 0;
}

static int
parse_turn(struct ctx *c, json_t *v, struct turn *t)
{
	static const char *const keys[] = { "blocks", "faults", NULL };
	size_t base = strlen(c->path), i;
	json_t *blocks, *faults, *e;

	if (!json_is_object(v))
		return fail(c, "is %s, expected an object", type_name(v));
	if (only_keys(c, v, keys) < 0)
		return -1;
	if (json_object_get(v, "blocks") == NULL)
		return fail(c, "missing key 'blocks'");
	if (get_list(c, v, "blocks", SCRIPT_MAX_BLOCKS, &blocks) < 0 ||
	    get_list(c, v, "faults", SCRIPT_MAX_FAULTS, &faults) < 0)
		return -1;
	if (json_array_size(blocks) == 0 && json_array_size(faults) == 0)
		return fail(c, "a turn needs a block or a fault");
	if (json_array_size(blocks) > 0 &&
	    (t->blocks = calloc(json_array_size(blocks), sizeof(*t->blocks))) ==
		NULL)
		return fail(c, "out of memory");
	json_array_foreach(blocks, i, e)
	{
		t->nblocks = i + 1;
		snprintf(c->path + base, sizeof(c->path) - base, ".blocks[%zu]",
		    i);
		if (parse_block(c, e, &t->blocks[i]) < 0)
			return -1;
		if (t->blocks[i].type == BLOCK_TOOL_USE)
			t->tool_use = 1;
	}
	if (json_array_size(faults) > 0 &&
	    (t->faults = calloc(json_array_size(faults), sizeof(*t->faults))) ==
		NULL)
		return fail(c, "out of memory");
	json_array_foreach(faults, i, e)
	{
		t->nfaults = i + 1;
		snprintf(c->path + base, sizeof(c->path) - base, ".faults[%zu]",
		    i);
		if (parse_fault(c, e, &t->faults[i]) < 0)
			return -1;
	}
	c->path[base] = '\0';
	return 0;
}

/*
 * A turn of faults only (no blocks) can never be passed by position (it
 * mints no tool_use id), so its faults are carried into the next turn that
 * has blocks, ahead of that turn's own; faults of trailing block-less
 * turns go to the final answer. Returns 0 or -1 (out of memory).
 */
static int
merge_fault_turns(struct script *s)
{
	struct fault *pending = NULL, *nf;
	size_t npending = 0, i, k = 0;
	struct turn *t;

	for (i = 0; i < s->nturns; i++) {
		t = &s->turns[i];
		nf = realloc(pending,
		    (npending + t->nfaults + 1) * sizeof(*nf));
		if (nf == NULL)
			goto oom;
		pending = nf;
		if (t->nfaults > 0)
			memcpy(pending + npending, t->faults,
			    t->nfaults * sizeof(*nf));
		npending += t->nfaults;
		free(t->faults);
		t->faults = NULL;
		t->nfaults = 0;
		if (t->nblocks == 0) {
			free(t->blocks);
			t->blocks = NULL;
			continue;
		}
		t->faults = pending;
		t->nfaults = npending;
		pending = NULL;
		npending = 0;
		if (k != i) {
			s->turns[k] = *t;
			memset(t, 0, sizeof(*t));
		}
		k++;
	}
	s->nturns = k;
	s->final_faults = pending;
	s->nfinal_faults = npending;
	return 0;
oom:
	/* the faults already moved into pending are freed with it */
	for (; npending > 0; npending--)
		free(pending[npending - 1].error_type);
	free(pending);
	return -1;
}

/*
 * The position only moves past a turn through its tool_use ids, so a turn
 * with blocks but no tool_use ends the conversation: a later turn with
 * blocks could never be played. That is a script error, not a loop to
 * discover at run time. dot is "" or "subagent.", for the message.
 */
static int
check_reachable(struct ctx *c, const struct script *s, const char *dot)
{
	size_t i, j;

	for (i = 0; i < s->nturns; i++) {
		if (s->turns[i].nblocks == 0 || s->turns[i].tool_use)
			continue;
		for (j = i + 1; j < s->nturns; j++)
			if (s->turns[j].nblocks > 0)
				return fail(c,
				    "%sturns[%zu] is never played: "
				    "%sturns[%zu] has no tool_use, so the "
				    "conversation ends there",
				    dot, j, dot, i);
	}
	return 0;
}

/*
 * What the top level and a subagent script share: "turns" (required) and
 * "final" (optional), checked into s. where is "" for the top level or
 * "subagent", the start of every place named in a message.
 */
static int
parse_turns(struct ctx *c, json_t *obj, struct script *s, const char *where)
{
	const char *dot = where[0] != '\0' ? "." : "";
	char prefix[16];
	json_t *turns, *e;
	size_t i;

	snprintf(prefix, sizeof(prefix), "%s%s", where, dot);
	snprintf(c->path, sizeof(c->path), "%s", where);
	if (get_string(c, obj, "final", 0, 0, &s->final) < 0)
		return -1;
	turns = json_object_get(obj, "turns");
	if (turns == NULL)
		return fail(c, "missing key 'turns'");
	if (!json_is_array(turns))
		return fail(c, "key 'turns' is %s, expected an array",
		    type_name(turns));
	if (json_array_size(turns) > SCRIPT_MAX_TURNS)
		return fail(c, "more than %d turns", SCRIPT_MAX_TURNS);
	if (json_array_size(turns) > 0) {
		s->turns = calloc(json_array_size(turns), sizeof(*s->turns));
		if (s->turns == NULL)
			return fail(c, "out of memory");
	}
	json_array_foreach(turns, i, e)
	{
		s->nturns = i + 1;
		snprintf(c->path, sizeof(c->path), "%sturns[%zu]", prefix, i);
		if (parse_turn(c, e, &s->turns[i]) < 0)
			return -1;
	}
	c->path[0] = '\0';
	return check_reachable(c, s, prefix);
}

/*
 * The subagent script into s->subagent (allocated here, empty when the key
 * is absent): an object with the top level's turns and final, and none of
 * its run-wide keys.
 */
static int
parse_subagent(struct ctx *c, json_t *root, struct script *s)
{
	static const char *const keys[] = { "turns", "final", NULL };
	static const char *const top_only[] = { "subagent", "model", "version",
		"max_requests", "replies", NULL };
	const char *key;
	json_t *v, *x;
	size_t i;

	if ((s->subagent = calloc(1, sizeof(*s->subagent))) == NULL)
		return fail(c, "out of memory");
	v = json_object_get(root, "subagent");
	if (v == NULL)
		return 0;
	if (!json_is_object(v))
		return fail(c, "key 'subagent' is %s, expected an object",
		    type_name(v));
	snprintf(c->path, sizeof(c->path), "subagent");
	json_object_foreach(v, key, x)
	{
		for (i = 0; top_only[i] != NULL; i++)
			if (strcmp(key, top_only[i]) == 0)
				return fail(c,
				    "key '%s' is not allowed in a "
				    "subagent script",
				    key);
	}
	if (only_keys(c, v, keys) < 0)
		return -1;
	return parse_turns(c, v, s->subagent, "subagent");
}

/* "replies": [{"match": S, "reply": S}, ...], into s->replies. */
static int
parse_replies(struct ctx *c, json_t *root, struct script *s)
{
	static const char *const keys[] = { "match", "reply", NULL };
	json_t *v = json_object_get(root, "replies"), *r;
	size_t i;

	if (v == NULL)
		return 0;
	if (!json_is_array(v) &&
	    !(json_is_object(v) && json_object_size(v) == 0))
		return fail(c, "key 'replies' is %s, expected an array",
		    type_name(v));
	if (json_is_object(v) || json_array_size(v) == 0)
		return 0;
	if (json_array_size(v) > SCRIPT_MAX_REPLIES)
		return fail(c, "key 'replies' has more than %d entries",
		    SCRIPT_MAX_REPLIES);
	if ((s->replies = calloc(json_array_size(v), sizeof(*s->replies))) ==
	    NULL)
		return fail(c, "out of memory");
	json_array_foreach(v, i, r)
	{
		snprintf(c->path, sizeof(c->path), "replies[%zu]", i);
		if (!json_is_object(r))
			return fail(c, "is %s, expected an object",
			    type_name(r));
		s->nreplies = i + 1;
		if (only_keys(c, r, keys) < 0 ||
		    get_string(c, r, "match", 1, 1, &s->replies[i].match) < 0 ||
		    get_string(c, r, "reply", 1, 0, &s->replies[i].text) < 0)
			return -1;
	}
	c->path[0] = '\0';
	return 0;
}

static int
parse_root(struct ctx *c, json_t *root, struct script *s)
{
	static const char *const keys[] = { "version", "model", "turns",
		"final", "max_requests", "subagent", "replies", NULL };
	int version = 0;

	if (!json_is_object(root))
		return fail(c, "the script is %s, expected an object",
		    type_name(root));
	if (only_keys(c, root, keys) < 0 ||
	    get_int(c, root, "version", 1, 0, 1000, &version) < 0)
		return -1;
	if (version != 1)
		return fail(c, "unsupported version %d (expected 1)", version);
	if (get_string(c, root, "model", 0, 1, &s->model) < 0 ||
	    get_int(c, root, "max_requests", 0, 1, 1000000, &s->max_requests) <
		0)
		return -1;
	if (parse_turns(c, root, s, "") < 0 || parse_replies(c, root, s) < 0)
		return -1;
	return parse_subagent(c, root, s);
}

/*
 * Copies a jansson error text without the "near '...'" part, which quotes
 * the input.
 */
static void
json_reason(const json_error_t *je, char *out, size_t outlen)
{
	const char *near = strstr(je->text, " near ");
	const char *flag = strstr(je->text, " without JSON_ALLOW_NUL");
	int n = near ? (int)(near - je->text) : (int)strlen(je->text);

	if (flag != NULL && flag - je->text < n)
		n = (int)(flag - je->text);

	snprintf(out, outlen, "%.*s", n, je->text);
}

struct script *
script_parse(const char *buf, size_t len, char *err, size_t errlen)
{
	struct ctx c = { err, errlen, "" };
	struct script *s;
	json_error_t je;
	char reason[160];
	json_t *root;

	if (len > SCRIPT_MAX_BYTES) {
		snprintf(err, errlen, "larger than %u bytes", SCRIPT_MAX_BYTES);
		return NULL;
	}
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		json_reason(&je, reason, sizeof(reason));
		snprintf(err, errlen, "%d:%d: %s", je.line, je.column, reason);
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		json_decref(root);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->max_requests = SCRIPT_DEFAULT_MAX_REQUESTS;
	if (parse_root(&c, root, s) < 0) {
		json_decref(root);
		script_free(s);
		return NULL;
	}
	json_decref(root);
	if (merge_fault_turns(s) < 0 || merge_fault_turns(s->subagent) < 0 ||
	    (s->final == NULL &&
		(s->final = strdup(SCRIPT_DEFAULT_FINAL)) == NULL) ||
	    (s->subagent->final == NULL &&
		(s->subagent->final = strdup(SCRIPT_SUBAGENT_FINAL)) == NULL)) {
		snprintf(err, errlen, "out of memory");
		script_free(s);
		return NULL;
	}
	return s;
}

struct script *
script_load(const char *path, char *err, size_t errlen)
{
	struct script *s = NULL;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f;

	if ((f = fopen(path, "rb")) == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	for (;;) {
		if (len == cap) {
			char *nb;

			if (cap > SCRIPT_MAX_BYTES) {
				snprintf(err, errlen, "larger than %u bytes",
				    SCRIPT_MAX_BYTES);
				goto out;
			}
			cap = cap ? cap * 2 : 65536;
			if ((nb = realloc(buf, cap)) == NULL) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s", strerror(errno ? errno : EIO));
		goto out;
	}
	s = script_parse(buf, len, err, errlen);
out:
	free(buf);
	fclose(f);
	return s;
}

void
script_free(struct script *s)
{
	size_t i, j;

	if (s == NULL)
		return;
	for (i = 0; i < s->nturns; i++) {
		for (j = 0; j < s->turns[i].nblocks; j++) {
			free(s->turns[i].blocks[j].text);
			free(s->turns[i].blocks[j].name);
			json_decref(s->turns[i].blocks[j].input);
		}
		free(s->turns[i].blocks);
		for (j = 0; j < s->turns[i].nfaults; j++)
			free(s->turns[i].faults[j].error_type);
		free(s->turns[i].faults);
	}
	free(s->turns);
	for (j = 0; j < s->nfinal_faults; j++)
		free(s->final_faults[j].error_type);
	free(s->final_faults);
	free(s->model);
	free(s->final);
	for (i = 0; i < s->nreplies; i++) {
		free(s->replies[i].match);
		free(s->replies[i].text);
	}
	free(s->replies);
	script_free(s->subagent);
	free(s);
}
