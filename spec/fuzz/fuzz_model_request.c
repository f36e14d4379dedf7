/*
 * libFuzzer target for the scripted model's request side: a Messages API
 * body goes through mreq_parse, and when it parses, through engine_answer
 * (position from tool_use ids, {{last_result}}, side-request detection,
 * faults) and both renderers. The engine is built once from a script that
 * uses every block type, templates and faults; its ids come from seed 1,
 * so corpus entries can carry real ids (spec/fuzz/corpus/fuzz_model_request
 * holds some). Its counters are reset each run so the request cap never
 * hides the rest. Invariants: a refused body leaves an error message, an
 * answer is a message or an API error, and rendering never fails.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/engine.h"
#include "model/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char script_json[] =
    "{\"version\":1,\"turns\":["
    "{\"blocks\":[{\"type\":\"thinking\",\"thinking\":\"t {{last_result}}\"},"
    "{\"type\":\"text\",\"text\":\"Let me look.\"},"
    "{\"type\":\"tool_use\",\"name\":\"Read\",\"input\":{\"file_path\":"
    "\"/work/.env\",\"n\":[1,{\"k\":\"{{last_result}}\"}]}}],"
    "\"faults\":[{\"kind\":\"http\",\"status\":529},"
    "{\"kind\":\"stream_error\",\"after_blocks\":1}]},"
    "{\"blocks\":[{\"type\":\"tool_use\",\"name\":\"Bash\",\"input\":"
    "{\"command\":\"echo {{last_result}}\"}}]},"
    "{\"blocks\":[{\"type\":\"text\",\"text\":\"It says {{last_result}}\"}]}],"
    "\"final\":\"F {{last_result}}\"}";

static struct engine *engine;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf out = { 0 };
	struct answer a;
	struct mreq r;
	struct ids ids;
	char err[256] = "";
	size_t i;

	if (engine == NULL) {
		ids_init_seed(&ids, 1);
		engine = engine_new(script_parse(script_json,
					sizeof(script_json) - 1, err,
					sizeof(err)),
		    &ids, 0);
		if (engine == NULL)
			abort();
	}
	engine->requests = 0;
	for (i = 0; i <= engine->script->nturns; i++)
		engine->fault_next[i] = 0;
	if (mreq_parse(data, size, size % 2, &r, err, sizeof(err)) < 0) {
		if (err[0] == '\0')
			abort();
		return 0;
	}
	if (engine_answer(engine, &r, &a) < 0)
		abort();
	if (a.status == 200) {
		if (a.msg.nblocks == 0 || a.msg.stop_reason == NULL ||
		    render_sse(&out, &a.msg) < 0 ||
		    render_json(&out, &a.msg) < 0)
			abort();
	} else if (a.error_type[0] == '\0' ||
	    render_error(&out, a.error_type, a.error_message, a.request_id) < 0)
		abort();
	buf_free(&out);
	answer_free(&a);
	mreq_free(&r);
	return 0;
}
