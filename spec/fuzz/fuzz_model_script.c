/*
 * libFuzzer target for the scripted model's script loader: any bytes go
 * through script_parse; a script that loads is played once against a
 * fixed request with a tool result (so templates expand and turns render)
 * and once against a request that has passed its first turn. Invariants:
 * a refused script leaves an error message that never quotes the input's
 * text past a key name, and a loaded one always answers and renders.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/engine.h"
#include "model/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
play(struct engine *e, const char *body)
{
	struct buf out = { 0 };
	struct answer a;
	struct mreq r;
	char err[256];

	if (mreq_parse(body, strlen(body), 0, &r, err, sizeof(err)) < 0)
		abort();
	if (engine_answer(e, &r, &a) < 0)
		abort();
	if (a.status == 200) {
		if (render_sse(&out, &a.msg) < 0 ||
		    render_json(&out, &a.msg) < 0)
			abort();
	} else if (render_error(&out, a.error_type, a.error_message,
		       a.request_id) < 0)
		abort();
	buf_free(&out);
	answer_free(&a);
	mreq_free(&r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "", id[IDS_BUF], body[1024];
	struct script *s;
	struct engine *e;
	struct ids ids;

	s = script_parse((const char *)data, size, err, sizeof(err));
	if (s == NULL) {
		if (err[0] == '\0')
			abort();
		return 0;
	}
	ids_init_seed(&ids, 7);
	if ((e = engine_new(s, &ids, 0)) == NULL)
		abort();
	play(e,
	    "{\"model\":\"m\",\"max_tokens\":100,\"stream\":true,"
	    "\"tools\":[{}],\"messages\":[{\"role\":\"user\",\"content\":"
	    "[{\"type\":\"tool_result\",\"tool_use_id\":\"x\",\"content\":"
	    "\"R\\u00e9sultat \\u0000 {{last_result}}\"}]}]}");
	ids_tool_use(&ids, 0, 0, id);
	snprintf(body, sizeof(body),
	    "{\"model\":\"m\",\"max_tokens\":100,"
	    "\"tools\":[{}],\"messages\":[{\"role\":\"assistant\",\"content\":"
	    "[{\"type\":\"tool_use\",\"id\":\"%s\",\"name\":\"X\",\"input\":{}}"
	    "]},{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\","
	    "\"tool_use_id\":\"%s\",\"content\":\"ok\"}]}]}",
	    id, id);
	play(e, body);
	engine_free(e);
	return 0;
}
