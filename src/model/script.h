/*
 * The scripted model's script: the turns it plays, loaded from the JSON
 * file the Lua side writes (from `model = lb.script{...}` in a scenario).
 *
 *	{"version": 1,
 *	 "model": "claude-sonnet-4-5",			optional
 *	 "turns": [{"blocks": [BLOCK, ...], "faults": [FAULT, ...]}, ...],
 *	 "final": "Done.",				optional
 *	 "max_requests": 200,				optional
 *	 "subagent": {"turns": [...], "final": S},	optional
 *	 "replies": [{"match": S, "reply": S}, ...]}	optional
 *
 *	BLOCK	{"type": "text", "text": S}
 *		{"type": "thinking", "thinking": S}
 *		{"type": "tool_use", "name": S, "input": {...}}
 *	FAULT	{"kind": "http", "status": 529}	any 400-599
 *		{"kind": "http", "status": 429, "retry_after": 1}
 *		{"kind": "stream_error", "error_type": "overloaded_error",
 *		 "after_blocks": 1}		(the defaults)
 *		{"kind": "delay", "ms": 3000}
 *
 * A turn with blocks but no tool_use ends the conversation (end_turn), so
 * it must be the last turn with blocks: a later one could never be played
 * and is refused.
 *
 * A turn may have faults and no blocks (lb.script allows it): such a turn
 * can never be passed, so its faults are moved to the next turn with
 * blocks, or to the final answer when none follows. An empty list may be
 * written {} (lua-cjson cannot tell an empty table's kind).
 *
 * "subagent" is what every subagent Claude Code spawns (its Agent tool,
 * once called Task) plays: its own turns and final text, under the same
 * rules as the top level (turns required, faults, the never-played check),
 * but without "subagent", "model", "version" or "max_requests" of its own
 * (the model and the request cap are the whole run's). Its final text
 * defaults to SCRIPT_SUBAGENT_FINAL. Without the key, the subagent script
 * is no turns and that final text: a spawned subagent answers at once and
 * never spawns another. (A subagent script that calls Agent itself has its
 * nested subagents play it too, from its first turn: that ends only at
 * max_requests.)
 *
 * "replies" answer the model calls a subject makes itself (a hook or an
 * interceptor that asks a model whether a call is safe): a request whose
 * system prompt or first user message contains a reply's "match" (plain
 * bytes, case-sensitive) gets that reply's text as its whole answer
 * (end_turn), the first reply that matches winning; such a request never
 * advances the script or consumes its faults. At most SCRIPT_MAX_REPLIES,
 * "match" non-empty. They come from a subject's `model_replies`.
 *
 * Validation is strict: an unknown key, a wrong type or an out-of-range
 * number is an error naming its place ("turns[1].blocks[0]: ...",
 * "subagent.turns[0]: ..."; indices are the JSON array's, from 0). A
 * loaded script is immutable and may be shared by every connection thread;
 * script_free releases it.
 */
#ifndef LEAKBENCH_MODEL_SCRIPT_H
#define LEAKBENCH_MODEL_SCRIPT_H

#include <stddef.h>

#include <jansson.h>

#define SCRIPT_MAX_BYTES	    (64u << 20) /* a script file larger is refused */
#define SCRIPT_MAX_TURNS	    100000
#define SCRIPT_MAX_BLOCKS	    1000 /* per turn */
#define SCRIPT_MAX_FAULTS	    100	 /* per turn */
#define SCRIPT_MAX_DELAY_MS	    600000
#define SCRIPT_DEFAULT_FINAL	    "Done."
#define SCRIPT_SUBAGENT_FINAL	    "I found nothing to report."
#define SCRIPT_DEFAULT_MAX_REQUESTS 200
#define SCRIPT_MAX_ERROR_TYPE	    39
#define SCRIPT_MAX_REPLIES	    1000

enum block_type { BLOCK_TEXT, BLOCK_THINKING, BLOCK_TOOL_USE };

struct block {
	enum block_type type;
	char *text;    /* text or thinking; NULL for tool_use */
	char *name;    /* tool_use only */
	json_t *input; /* tool_use only: an object, owned */
};

enum fault_kind { FAULT_NONE, FAULT_HTTP, FAULT_STREAM_ERROR, FAULT_DELAY };

struct fault {
	enum fault_kind kind;
	int status;	  /* http: 400..599 */
	int retry_after;  /* http: seconds, -1 when absent */
	char *error_type; /* stream_error: "overloaded_error", ... */
	int after_blocks; /* stream_error: blocks sent first */
	int ms;		  /* delay */
};

struct turn {
	struct block *blocks;
	size_t nblocks;
	struct fault *faults;
	size_t nfaults;
	int tool_use; /* some block is a tool_use */
};

struct reply {
	char *match; /* non-empty */
	char *text;
};

struct script {
	char *model; /* NULL: echo the request's model */
	struct turn *turns;
	size_t nturns;
	char *final;		    /* never NULL */
	struct fault *final_faults; /* of trailing fault-only turns */
	size_t nfinal_faults;
	int max_requests;	 /* 0 in a subagent script */
	struct script *subagent; /* never NULL at the top level; NULL
					   in a subagent script */
	struct reply *replies;	 /* top level only */
	size_t nreplies;
};

/*
 * Parses and validates a script held in memory; name is used in messages
 * only. Returns the script (free with script_free) or NULL with a message
 * in err ("3:14: unexpected token" for JSON errors, "turns[0]: ..." for
 * validation errors; the text never quotes the input).
 */
struct script *script_parse(const char *buf, size_t len, char *err,
    size_t errlen);

/* Reads and parses a file; err gets the reason, without the file name. */
struct script *script_load(const char *path, char *err, size_t errlen);

void script_free(struct script *s);

/* The API's error type for an HTTP status (429 -> "rate_limit_error"). */
const char *script_error_type(int status);

/* The status a stream error type maps to when it cannot be streamed. */
int script_error_status(const char *error_type);

#endif
