/*
 * The scripted model's engine: ids, request checks, script position from
 * tool_use ids, {{last_result}} templates, side requests, faults in order,
 * exhaustion and the request cap.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "model/engine.h"

static struct ids ids;

static struct engine *
engine_of(const char *json, int max_requests)
{
	char err[256];
	struct script *s = script_parse(json, strlen(json), err, sizeof(err));

	if (s == NULL) {
		printf("# script: %s\n", err);
		return NULL;
	}
	return engine_new(s, &ids, max_requests);
}

static void
test_ids(void)
{
	char a[IDS_BUF], b[IDS_BUF], c[IDS_BUF];
	uint32_t turn, block;
	struct ids other;
	size_t i;

	ids_tool_use(&ids, 3, 1, a);
	ids_tool_use(&ids, 3, 1, b);
	ids_tool_use(&ids, 1, 3, c);
	is_int(strlen(a), IDS_LEN, "a tool_use id has 30 characters");
	ok(strncmp(a, "toolu_01", 8) == 0, "it starts with toolu_01 (%s)", a);
	for (i = 8; i < strlen(a); i++)
		if (strchr("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm"
			   "nopqrstuvwxyz",
			a[i]) == NULL)
			break;
	is_int(i, IDS_LEN, "the rest is base62");
	is_str(a, b, "the same position gives the same id");
	ok(strcmp(a, c) != 0, "another position another id");
	ok(ids_decode_tool_use(&ids, a, strlen(a), &turn, &block) &&
		turn == 3 && block == 1,
	    "an id decodes to its position");
	ids_tool_use(&ids, 70000, 999, a);
	ok(ids_decode_tool_use(&ids, a, strlen(a), &turn, &block) &&
		turn == 70000 && block == 999,
	    "large positions round-trip");
	ids_init_seed(&other, 2);
	ids_tool_use(&other, 3, 1, c);
	ids_tool_use(&ids, 3, 1, a);
	ok(strcmp(a, c) != 0, "another run gives another id");
	ok(!ids_decode_tool_use(&ids, c, strlen(c), &turn, &block),
	    "another run's id is not ours");
	ok(!ids_decode_tool_use(&ids, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", 30,
	       &turn, &block),
	    "a real API id is not ours");
	ok(!ids_decode_tool_use(&ids, "toolu_01zzzzzzzzzzzzzzzzzzzzzz", 30,
	       &turn, &block),
	    "an overflowing id is refused");
	ok(!ids_decode_tool_use(&ids, a, strlen(a) - 1, &turn, &block),
	    "a truncated id is refused");
	ok(!ids_decode_tool_use(&ids, "", 0, &turn, &block), "empty");
	ok(!ids_decode_tool_use(&ids, NULL, 0, &turn, &block), "NULL");
	memcpy(b, a, sizeof(b));
	b[20] = b[20] == 'a' ? 'b' : 'a';
	ok(!ids_decode_tool_use(&ids, b, strlen(b), &turn, &block),
	    "a changed character is refused");
	ids_serial(&ids, "msg_01", 1, a);
	ids_serial(&ids, "req_01", 1, b);
	ids_serial(&ids, "msg_01", 2, c);
	ok(strncmp(a, "msg_01", 6) == 0 && strlen(a) == 28, "msg id (%s)", a);
	ok(strcmp(a + 6, b + 6) != 0, "msg and req ids differ in the body");
	ok(strcmp(a, c) != 0, "serial ids differ");
}

static void
parse_ok(const char *body, int count_tokens, struct mreq *r, const char *what)
{
	char err[256] = "";
	int rc = mreq_parse(body, strlen(body), count_tokens, r, err,
	    sizeof(err));

	ok(rc == 0, "%s parses (%s)", what, err);
}

static const struct {
	const char *body;
	const char *err;
} bad_requests[] = {
	{ "", "invalid JSON in request body at 1:0: '[' or '{' expected" },
	{ "{\"model\":\"m\",\"messages\":[],\"max_tokens\":5",
	    "invalid JSON in request body at 1:41: '}' expected" },
	{ "{\"model\":\"m\",\"messages\":[],\"max_tokens\":5,\"x\":\"SECRET",
	    "invalid JSON in request body at 1:53: premature end of input" },
	{ "{\"model\":\"m\",\"messages\":[],\"max_tokens\":5}\xff",
	    "invalid JSON in request body at 1:42: unable to decode byte "
	    "0xff" },
	{ "[1]", "request body: Input should be an object" },
	{ "{\"messages\":[],\"max_tokens\":5}", "model: Field required" },
	{ "{\"model\":1,\"messages\":[],\"max_tokens\":5}",
	    "model: Input should be a valid string" },
	{ "{\"model\":\"m\",\"max_tokens\":5}", "messages: Field required" },
	{ "{\"model\":\"m\",\"messages\":{},\"max_tokens\":5}",
	    "messages: Input should be a valid list" },
	{ "{\"model\":\"m\",\"messages\":[1],\"max_tokens\":5}",
	    "messages.0: Input should be an object" },
	{ "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":"
	  "\"x\"}],"
	  "\"max_tokens\":5}",
	    "messages.0.role: Input should be 'user' or 'assistant'" },
	{ "{\"model\":\"m\",\"messages\":[{\"role\":\"user\"}],\"max_tokens\":"
	  "5}",
	    "messages.0.content: Input should be a valid string or list" },
	{ "{\"model\":\"m\",\"messages\":[]}", "max_tokens: Field required" },
	{ "{\"model\":\"m\",\"messages\":[],\"max_tokens\":\"5\"}",
	    "max_tokens: Input should be a valid integer" },
	{ "{\"model\":\"m\",\"messages\":[],\"max_tokens\":-1}",
	    "max_tokens: Input should be greater than or equal to 0" },
	{ "{\"model\":\"m\",\"messages\":[],\"max_tokens\":5,\"stream\":1}",
	    "stream: Input should be a valid boolean" },
	{ "{\"model\":\"m\",\"messages\":[],\"max_tokens\":5,\"tools\":{}}",
	    "tools: Input should be a valid list" },
};

static void
test_requests(void)
{
	struct mreq r;
	char err[256];
	size_t i;

	parse_ok("{\"model\":\"m\",\"messages\":[{\"role\":\"user\","
		 "\"content\":"
		 "\"hi\"}],\"max_tokens\":5,\"stream\":true}",
	    0, &r, "a request");
	is_str(r.model, "m", "model");
	ok(r.stream, "stream");
	is_int(r.max_tokens, 5, "max_tokens");
	is_int(json_array_size(r.messages), 1, "messages");
	mreq_free(&r);
	parse_ok("{\"model\":\"m\",\"messages\":[]}", 1, &r,
	    "a count_tokens request without max_tokens");
	is_int(r.max_tokens, -1, "max_tokens absent");
	ok(!r.stream, "not streaming");
	mreq_free(&r);
	for (i = 0; i < sizeof(bad_requests) / sizeof(bad_requests[0]); i++) {
		err[0] = '\0';
		ok(mreq_parse(bad_requests[i].body,
		       strlen(bad_requests[i].body), 0, &r, err,
		       sizeof(err)) == -1,
		    "bad request %zu refused", i);
		is_str(err, bad_requests[i].err, "bad request %zu message", i);
		ok(strstr(err, "SECRET") == NULL, "bad request %zu not echoed",
		    i);
	}
}

#define SCRIPT3 \
	"{\"version\":1,\"turns\":[" \
	"{\"blocks\":[{\"type\":\"text\",\"text\":\"Let me look.\"}," \
	"{\"type\":\"tool_use\",\"name\":\"Read\",\"input\":{\"file_path\":" \
	"\"/work/.env\"}}]}," \
	"{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"Bash\",\"input\":" \
	"{\"command\":\"echo {{last_result}}\",\"n\":[1,\"{{last_result}}\"," \
	"{\"k\":\"{{last_result}}\"}]}}]," \
	"\"faults\":[{\"kind\":\"http\",\"status\":529}," \
	"{\"kind\":\"stream_error\",\"after_blocks\":0}]}," \
	"{\"blocks\":[{\"type\":\"thinking\",\"thinking\":\"t={{last_result}}" \
	"\"}," \
	"{\"type\":\"text\",\"text\":\"It says: {{last_result}}\"}]}]," \
	"\"final\":\"Final: {{last_result}}\"}"

/* A request body whose history holds the given assistant/user JSON. */
static char *
body_with(const char *history, const char *extra)
{
	char *b;
	size_t n = strlen(history) + strlen(extra) + 256;

	b = malloc(n);
	snprintf(b, n,
	    "{\"model\":\"claude-test\",\"max_tokens\":32000,"
	    "\"stream\":true,\"tools\":[{\"name\":\"Read\"}],\"messages\":["
	    "{\"role\":\"user\",\"content\":\"go\"}%s]%s}",
	    history, extra);
	return b;
}

/* The answer to a request, from a subagent when subagent is set. */
static int
answer_as(struct engine *e, int subagent, const char *history,
    const char *extra, struct answer *a)
{
	char *body = body_with(history, extra), err[256];
	struct mreq r;
	int rc;

	rc = mreq_parse(body, strlen(body), 0, &r, err, sizeof(err));
	free(body);
	if (rc < 0) {
		printf("# request: %s\n", err);
		memset(a, 0, sizeof(*a));
		return -1;
	}
	r.subagent = subagent;
	rc = engine_answer(e, &r, a);
	mreq_free(&r);
	return rc;
}

static int
answer_for(struct engine *e, const char *history, const char *extra,
    struct answer *a)
{
	return answer_as(e, 0, history, extra, a);
}

/* History after turn t's tool_use with the given tool_result text. */
static char *
history(struct engine *e, const char *prev, int turn, int block,
    const char *result)
{
	char id[IDS_BUF], *h;
	size_t n = strlen(prev) + strlen(result) + 512;

	ids_tool_use(&e->ids, (uint32_t)turn, (uint32_t)block, id);
	h = malloc(n);
	snprintf(h, n,
	    "%s,{\"role\":\"assistant\",\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"%s\",\"name\":\"X\",\"input\":{}}]},"
	    "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
	    "\"tool_use_id\":\"%s\",\"content\":%s}]}",
	    prev, id, id, result);
	return h;
}

static void
test_position(void)
{
	struct engine *e = engine_of(SCRIPT3, 0);
	char id[IDS_BUF], *h1, *h2, *body;
	struct mreq r;
	char err[256];

	ok(e != NULL, "engine for a 3-turn script");
	if (e == NULL)
		return;
	body = body_with("", "");
	mreq_parse(body, strlen(body), 0, &r, err, sizeof(err));
	is_int(engine_position(e, r.messages), 0, "no ids: position 0");
	mreq_free(&r);
	free(body);

	h1 = history(e, "", 0, 1, "\"A\"");
	body = body_with(h1, "");
	mreq_parse(body, strlen(body), 0, &r, err, sizeof(err));
	is_int(engine_position(e, r.messages), 1, "turn 0's id: position 1");
	mreq_free(&r);
	free(body);

	/* Claude Code merges messages: position must not depend on counts */
	h2 = history(e, h1, 1, 0, "\"B\"");
	free(h1);
	h1 = malloc(strlen(h2) + 200);
	sprintf(h1,
	    "%s,{\"role\":\"user\",\"content\":\"more\"},"
	    "{\"role\":\"assistant\",\"content\":\"x\"},{\"role\":\"user\","
	    "\"content\":\"y\"}",
	    h2);
	body = body_with(h1, "");
	mreq_parse(body, strlen(body), 0, &r, err, sizeof(err));
	is_int(engine_position(e, r.messages), 2,
	    "extra messages do not move the position");
	mreq_free(&r);
	free(body);
	free(h2);
	free(h1);

	/* only the tool_result is present (history trimmed) */
	ids_tool_use(&e->ids, 1, 0, id);
	h1 = malloc(512);
	snprintf(h1, 512,
	    ",{\"role\":\"user\",\"content\":[{\"type\":"
	    "\"tool_result\",\"tool_use_id\":\"%s\",\"content\":\"r\"}]}",
	    id);
	body = body_with(h1, "");
	mreq_parse(body, strlen(body), 0, &r, err, sizeof(err));
	is_int(engine_position(e, r.messages), 2, "a tool_result id counts");
	mreq_free(&r);
	free(body);

	/* an id of ours that names a text block is forged: ignored */
	ids_tool_use(&e->ids, 0, 0, id);
	snprintf(h1, 512,
	    ",{\"role\":\"assistant\",\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"%s\",\"name\":\"X\",\"input\":{}}]}",
	    id);
	body = body_with(h1, "");
	mreq_parse(body, strlen(body), 0, &r, err, sizeof(err));
	is_int(engine_position(e, r.messages), 0,
	    "an id naming a text block is ignored");
	mreq_free(&r);
	free(body);

	/* an id past the script is ignored */
	ids_tool_use(&e->ids, 9, 0, id);
	snprintf(h1, 512,
	    ",{\"role\":\"assistant\",\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"%s\",\"name\":\"X\",\"input\":{}}]}",
	    id);
	body = body_with(h1, "");
	mreq_parse(body, strlen(body), 0, &r, err, sizeof(err));
	is_int(engine_position(e, r.messages), 0,
	    "an id past the script is ignored");
	mreq_free(&r);
	free(body);
	free(h1);
	engine_free(e);
}

static void
test_last_result(void)
{
	static const struct {
		const char *messages;
		const char *want;
		size_t len;
	} cases[] = {
		{ "[]", "", 0 },
		{ "[{\"role\":\"user\",\"content\":\"hi\"}]", "", 0 },
		{ "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
		  "\"tool_use_id\":\"x\",\"content\":\"one\"}]}]",
		    "one", 3 },
		{ "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
		  "\"tool_use_id\":\"x\",\"content\":[{\"type\":\"text\","
		  "\"text\":\"a\"},{\"type\":\"image\"},{\"type\":\"text\","
		  "\"text\":\"b\"}]}]}]",
		    "ab", 2 },
		{ "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
		  "\"tool_use_id\":\"x\",\"content\":\"old\"}]},"
		  "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
		  "\"tool_use_id\":\"y\",\"content\":\"first\"},"
		  "{\"type\":\"tool_result\",\"tool_use_id\":\"z\","
		  "\"content\":\"second\"},{\"type\":\"text\",\"text\":\"t\"}]}"
		  ","
		  "{\"role\":\"assistant\",\"content\":\"ok\"}]",
		    "second", 6 },
		{ "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
		  "\"tool_use_id\":\"x\"}]}]",
		    "", 0 },
		{ "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
		  "\"tool_use_id\":\"x\",\"content\":\"a\\u0000b\"}]}]",
		    "a", 3 },
		/* what Claude Code 2.1.332 sends: reminders appended */
		{ "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
		  "\"tool_use_id\":\"x\",\"content\":\"DB=1\\n\\n<system-"
		  "reminder>"
		  "\\nleft</system-reminder>\\n\\n<system-reminder>x"
		  "</system-reminder>\\n\"}]}]",
		    "DB=1", 4 },
		{ "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
		  "\"tool_use_id\":\"x\",\"content\":[{\"type\":\"text\","
		  "\"text\":\"out\"},{\"type\":\"text\",\"text\":"
		  "\"<system-reminder>r</system-reminder>\"}]}]}]",
		    "out", 3 },
		/* a reminder inside the output is the tool's own */
		{ "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
		  "\"tool_use_id\":\"x\",\"content\":\"<system-reminder>a"
		  "</system-reminder> tail\"}]}]",
		    "<system-reminder>a</system-reminder> tail", 41 },
		{ "[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
		  "\"tool_use_id\":\"x\",\"content\":\"broken</"
		  "system-reminder>\"}]}]",
		    "broken</system-reminder>", 24 },
	};
	json_t *m;
	size_t i, len;
	char *s;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = json_loads(cases[i].messages, JSON_ALLOW_NUL, NULL);
		s = engine_last_result(m, &len);
		is_str(s, cases[i].want, "last_result case %zu", i);
		is_int(len, cases[i].len, "last_result case %zu length", i);
		free(s);
		json_decref(m);
	}
}

static void
test_expand(void)
{
	json_t *in, *out;
	size_t n;
	char *s, *big;

	s = engine_expand("a {{last_result}} b {{last_result}}", "X", 1, &n);
	is_str(s, "a X b X", "two expansions");
	is_int(n, 7, "expanded length");
	free(s);
	s = engine_expand("{{last_result}}", "", 0, &n);
	is_str(s, "", "no result: empty");
	free(s);
	s = engine_expand("{{other}} {{last_result", "X", 1, &n);
	is_str(s, "{{other}} {{last_result", "other braces stay");
	free(s);
	s = engine_expand("[{{last_result}}]", "a\0b", 3, &n);
	ok(n == 5 && memcmp(s, "[a\0b]", 5) == 0, "NULs in a result survive");
	free(s);
	in = json_loads("{\"{{last_result}}\":[\"{{last_result}}\",1,"
			"{\"k\":\"<{{last_result}}>\"}],\"b\":true}",
	    0, NULL);
	out = engine_expand_json(in, "R", 1);
	s = json_dumps(out, JSON_COMPACT);
	is_str(s, "{\"{{last_result}}\":[\"R\",1,{\"k\":\"<R>\"}],\"b\":true}",
	    "every string value expands, keys do not");
	free(s);
	json_decref(out);
	json_decref(in);

	/* a huge result is cut at the limit, on a character boundary */
	n = ENGINE_MAX_EXPANSION + 10;
	big = malloc(n);
	memset(big, 'x', n);
	memcpy(big + ENGINE_MAX_EXPANSION - 1, "\xc3\xa9", 2);
	s = engine_expand("{{last_result}}{{last_result}}", big, n, &n);
	is_int(n, ENGINE_MAX_EXPANSION - 1,
	    "expansion is cut before a "
	    "split character");
	free(s);
	free(big);
}

static const struct {
	const char *body;
	const char *kind;
} sides[] = {
	{ "{\"model\":\"m\",\"max_tokens\":1,\"tools\":[{}],\"messages\":"
	  "[{\"role\":\"user\",\"content\":\"count\"}]}",
	    "probe" },
	{ "{\"model\":\"m\",\"max_tokens\":100,\"messages\":[{\"role\":"
	  "\"user\","
	  "\"content\":\"Hello\"}]}",
	    "no-tools" },
	{ "{\"model\":\"m\",\"max_tokens\":100,\"tools\":[],\"messages\":[]}",
	    "no-tools" },
	{ "{\"model\":\"m\",\"max_tokens\":100,\"system\":\"Generate a concise "
	  "session "
	  "TITLE\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
	    "title" },
	{ "{\"model\":\"m\",\"max_tokens\":100,\"messages\":[{\"role\":"
	  "\"user\","
	  "\"content\":[{\"type\":\"text\",\"text\":\"Summarize this\"}]}]}",
	    "summary" },
	{ "{\"model\":\"m\",\"max_tokens\":100,\"tools\":[{}],\"output_"
	  "format\":"
	  "{\"type\":\"json_schema\",\"schema\":{\"type\":\"object\","
	  "\"properties\":{\"title\":{\"type\":\"string\"}}}},\"messages\":[]}",
	    "title" },
	{ "{\"model\":\"m\",\"max_tokens\":100,\"output_config\":{\"format\":"
	  "{\"type\":\"json_schema\",\"schema\":{\"type\":\"object\","
	  "\"properties\":{\"ok\":{\"type\":\"boolean\"}}}}},\"tools\":[{}],"
	  "\"messages\":[]}",
	    "json-schema" },
	{ "{\"model\":\"m\",\"max_tokens\":100,\"tools\":[{}],\"messages\":"
	  "[{\"role\":\"user\",\"content\":\"CRITICAL: Respond with TEXT ONLY. "
	  "Summarize.\"}]}",
	    "summary" },
	/* main-loop requests, even when the prompt says title or summary */
	{ "{\"model\":\"m\",\"max_tokens\":100,\"tools\":[{}],\"messages\":"
	  "[{\"role\":\"user\",\"content\":\"Summarize the title of "
	  "README\"}]}",
	    NULL },
	{ "{\"model\":\"m\",\"max_tokens\":32000,\"tools\":[{}],\"output_"
	  "config\":"
	  "{\"effort\":\"high\"},\"messages\":[]}",
	    NULL },
};

static void
test_side_kinds(void)
{
	json_t *root;
	size_t i;

	for (i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		root = json_loads(sides[i].body, 0, NULL);
		is_str(engine_side_kind(root), sides[i].kind, "side kind %zu",
		    i);
		json_decref(root);
	}
}

static void
test_schema_example(void)
{
	static const struct {
		const char *schema;
		const char *want;
	} cases[] = {
		{ "{\"type\":\"object\",\"properties\":{\"title\":{\"type\":"
		  "\"string\"}},\"required\":[\"title\"],"
		  "\"additionalProperties\":false}",
		    "{\"title\":\"Scripted session\"}" },
		{ "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":"
		  "\"boolean\"},\"reason\":{\"type\":\"string\"},"
		  "\"impossible\":"
		  "{\"type\":\"boolean\"}},\"required\":[\"ok\",\"reason\"]}",
		    "{\"ok\":true,\"reason\":\"scripted\"}" },
		{ "{\"type\":\"object\",\"properties\":{\"selected_memories\":"
		  "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}",
		    "{\"selected_memories\":[]}" },
		{ "{\"type\":\"array\",\"minItems\":2,\"items\":{\"enum\":"
		  "[\"a\",\"b\"]}}",
		    "[\"a\",\"a\"]" },
		{ "{\"type\":[\"null\",\"integer\"],\"minimum\":3}", "3" },
		{ "{\"anyOf\":[{\"const\":7},{\"type\":\"string\"}]}", "7" },
		{ "\"nonsense\"", "\"scripted\"" },
	};
	json_t *schema, *ex;
	size_t i;
	char *s;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		schema = json_loads(cases[i].schema, JSON_DECODE_ANY, NULL);
		ex = engine_schema_example(schema);
		s = json_dumps(ex, JSON_COMPACT | JSON_ENCODE_ANY);
		is_str(s, cases[i].want, "schema example %zu", i);
		free(s);
		json_decref(ex);
		json_decref(schema);
	}
	/* deep nesting ends */
	{
		char deep[4096] = "";
		int k;

		for (k = 0; k < 100; k++)
			strcat(deep, "{\"properties\":{\"a\":");
		strcat(deep, "{}");
		for (k = 0; k < 100; k++)
			strcat(deep, "}}");
		schema = json_loads(deep, 0, NULL);
	}
	ex = engine_schema_example(schema);
	ok(schema != NULL && ex != NULL, "deeply nested schemas end");
	json_decref(ex);
	json_decref(schema);
}

static const char *
block_text(const struct answer *a, size_t i)
{
	return i < a->msg.nblocks ? a->msg.blocks[i].text : NULL;
}

static void
test_answers(void)
{
	struct engine *e = engine_of(SCRIPT3, 0);
	char *h1, *h2, *s;
	struct answer a;

	if (e == NULL)
		return;
	/* a side request first: it must not disturb the script */
	ok(answer_for(e, "",
	       ",\"output_format\":{\"type\":\"json_schema\","
	       "\"schema\":{\"type\":\"object\",\"properties\":{\"title\":"
	       "{\"type\":\"string\"}},\"required\":[\"title\"]}}",
	       &a) == 0,
	    "a title request is answered");
	is_int(a.what, ANSWER_SIDE, "as a side request");
	is_str(a.side, "title", "of kind title");
	is_str(block_text(&a, 0), "{\"title\":\"Scripted session\"}",
	    "with a JSON title");
	is_str(a.msg.stop_reason, "end_turn", "ending the turn");
	answer_free(&a);

	answer_for(e, "", "", &a);
	is_int(a.what, ANSWER_TURN, "the first request plays a turn");
	is_int(a.turn, 0, "turn 0");
	is_int(a.status, 200, "status 200");
	is_int(a.fault.kind, FAULT_NONE, "no fault");
	is_int(a.msg.nblocks, 2, "two blocks");
	is_str(block_text(&a, 0), "Let me look.", "the text");
	is_int(a.msg.blocks[1].type, BLOCK_TOOL_USE, "a tool_use");
	is_str(a.msg.blocks[1].name, "Read", "named Read");
	is_str(a.msg.stop_reason, "tool_use", "stop_reason tool_use");
	is_str(a.msg.model, "claude-test", "the request's model is echoed");
	ok(strncmp(a.msg.id, "msg_01", 6) == 0, "a msg id");
	ok(strncmp(a.request_id, "req_01", 6) == 0, "a request id");
	ok(a.msg.input_tokens > 10, "input tokens estimated from the body");
	ok(a.msg.output_tokens >= 1, "output tokens estimated");
	answer_free(&a);

	/* the same request again: the same turn (a retry) */
	answer_for(e, "", "", &a);
	is_int(a.turn, 0, "a repeated request gets the same turn");
	answer_free(&a);

	h1 = history(e, "", 0, 1, "\"SECRET=1\"");
	answer_for(e, h1, "", &a);
	is_int(a.turn, 1, "after turn 0's result: turn 1");
	is_int(a.fault.kind, FAULT_HTTP, "its first fault fires");
	is_int(a.status, 529, "529");
	is_str(a.error_type, "overloaded_error", "overloaded_error");
	is_str(a.error_message, "Overloaded", "message Overloaded");
	answer_free(&a);

	/* a side request in between does not consume the next fault */
	answer_for(e, h1, ",\"max_tokens\":1", &a);
	is_int(a.what, ANSWER_SIDE, "a max_tokens 1 probe is a side request");
	is_str(a.msg.stop_reason, "max_tokens", "stop_reason max_tokens");
	answer_free(&a);

	answer_for(e, h1, "", &a);
	is_int(a.turn, 1, "the retry is turn 1 again");
	is_int(a.fault.kind, FAULT_STREAM_ERROR, "second fault: stream error");
	is_int(a.status, 200, "streamed: status 200");
	is_str(a.error_type, "overloaded_error", "error event type");
	ok(a.msg.nblocks == 1, "the message is still built");
	answer_free(&a);

	answer_for(e, h1, "", &a);
	is_int(a.fault.kind, FAULT_NONE, "faults exhausted: plain turn");
	s = json_dumps(a.msg.blocks[0].input, JSON_COMPACT);
	is_str(s,
	    "{\"command\":\"echo SECRET=1\",\"n\":[1,\"SECRET=1\","
	    "{\"k\":\"SECRET=1\"}]}",
	    "tool input expanded from the result");
	free(s);
	answer_free(&a);

	h2 = history(e, h1, 1, 0, "[{\"type\":\"text\",\"text\":\"out\"}]");
	answer_for(e, h2, "", &a);
	is_int(a.turn, 2, "turn 2");
	is_int(a.msg.blocks[0].type, BLOCK_THINKING, "thinking first");
	is_str(block_text(&a, 0), "t=out", "thinking expanded");
	ok(a.msg.blocks[0].signature != NULL &&
		strlen(a.msg.blocks[0].signature) > 40,
	    "thinking has a signature");
	is_str(block_text(&a, 1), "It says: out", "text expanded");
	is_str(a.msg.stop_reason, "end_turn", "a text-only turn ends the turn");
	answer_free(&a);
	free(h1);

	/* past the script: the final text, with the script's model */
	{
		struct engine *e2 = engine_of("{\"version\":1,\"turns\":[{"
					      "\"blocks\":[{\"type\":\"tool_"
					      "use\",\"name\":\"Read\"}]}],"
					      "\"model\":\"claude-fixed\"}",
		    0);
		char *h3 = history(e2, "", 0, 0, "\"R\"");

		answer_for(e2, h3, "", &a);
		is_int(a.what, ANSWER_FINAL,
		    "an exhausted script answers final");
		is_str(block_text(&a, 0), SCRIPT_DEFAULT_FINAL,
		    "with the default final text");
		is_str(a.msg.stop_reason, "end_turn", "end_turn");
		is_str(a.msg.model, "claude-fixed", "the script's model wins");
		answer_free(&a);
		free(h3);
		engine_free(e2);
	}
	free(h2);
	engine_free(e);
}

static void
test_final_template_and_cap(void)
{
	struct engine *e = engine_of("{\"version\":1,\"turns\":[],\"final\":"
				     "\"Final: {{last_result}}\"}",
	    3);
	struct answer a;
	int i;

	if (e == NULL)
		return;
	answer_for(e,
	    ",{\"role\":\"assistant\",\"content\":[{\"type\":"
	    "\"tool_use\",\"id\":\"toolu_01T1x1fJ34qAmk2tNTrN7Up6\",\"name\":"
	    "\"X\",\"input\":{}}]},{\"role\":\"user\",\"content\":[{\"type\":"
	    "\"tool_result\",\"tool_use_id\":\"toolu_"
	    "01T1x1fJ34qAmk2tNTrN7Up6\","
	    "\"content\":\"seen\"}]}",
	    "", &a);
	is_int(a.what, ANSWER_FINAL, "an empty script answers final");
	is_str(block_text(&a, 0), "Final: seen", "final text expanded");
	answer_free(&a);
	for (i = 0; i < 2; i++) {
		answer_for(e, "", "", &a);
		answer_free(&a);
	}
	answer_for(e, "", "", &a);
	is_int(a.what, ANSWER_CAP, "request 4 of a cap of 3 is refused");
	is_int(a.status, 400, "with a 400");
	is_str(a.error_type, "invalid_request_error", "invalid_request_error");
	is_str(a.error_message,
	    "leakbench scripted model: request cap 3 "
	    "reached",
	    "cap message");
	is_int(a.n, 4, "request number 4");
	answer_free(&a);
	engine_free(e);
}

/*
 * Main: Agent, then a text repeating the result. Subagent: a text and a
 * Read, a Bash (with a 529 first) repeating the result, then the final.
 */
#define SCRIPT_SUB \
	"{\"version\":1,\"turns\":[" \
	"{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"Agent\",\"input\":" \
	"{\"description\":\"Look\",\"prompt\":\"Read .env\"}}]}," \
	"{\"blocks\":[{\"type\":\"text\",\"text\":\"Main: " \
	"{{last_result}}\"}]}]," \
	"\"subagent\":{\"turns\":[" \
	"{\"blocks\":[{\"type\":\"thinking\",\"thinking\":\"hm\"}," \
	"{\"type\":\"text\",\"text\":\"Reading.\"}," \
	"{\"type\":\"tool_use\",\"name\":\"Read\",\"input\":" \
	"{\"file_path\":\"/work/.env\"}}]}," \
	"{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"Bash\",\"input\":" \
	"{\"command\":\"echo {{last_result}}\"}}]," \
	"\"faults\":[{\"kind\":\"http\",\"status\":529}]}]," \
	"\"final\":\"Sub: {{last_result}}\"}}"

/* The turn an id of ours decodes to, with its flag; -1 when not ours. */
static long long
id_turn(const struct engine *e, const char *id)
{
	uint32_t turn, block;

	if (id == NULL ||
	    !ids_decode_tool_use(&e->ids, id, strlen(id), &turn, &block))
		return -1;
	return turn;
}

static void
test_subagent(void)
{
	struct engine *e = engine_of(SCRIPT_SUB, 0);
	char *m1, *s1, *s2, *mixed, *body, *sig;
	struct answer a;
	struct mreq r;
	char err[256];

	ok(e != NULL, "engine for a script with a subagent");
	if (e == NULL)
		return;

	/* the main agent starts: it spawns the subagent */
	answer_as(e, 0, "", "", &a);
	is_int(a.what, ANSWER_TURN, "main request 1: a turn");
	ok(!a.subagent, "of the main script");
	is_int(a.turn, 0, "turn 0");
	is_int(a.nturns, 2, "of 2");
	is_str(a.msg.blocks[0].name, "Agent", "the Agent call");
	is_int(id_turn(e, a.msg.blocks[0].id), 0, "its id is a plain turn 0");
	answer_free(&a);

	/* the subagent's first request: no id of its own, its turn 0 */
	answer_as(e, 1, "", "", &a);
	is_int(a.what, ANSWER_TURN, "subagent request 1: a turn");
	ok(a.subagent, "of the subagent script");
	is_int(a.turn, 0, "its turn 0");
	is_int(a.nturns, 2, "of its 2");
	is_int(a.msg.nblocks, 3, "three blocks");
	is_str(block_text(&a, 1), "Reading.", "its text");
	is_str(a.msg.blocks[2].name, "Read", "its Read");
	is_str(a.msg.stop_reason, "tool_use", "stop_reason tool_use");
	is_int(strlen(a.msg.blocks[2].id), IDS_LEN,
	    "an id of the usual length");
	ok(strncmp(a.msg.blocks[2].id, "toolu_01", 8) == 0, "and prefix (%s)",
	    a.msg.blocks[2].id);
	is_int(id_turn(e, a.msg.blocks[2].id), IDS_SUBAGENT_TURN | 0,
	    "it decodes to turn 0 with the subagent flag");
	sig = strdup(a.msg.blocks[0].signature);
	answer_free(&a);
	answer_as(e, 0, "", "", &a);
	answer_free(&a);
	answer_as(e, 1, "", "", &a);
	is_str(a.msg.blocks[0].signature, sig,
	    "a subagent's signature is "
	    "stable");
	answer_free(&a);
	free(sig);

	/* the subagent moves on through its own ids */
	s1 = history(e, "", (int)IDS_SUBAGENT_TURN, 2, "\"SECRET=1\"");
	answer_as(e, 1, s1, "", &a);
	is_int(a.turn, 1, "after its Read: subagent turn 1");
	ok(a.subagent, "still the subagent's");
	is_int(a.status, 529, "its turn's fault fires");
	answer_free(&a);
	answer_as(e, 1, s1, "", &a);
	is_int(a.fault.kind, FAULT_NONE, "then the plain turn");
	is_str(a.msg.blocks[0].name, "Bash", "a Bash");
	is_str(json_string_value(
		   json_object_get(a.msg.blocks[0].input, "command")),
	    "echo SECRET=1", "its input templated from the result");
	is_int(id_turn(e, a.msg.blocks[0].id), IDS_SUBAGENT_TURN | 1,
	    "an id of subagent turn 1");
	answer_free(&a);
	s2 = history(e, s1, (int)(IDS_SUBAGENT_TURN | 1), 0, "\"OUT\"");
	answer_as(e, 1, s2, "", &a);
	is_int(a.what, ANSWER_FINAL, "its script exhausted: final");
	ok(a.subagent, "the subagent's final");
	is_int(a.turn, 2, "turn = its nturns");
	is_str(block_text(&a, 0), "Sub: OUT", "its final text, templated");
	is_str(a.msg.stop_reason, "end_turn", "end_turn");
	answer_free(&a);

	/* another subagent starts from its own position; faults are spent */
	answer_as(e, 1, "", "", &a);
	is_int(a.turn, 0, "a second subagent starts at turn 0");
	answer_free(&a);
	answer_as(e, 1, s1, "", &a);
	is_int(a.turn, 1, "and moves on by its ids");
	is_int(a.fault.kind, FAULT_NONE,
	    "the 529 fired once, for all "
	    "subagents");
	answer_free(&a);

	/* the main agent gets the Agent result: its turn 1 */
	m1 = history(e, "", 0, 0, "\"Sub: OUT\"");
	answer_as(e, 0, m1, "", &a);
	is_int(a.turn, 1, "main request after the Agent result: turn 1");
	ok(!a.subagent, "of the main script");
	is_str(block_text(&a, 0), "Main: Sub: OUT", "repeating the result");
	answer_free(&a);

	/* neither script's ids move the other */
	answer_as(e, 0, s2, "", &a);
	is_int(a.turn, 0, "subagent ids in a main request: main turn 0");
	ok(!a.subagent, "still main");
	answer_free(&a);
	answer_as(e, 1, m1, "", &a);
	is_int(a.turn, 0, "main ids in a subagent request: subagent turn 0");
	ok(a.subagent, "still the subagent's");
	answer_free(&a);
	mixed = history(e, m1, (int)IDS_SUBAGENT_TURN, 2, "\"x\"");
	body = body_with(mixed, "");
	mreq_parse(body, strlen(body), 0, &r, err, sizeof(err));
	is_int(engine_position(e, r.messages), 1,
	    "mixed history: main "
	    "position from main ids only");
	is_int(engine_subagent_position(e, r.messages), 1,
	    "subagent position "
	    "from subagent ids only");
	mreq_free(&r);
	free(body);
	free(mixed);
	body = body_with(s2, "");
	mreq_parse(body, strlen(body), 0, &r, err, sizeof(err));
	is_int(engine_position(e, r.messages), 0, "subagent ids: main 0");
	is_int(engine_subagent_position(e, r.messages), 2, "subagent 2");
	mreq_free(&r);
	free(body);

	/* side requests stay side requests, and spend no subagent fault */
	answer_as(e, 1, s1, ",\"max_tokens\":1", &a);
	is_int(a.what, ANSWER_SIDE, "a subagent's probe is a side request");
	answer_free(&a);
	free(s1);
	free(s2);
	free(m1);
	engine_free(e);

	/* faults of a subagent turn fire on its side-request-free retries */
	e = engine_of("{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":"
		      "[{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"R\"}],"
		      "\"faults\":[{\"kind\":\"http\",\"status\":500}]}]}}",
	    0);
	answer_as(e, 1, "", ",\"max_tokens\":1", &a);
	is_int(a.what, ANSWER_SIDE, "a probe first");
	answer_free(&a);
	answer_as(e, 0, "", "", &a);
	is_int(a.status, 200, "the main request is not faulted");
	is_int(a.what, ANSWER_FINAL, "and answers its (empty) script's final");
	answer_free(&a);
	answer_as(e, 1, "", "", &a);
	is_int(a.status, 500, "the subagent's first request gets its fault");
	answer_free(&a);
	engine_free(e);
}

static void
test_subagent_default(void)
{
	struct engine *e = engine_of(SCRIPT3, 3);
	char *h;
	struct answer a;

	if (e == NULL)
		return;
	answer_as(e, 1, "", "", &a);
	is_int(a.what, ANSWER_FINAL, "no subagent script: final at once");
	ok(a.subagent, "a subagent's");
	is_int(a.nturns, 0, "of no turns");
	is_str(block_text(&a, 0), SCRIPT_SUBAGENT_FINAL, "the default text");
	is_int(a.msg.nblocks, 1, "one block, no tool_use: no recursion");
	is_str(a.msg.stop_reason, "end_turn", "end_turn");
	answer_free(&a);
	h = history(e, "", 0, 1, "\"R\"");
	answer_as(e, 1, h, "", &a);
	is_int(a.what, ANSWER_FINAL, "main ids do not give it the main turns");
	answer_free(&a);
	free(h);
	answer_as(e, 0, "", "", &a);
	is_int(a.what, ANSWER_TURN, "a main request is counted with them");
	answer_free(&a);
	answer_as(e, 1, "", "", &a);
	is_int(a.what, ANSWER_CAP, "the cap counts subagent requests too");
	is_int(a.n, 4, "request 4 of a cap of 3");
	answer_free(&a);
	engine_free(e);
}

/*
 * Without the header nothing changes: a script with a subagent answers
 * main requests byte for byte as the same script without one.
 */
static void
test_subagent_unchanged(void)
{
	struct engine *plain = engine_of(SCRIPT3, 0);
	struct engine *with = engine_of(
	    "{\"version\":1,\"turns\":["
	    "{\"blocks\":[{\"type\":\"text\",\"text\":\"Let me look.\"},"
	    "{\"type\":\"tool_use\",\"name\":\"Read\",\"input\":{\"file_path\":"
	    "\"/work/.env\"}}]},"
	    "{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"Bash\",\"input\":"
	    "{\"command\":\"echo "
	    "{{last_result}}\",\"n\":[1,\"{{last_result}}\","
	    "{\"k\":\"{{last_result}}\"}]}}],"
	    "\"faults\":[{\"kind\":\"http\",\"status\":529},"
	    "{\"kind\":\"stream_error\",\"after_blocks\":0}]},"
	    "{\"blocks\":[{\"type\":\"thinking\",\"thinking\":\"t={{last_"
	    "result}}\"},"
	    "{\"type\":\"text\",\"text\":\"It says: {{last_result}}\"}]}],"
	    "\"final\":\"Final: {{last_result}}\",\"subagent\":{\"turns\":["
	    "{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"Read\"}]}]}}",
	    0);
	struct buf x = { 0 }, y = { 0 };
	struct answer a, b;
	char *h[4];
	int i, same = 1, n = 0;

	if (plain == NULL || with == NULL)
		return;
	h[0] = strdup("");
	h[1] = history(plain, h[0], 0, 1, "\"A\"");
	h[2] = history(plain, h[1], 1, 0, "\"B\"");
	h[3] = history(plain, h[2], 2, 1, "\"C\"");
	for (i = 0; i < 4; i++) {
		do {
			answer_as(plain, 0, h[i], "", &a);
			answer_as(with, 0, h[i], "", &b);
			buf_reset(&x);
			buf_reset(&y);
			if (a.status == 200)
				render_sse(&x, &a.msg);
			if (b.status == 200)
				render_sse(&y, &b.msg);
			same = same && a.status == b.status &&
			    a.what == b.what && a.turn == b.turn &&
			    x.len == y.len &&
			    (x.len == 0 || memcmp(x.p, y.p, x.len) == 0);
			n++;
			answer_free(&a);
			answer_free(&b);
		} while (n < 20 && a.fault.kind != FAULT_NONE);
	}
	ok(same,
	    "%d main answers identical with and without a subagent "
	    "script",
	    n);
	is_int(n, 6, "the faults were among them");
	for (i = 0; i < 4; i++)
		free(h[i]);
	buf_free(&x);
	buf_free(&y);
	engine_free(plain);
	engine_free(with);
}

static void
test_final_faults(void)
{
	struct engine
	    *e = engine_of("{\"version\":1,\"turns\":[{\"blocks\":"
			   "[],\"faults\":[{\"kind\":\"http\",\"status\":429,"
			   "\"retry_after\":1}]}]}",
		0);
	struct answer a;

	if (e == NULL)
		return;
	answer_for(e, "", "", &a);
	is_int(a.what, ANSWER_FINAL, "a fault-only script: final");
	is_int(a.status, 429, "its fault fires first");
	is_int(a.fault.retry_after, 1, "with its retry-after");
	is_str(a.error_type, "rate_limit_error", "rate_limit_error");
	answer_free(&a);
	answer_for(e, "", "", &a);
	is_int(a.status, 200, "then the final answer");
	is_str(block_text(&a, 0), SCRIPT_DEFAULT_FINAL, "the final text");
	answer_free(&a);
	engine_free(e);
}

/*
 * A subject's own model calls: a request whose system prompt or first user
 * message holds a reply's match gets the reply, the first that matches;
 * it neither advances the script nor consumes a fault; a match that is
 * only later in the conversation (a tool result) does not count.
 */
static void
test_replies(void)
{
	struct engine
	    *e = engine_of("{\"version\":1,\"turns\":["
			   "{\"blocks\":[{\"type\":\"tool_use\","
			   "\"name\":\"Bash\",\"input\":{}}],"
			   "\"faults\":[{\"kind\":\"http\","
			   "\"status\":529}]}],"
			   "\"replies\":[{\"match\":\"SAFETY-REVIEW\","
			   "\"reply\":\"{\\\"verdict\\\":\\\"deny\\\"}\"},"
			   "{\"match\":\"go\",\"reply\":\"\"}]}",
		0);
	struct answer a;
	char *h;

	if (e == NULL)
		return;
	ok(answer_for(e, "",
	       ",\"system\":[{\"type\":\"text\","
	       "\"text\":\"You are a SAFETY-REVIEW bot\"}]",
	       &a) == 0,
	    "a request with a reply's match in its system prompt is answered");
	is_int(a.what, ANSWER_REPLY, "by a reply");
	is_int(a.reply, 1, "the first that matches");
	is_str(block_text(&a, 0), "{\"verdict\":\"deny\"}",
	    "with the reply's text, as written");
	is_str(a.msg.stop_reason, "end_turn", "ending the turn");
	is_int(a.fault.kind, FAULT_NONE, "consuming no fault");
	answer_free(&a);

	/* "go" is the first user message of every body_with request */
	answer_for(e, "", "", &a);
	is_int(a.what, ANSWER_REPLY, "a match in the first user message");
	is_int(a.reply, 2, "is the second reply");
	is_str(block_text(&a, 0), "", "an empty reply is allowed");
	answer_free(&a);
	engine_free(e);

	e = engine_of("{\"version\":1,\"turns\":["
		      "{\"blocks\":[{\"type\":\"tool_use\","
		      "\"name\":\"Bash\",\"input\":{}}],"
		      "\"faults\":[{\"kind\":\"http\",\"status\":529}]}],"
		      "\"replies\":[{\"match\":\"SAFETY-REVIEW\","
		      "\"reply\":\"deny\"}]}",
	    0);
	if (e == NULL)
		return;
	h = history(e, "", 0, 0, "\"SAFETY-REVIEW in a tool result\"");
	answer_for(e, h, "", &a);
	is_int(a.what, ANSWER_FINAL,
	    "a match in a later message is no reply: the script goes on");
	answer_free(&a);
	free(h);
	answer_for(e, "", "", &a);
	is_int(a.what, ANSWER_TURN, "a request with no match plays the script");
	is_int(a.fault.kind, FAULT_HTTP, "and gets the fault no reply took");
	answer_free(&a);
	engine_free(e);
}

int
main(void)
{
	ids_init_seed(&ids, 1);
	test_ids();
	test_requests();
	test_position();
	test_last_result();
	test_expand();
	test_side_kinds();
	test_schema_example();
	test_answers();
	test_final_template_and_cap();
	test_final_faults();
	test_subagent();
	test_subagent_default();
	test_subagent_unchanged();
	test_replies();
	return tap_done();
}
