/*
 * The Lua layer of leakbench, embedded in the binary as text and as bytecode
 * at build time (src/embed.sh writes the table), and lb-conmon's binary
 * (src/embed_bin.sh).
 * Read-only, static: nothing to free.
 */
#ifndef LEAKBENCH_EMBEDDED_H
#define LEAKBENCH_EMBEDDED_H

#include <stddef.h>

struct embedded_file {
	const char *module;    /* "leakbench", "leakbench.loader" */
	const char *chunkname; /* "@src/lua/loader.lua" */
	const char *text;
	size_t len;
	const char *code; /* its bytecode (src/luadump/main.c) */
	size_t code_len;
};

/* Terminated by an entry whose module is NULL. */
extern const struct embedded_file embedded_files[];

/* lb-conmon's binary (src/conmon/main.c), embedded by src/embed_bin.sh. */
extern const unsigned char lb_conmon_bin[];
extern const size_t lb_conmon_bin_size;

#endif
