/*
 * The scripted model's script loader: a full script, the defaults, and a
 * table of invalid scripts with their exact messages.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "model/script.h"

static struct script *
parse(const char *json, char *err, size_t errlen)
{
	err[0] = '\0';
	return script_parse(json, strlen(json), err, errlen);
}

static void
test_full(void)
{
	const char *json =
	    "{\"version\":1,\"model\":\"claude-x\",\"final\":\"Bye.\","
	    "\"max_requests\":7,\"turns\":["
	    "{\"blocks\":[{\"type\":\"thinking\",\"thinking\":\"hmm\"},"
	    "{\"type\":\"text\",\"text\":\"Let me look.\"},"
	    "{\"type\":\"tool_use\",\"name\":\"Read\","
	    "\"input\":{\"file_path\":\"/work/.env\"}}],"
	    "\"faults\":[{\"kind\":\"http\",\"status\":529},"
	    "{\"kind\":\"http\",\"status\":429,\"retry_after\":1},"
	    "{\"kind\":\"stream_error\",\"after_blocks\":1},"
	    "{\"kind\":\"delay\",\"ms\":30}]},"
	    "{\"blocks\":[{\"type\":\"text\",\"text\":\"{{last_result}}\"}]}]}";
	char err[256];
	struct script *s = parse(json, err, sizeof(err));

	ok(s != NULL, "a full script loads (%s)", err);
	if (s == NULL)
		return;
	is_str(s->model, "claude-x", "model");
	is_str(s->final, "Bye.", "final");
	is_int(s->max_requests, 7, "max_requests");
	is_int(s->nturns, 2, "two turns");
	is_int(s->turns[0].nblocks, 3, "three blocks in turn 0");
	is_int(s->turns[0].blocks[0].type, BLOCK_THINKING, "thinking block");
	is_str(s->turns[0].blocks[0].text, "hmm", "thinking text");
	is_int(s->turns[0].blocks[2].type, BLOCK_TOOL_USE, "tool_use block");
	is_str(s->turns[0].blocks[2].name, "Read", "tool name");
	is_str(json_string_value(
		   json_object_get(s->turns[0].blocks[2].input, "file_path")),
	    "/work/.env", "tool input");
	ok(s->turns[0].tool_use, "turn 0 uses a tool");
	ok(!s->turns[1].tool_use, "turn 1 does not");
	is_int(s->turns[0].nfaults, 4, "four faults");
	is_int(s->turns[0].faults[0].kind, FAULT_HTTP, "http fault");
	is_int(s->turns[0].faults[0].status, 529, "status 529");
	is_int(s->turns[0].faults[0].retry_after, -1, "no retry-after");
	is_int(s->turns[0].faults[1].retry_after, 1, "retry-after 1");
	is_int(s->turns[0].faults[2].kind, FAULT_STREAM_ERROR, "stream error");
	is_str(s->turns[0].faults[2].error_type, "overloaded_error",
	    "stream error type defaults to overloaded_error");
	is_int(s->turns[0].faults[2].after_blocks, 1, "after one block");
	is_int(s->turns[0].faults[3].kind, FAULT_DELAY, "delay fault");
	is_int(s->turns[0].faults[3].ms, 30, "delay ms");
	is_int(s->turns[1].nfaults, 0, "turn 1 has no faults");
	script_free(s);
}

static void
test_defaults(void)
{
	char err[256];
	struct script *s = parse("{\"version\":1,\"turns\":[]}", err,
	    sizeof(err));

	ok(s != NULL, "an empty script loads (%s)", err);
	if (s == NULL)
		return;
	ok(s->model == NULL, "no model: echo the request's");
	is_str(s->final, SCRIPT_DEFAULT_FINAL, "default final text");
	is_int(s->max_requests, SCRIPT_DEFAULT_MAX_REQUESTS,
	    "default request cap");
	is_int(s->nturns, 0, "no turns");
	script_free(s);

	s = parse("{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":"
		  "\"tool_use\",\"name\":\"Bash\"}]}]}",
	    err, sizeof(err));
	ok(s != NULL && json_is_object(s->turns[0].blocks[0].input) &&
		json_object_size(s->turns[0].blocks[0].input) == 0,
	    "tool input defaults to {}");
	script_free(s);
}

static void
test_subagent(void)
{
	char err[256];
	struct script *s;

	/* absent: a subagent answers at once, and spawns nothing */
	s = parse("{\"version\":1,\"turns\":[]}", err, sizeof(err));
	ok(s != NULL && s->subagent != NULL,
	    "without a subagent key, a "
	    "subagent script anyway");
	if (s == NULL || s->subagent == NULL)
		return;
	is_int(s->subagent->nturns, 0, "of no turns");
	is_str(s->subagent->final, SCRIPT_SUBAGENT_FINAL, "and a short final");
	ok(s->subagent->subagent == NULL, "it has no subagent of its own");
	ok(s->subagent->model == NULL, "nor a model");
	is_int(s->subagent->nfinal_faults, 0, "nor faults");
	script_free(s);

	s = parse(
	    "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":"
	    "\"tool_use\",\"name\":\"Agent\",\"input\":{\"prompt\":\"go\"}}]}],"
	    "\"final\":\"Main: {{last_result}}\",\"subagent\":{\"turns\":["
	    "{\"blocks\":[],\"faults\":[{\"kind\":\"http\",\"status\":529}]},"
	    "{\"blocks\":[{\"type\":\"text\",\"text\":\"Reading.\"},"
	    "{\"type\":\"tool_use\",\"name\":\"Read\",\"input\":"
	    "{\"file_path\":\"/work/.env\"}}]},"
	    "{\"blocks\":[{\"type\":\"text\",\"text\":\"{{last_result}}\"}]},"
	    "{\"blocks\":{},\"faults\":[{\"kind\":\"delay\",\"ms\":5}]}],"
	    "\"final\":\"Sub done.\"}}",
	    err, sizeof(err));
	ok(s != NULL, "a script with a subagent loads (%s)", err);
	if (s == NULL)
		return;
	is_int(s->nturns, 1, "the main script keeps its turn");
	is_str(s->final, "Main: {{last_result}}", "and its final");
	is_int(s->subagent->nturns, 2,
	    "the subagent's fault-only turns are "
	    "merged away");
	is_int(s->subagent->turns[0].nblocks, 2, "its turn 0 has two blocks");
	is_str(s->subagent->turns[0].blocks[1].name, "Read", "a Read");
	ok(s->subagent->turns[0].tool_use, "turn 0 uses a tool");
	is_int(s->subagent->turns[0].nfaults, 1, "and carries the 529");
	is_int(s->subagent->turns[0].faults[0].status, 529, "529");
	is_str(s->subagent->turns[1].blocks[0].text, "{{last_result}}",
	    "turn 1 repeats the result");
	is_int(s->subagent->nfinal_faults, 1,
	    "trailing faults go to the "
	    "subagent's final answer");
	is_str(s->subagent->final, "Sub done.", "its own final");
	is_int(s->subagent->max_requests, 0, "no request cap of its own");
	ok(s->subagent->subagent == NULL, "no nested subagent");
	script_free(s);

	s = parse("{\"version\":1,\"turns\":[],\"final\":\"F\","
		  "\"subagent\":{\"turns\":[]}}",
	    err, sizeof(err));
	ok(s != NULL && s->subagent->nturns == 0,
	    "a subagent of no turns "
	    "(%s)",
	    err);
	if (s != NULL)
		is_str(s->subagent->final, SCRIPT_SUBAGENT_FINAL,
		    "without final gets the subagent default, not the main's");
	script_free(s);
}

static const struct {
	const char *json;
	const char *err;
} bad[] = {
	{ "", "1:0: '[' or '{' expected" },
	{ "{\"version\":1,\n \"turns\":[}", "2:11: unexpected token" },
	{ "{\"version\":1,\"turns\":[]} x", "1:26: end of file expected" },
	{ "[]", "the script is an array, expected an object" },
	{ "{\"turns\":[]}", "missing key 'version'" },
	{ "{\"version\":2,\"turns\":[]}",
	    "unsupported version 2 (expected 1)" },
	{ "{\"version\":\"1\",\"turns\":[]}",
	    "key 'version' is a string, expected an integer" },
	{ "{\"version\":1}", "missing key 'turns'" },
	{ "{\"version\":1,\"turns\":{}}",
	    "key 'turns' is an object, expected an array" },
	{ "{\"version\":1,\"turns\":[],\"extra\":1}", "unknown key 'extra'" },
	{ "{\"version\":1,\"turns\":[],\"version\":1}",
	    "1:33: duplicate object key" },
	{ "{\"version\":1,\"turns\":[],\"model\":\"\"}",
	    "key 'model' is empty" },
	{ "{\"version\":1,\"turns\":[],\"final\":3}",
	    "key 'final' is an integer, expected a string" },
	{ "{\"version\":1,\"turns\":[],\"max_requests\":0}",
	    "key 'max_requests' is 0, expected 1 to 1000000" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}]},{\"blocks\":[],\"faults\":[{\"kind\":\"delay\","
	  "\"ms\":1}]},{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"R\"}]}]}",
	    "turns[2] is never played: turns[0] has no tool_use, so the "
	    "conversation ends there" },
	{ "{\"version\":1,\"turns\":[3]}",
	    "turns[0]: is an integer, expected an object" },
	{ "{\"version\":1,\"turns\":[{}]}", "turns[0]: missing key 'blocks'" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[]}]}",
	    "turns[0]: a turn needs a block or a fault" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":{},\"faults\":{}}]}",
	    "turns[0]: a turn needs a block or a fault" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":{\"a\":1}}]}",
	    "turns[0]: key 'blocks' is an object, expected an array" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"x\":1}]}",
	    "turns[0]: unknown key 'x'" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}]},{\"blocks\":[{\"type\":\"image\"}]}]}",
	    "turns[1].blocks[0]: unknown block type 'image' (expected text, "
	    "thinking or tool_use)" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"text\":\"a\"}]}]}",
	    "turns[0].blocks[0]: missing key 'type'" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\"}]}]}",
	    "turns[0].blocks[0]: missing key 'text'" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\",\"name\":\"x\"}]}]}",
	    "turns[0].blocks[0]: unknown key 'name'" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"tool_use\","
	  "\"name\":\"\"}]}]}",
	    "turns[0].blocks[0]: key 'name' is empty" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"tool_use\","
	  "\"name\":\"Read\",\"input\":[1]}]}]}",
	    "turns[0].blocks[0]: key 'input' is an array, expected an object" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"thinking\","
	  "\"text\":\"a\"}]}]}",
	    "turns[0].blocks[0]: unknown key 'text'" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"faults\":{\"a\":1}}]}",
	    "turns[0]: key 'faults' is an object, expected an array" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"faults\":[{\"kind\":\"crash\"}]}]}",
	    "turns[0].faults[0]: unknown fault kind 'crash' (expected http, "
	    "stream_error or delay)" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"faults\":[{\"kind\":\"http\"}]}]}",
	    "turns[0].faults[0]: missing key 'status'" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"faults\":[{\"kind\":\"http\",\"status\":200}]}]}",
	    "turns[0].faults[0]: key 'status' is 200, expected 400 to 599" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"faults\":[{\"kind\":\"http\",\"status\":429,"
	  "\"retry_after\":-1}]}]}",
	    "turns[0].faults[0]: key 'retry_after' is out of range, expected 0 "
	    "to 86400" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"faults\":[{\"kind\":\"http\",\"status\":429,"
	  "\"retry_after\":\"1\"}]}]}",
	    "turns[0].faults[0]: key 'retry_after' is a string, expected a "
	    "number" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"faults\":[{\"kind\":\"http\",\"status\":529,"
	  "\"ms\":1}]}]}",
	    "turns[0].faults[0]: unknown key 'ms'" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"faults\":[{\"kind\":\"stream_error\","
	  "\"error_type\":\"Oops-1\"}]}]}",
	    "turns[0].faults[0]: key 'error_type' is not an API error type "
	    "(lowercase letters and '_', like 'overloaded_error')" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"faults\":[{\"kind\":\"delay\"}]}]}",
	    "turns[0].faults[0]: missing key 'ms'" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"faults\":[{\"kind\":\"delay\",\"ms\":1.5}]}]}",
	    "turns[0].faults[0]: key 'ms' is a number, expected an integer" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\"}],\"faults\":[{\"kind\":\"delay\",\"ms\":600001}]}]}",
	    "turns[0].faults[0]: key 'ms' is 600001, expected 0 to 600000" },
	{ "{\"version\":1,\"turns\":[{\"blocks\":[{\"type\":\"text\","
	  "\"text\":\"a\\u0000b\"}]}]}",
	    "1:65: \\u0000 is not allowed" },
	/* a subject's replies */
	{ "{\"version\":1,\"turns\":[],\"replies\":3}",
	    "key 'replies' is an integer, expected an array" },
	{ "{\"version\":1,\"turns\":[],\"replies\":[3]}",
	    "replies[0]: is an integer, expected an object" },
	{ "{\"version\":1,\"turns\":[],\"replies\":[{\"reply\":\"x\"}]}",
	    "replies[0]: missing key 'match'" },
	{ "{\"version\":1,\"turns\":[],\"replies\":[{\"match\":\"a\","
	  "\"reply\":\"x\"},{\"match\":\"\",\"reply\":\"x\"}]}",
	    "replies[1]: key 'match' is empty" },
	{ "{\"version\":1,\"turns\":[],\"replies\":[{\"match\":\"a\"}]}",
	    "replies[0]: missing key 'reply'" },
	{ "{\"version\":1,\"turns\":[],\"replies\":[{\"match\":\"a\","
	  "\"reply\":\"x\",\"status\":500}]}",
	    "replies[0]: unknown key 'status'" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[],"
	  "\"replies\":[]}}",
	    "subagent: key 'replies' is not allowed in a subagent script" },
	/* the subagent script */
	{ "{\"version\":1,\"turns\":[],\"subagent\":[]}",
	    "key 'subagent' is an array, expected an object" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":\"x\"}",
	    "key 'subagent' is a string, expected an object" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{}}",
	    "subagent: missing key 'turns'" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":3}}",
	    "subagent: key 'turns' is an integer, expected an array" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[],"
	  "\"subagent\":{\"turns\":[]}}}",
	    "subagent: key 'subagent' is not allowed in a subagent script" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[],"
	  "\"model\":\"m\"}}",
	    "subagent: key 'model' is not allowed in a subagent script" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[],"
	  "\"version\":1}}",
	    "subagent: key 'version' is not allowed in a subagent script" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[],"
	  "\"max_requests\":5}}",
	    "subagent: key 'max_requests' is not allowed in a subagent "
	    "script" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[],"
	  "\"blocks\":[]}}",
	    "subagent: unknown key 'blocks'" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[],"
	  "\"final\":false}}",
	    "subagent: key 'final' is a boolean, expected a string" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[7]}}",
	    "subagent.turns[0]: is an integer, expected an object" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[{\"blocks\":"
	  "[]}]}}",
	    "subagent.turns[0]: a turn needs a block or a fault" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[{\"blocks\":"
	  "[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\"}]}]}}",
	    "subagent.turns[0].blocks[1]: missing key 'text'" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[{\"blocks\":"
	  "[{\"type\":\"tool_use\",\"name\":\"R\"}]},{\"blocks\":[{\"type\":"
	  "\"tool_use\",\"name\":\"R\",\"input\":1}]}]}}",
	    "subagent.turns[1].blocks[0]: key 'input' is an integer, expected "
	    "an "
	    "object" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":[{\"blocks\":"
	  "[{\"type\":\"text\",\"text\":\"a\"}],\"faults\":[{\"kind\":"
	  "\"http\",\"status\":99}]}]}}",
	    "subagent.turns[0].faults[0]: key 'status' is 99, expected 400 to "
	    "599" },
	{ "{\"version\":1,\"turns\":[],\"subagent\":{\"turns\":["
	  "{\"blocks\":[{\"type\":\"text\",\"text\":\"a\"}]},"
	  "{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"R\"}]}]}}",
	    "subagent.turns[1] is never played: subagent.turns[0] has no "
	    "tool_use, so the conversation ends there" },
	/* the main script's errors come first, and without the prefix */
	{ "{\"version\":1,\"turns\":[{}],\"subagent\":{\"turns\":[{}]}}",
	    "turns[0]: missing key 'blocks'" },
};

static void
test_bad(void)
{
	struct script *s;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = parse(bad[i].json, err, sizeof(err));
		ok(s == NULL, "bad script %zu is refused", i);
		is_str(err, bad[i].err, "bad script %zu: message", i);
		script_free(s);
	}
}

static void
test_no_echo(void)
{
	char err[256];
	struct script *s;

	s = parse("{\"version\":1,\"turns\":[], SECRET-VALUE}", err,
	    sizeof(err));
	ok(s == NULL && strstr(err, "SECRET") == NULL,
	    "a JSON error does not quote the input (%s)", err);
	script_free(s);
}

static void
test_load(void)
{
	char err[256];
	struct script *s;

	s = script_load("/nonexistent/script.json", err, sizeof(err));
	ok(s == NULL, "a missing file is an error");
	is_str(err, "No such file or directory", "missing file: message");
	s = script_load("/", err, sizeof(err));
	ok(s == NULL, "a directory is an error");
	is_str(err, "Is a directory", "directory: message");
}

static void
test_error_types(void)
{
	is_str(script_error_type(529), "overloaded_error", "529");
	is_str(script_error_type(429), "rate_limit_error", "429");
	is_str(script_error_type(500), "api_error", "500");
	is_str(script_error_type(413), "request_too_large", "413");
	is_str(script_error_type(404), "not_found_error", "404");
	is_str(script_error_type(400), "invalid_request_error", "400");
	is_str(script_error_type(418), "invalid_request_error", "418");
	is_str(script_error_type(503), "api_error", "503");
	is_int(script_error_status("overloaded_error"), 529, "overloaded");
	is_int(script_error_status("api_error"), 500, "api_error");
}

static void
test_fault_only_turns(void)
{
	char err[256];
	struct script *s;

	s = parse(
	    "{\"version\":1,\"turns\":["
	    "{\"blocks\":{},\"faults\":[{\"kind\":\"http\",\"status\":503,"
	    "\"retry_after\":1.5}]},"
	    "{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"R\"}],\"faults\":"
	    "[{\"kind\":\"stream_error\",\"error_type\":\"new_error\"}]},"
	    "{\"blocks\":[{\"type\":\"text\",\"text\":\"b\"}],\"faults\":{}},"
	    "{\"blocks\":[],\"faults\":[{\"kind\":\"delay\",\"ms\":5}]}]}",
	    err, sizeof(err));
	ok(s != NULL, "fault-only turns load (%s)", err);
	if (s == NULL)
		return;
	is_int(s->nturns, 2, "they are merged away");
	is_int(s->turns[0].nfaults, 2, "turn 0 gets the faults before it");
	is_int(s->turns[0].faults[0].status, 503, "first the carried 503");
	is_int(s->turns[0].faults[0].retry_after, 2,
	    "a fractional retry_after rounds up");
	is_int(s->turns[0].faults[1].kind, FAULT_STREAM_ERROR,
	    "then its own fault");
	is_str(s->turns[0].faults[1].error_type, "new_error",
	    "any API-shaped error type is accepted");
	is_int(s->turns[0].faults[1].after_blocks, 1, "after_blocks default 1");
	is_str(s->turns[1].blocks[0].text, "b", "turn 1 is the old turn 2");
	is_int(s->turns[1].nfaults, 0, "faults {} is an empty list");
	is_int(s->nfinal_faults, 1, "trailing faults go to the final answer");
	is_int(s->final_faults[0].kind, FAULT_DELAY, "the delay");
	script_free(s);
}

int
main(void)
{
	test_full();
	test_defaults();
	test_subagent();
	test_bad();
	test_no_echo();
	test_fault_only_turns();
	test_load();
	test_error_types();
	return tap_done();
}
