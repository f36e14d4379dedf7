# leakbench: build, test, run.
#
#   make                 ./leakbench, and the servers build/default/lb-model,
#                        lb-proxy, lb-net, lb-trap, lb-init, lb-nodump.so
#   make test            all test tiers under ASan+UBSan; ends with "N passed, N failed"
#   make run             the built-in suite against every subject, offline
#   make bench           benchmarks; figures on stdout
#   make fuzz            bounded fuzzing of the parsers (FUZZ_SECONDS each),
#                        and FUZZ_CHAINS generated chains of transforms
#   make lint            luacheck, cppcheck, clang-format and indentation;
#                        fails on any warning
#   make format          clang-format every C file lint checks
#   make install PREFIX=/usr/local [DESTDIR=]
#                        the binary, the servers, the container contexts,
#                        the scenarios and subjects, leakbench.1, bash
#                        completion, docs/api.md
#   make SANITIZE=address,undefined   any target, with sanitizers
#
# Every binary's main() lives in a file named main.c; everything else under
# src/ is library code. src/common/ (plain C, no Lua) is archived alone in
# libcommon.a: the servers link it, their own objects (lb-trap also the
# scanner's) and only the libraries they use; never the Lua bindings.
# leakbench and the C unit tests (spec/unit/test_*.c) link libleakbench.a
# (everything else) and libcommon.a.

CC       ?= cc
BUILD    ?= build/default
SANITIZE ?=
Q        ?= @

# leakbench's libraries; libcurl only for lb-proxy (PROXY_LIBS) and its
# unit test, and its headers for the proxy's objects
PKGS     := lua5.4 lua5.4-cjson uuid jansson zlib libcrypto libssl liblzma \
            libzstd liblz4 libbrotlidec
WARN     := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wcast-align \
            -Wstrict-prototypes -Wmissing-prototypes -Wold-style-definition \
            -Wformat=2 -Wvla -Wundef -Wwrite-strings -Wimplicit-fallthrough
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -D_GNU_SOURCE -pthread $(WARN) -Isrc -I$(BUILD)/gen \
            -ffunction-sections -fdata-sections \
            $(shell pkg-config --cflags $(PKGS) libcurl 2>/dev/null)
LDFLAGS  += -pthread
LDLIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lbz2 -lm
# The servers keep only the functions they call (a server that uses one
# function of http.c does not carry the rest of src/common/).
SERVER_LDFLAGS = $(LDFLAGS) -Wl,--gc-sections
# What each server links besides libc: only the libraries it uses.
libs = $(shell pkg-config --libs $(1) 2>/dev/null)
MODEL_LIBS := $(call libs,jansson uuid)
PROXY_LIBS := $(call libs,libcurl jansson zlib) -lm
NET_LIBS   :=
TRAP_LIBS  := $(call libs,jansson zlib libcrypto libssl liblzma libzstd \
              liblz4 libbrotlidec) -lbz2 -lm
ifneq ($(SANITIZE),)
CFLAGS   += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=$(SANITIZE)
endif

COMMON_SRC := $(wildcard src/common/*.c)
CORE_SRC  := $(filter-out src/main.c,$(wildcard src/*.c))
SCAN_SRC  := $(wildcard src/scan*.c)
MODEL_SRC := $(filter-out src/model/main.c,$(wildcard src/model/*.c))
PROXY_SRC := $(filter-out src/proxy/main.c,$(wildcard src/proxy/*.c))
NET_SRC   := $(filter-out src/net/main.c,$(wildcard src/net/*.c))
TRAP_SRC  := $(filter-out src/trap/main.c,$(wildcard src/trap/*.c))
LUA_SRC   := $(sort $(wildcard src/lua/*.lua))
UNIT_SRC  := $(wildcard spec/unit/test_*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
COMMON_OBJ := $(call obj,$(COMMON_SRC))
CORE_OBJ  := $(call obj,$(CORE_SRC)) $(BUILD)/obj/gen/embedded.o $(BUILD)/obj/gen/conmon_bin.o
SCAN_OBJ  := $(call obj,$(SCAN_SRC))
MODEL_OBJ := $(call obj,$(MODEL_SRC))
PROXY_OBJ := $(call obj,$(PROXY_SRC))
NET_OBJ   := $(call obj,$(NET_SRC))
TRAP_OBJ  := $(call obj,$(TRAP_SRC))
LIB       := $(BUILD)/libleakbench.a
COMMON    := $(BUILD)/libcommon.a
UNIT_BIN  := $(patsubst spec/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRC))

all: leakbench servers
SERVERS := $(if $(wildcard src/model/main.c),$(BUILD)/lb-model) \
           $(if $(wildcard src/proxy/main.c),$(BUILD)/lb-proxy) \
           $(if $(wildcard src/net/main.c),$(BUILD)/lb-net) \
           $(if $(wildcard src/trap/main.c),$(BUILD)/lb-trap) \
           $(if $(wildcard src/init/main.c),$(BUILD)/lb-init $(BUILD)/lb-nodump.so)
servers: $(SERVERS)
.PHONY: all servers test check lint format run bench fuzz clean images install

ifeq ($(BUILD),build/default)
leakbench: $(BUILD)/leakbench
	$(Q)cp $< $@.tmp && mv -f $@.tmp $@
else
leakbench: $(BUILD)/leakbench
endif

$(LIB): $(CORE_OBJ) $(MODEL_OBJ) $(PROXY_OBJ) $(NET_OBJ) $(TRAP_OBJ)
	@echo "  AR    $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(COMMON): $(COMMON_OBJ)
	@echo "  AR    $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/leakbench: $(BUILD)/obj/src/main.o $(LIB) $(COMMON)
	@echo "  LD    $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/lb-model: $(BUILD)/obj/src/model/main.o $(MODEL_OBJ) $(COMMON)
	@echo "  LD    $@"
	$(Q)$(CC) $(SERVER_LDFLAGS) -o $@ $^ $(MODEL_LIBS)

$(BUILD)/lb-proxy: $(BUILD)/obj/src/proxy/main.o $(PROXY_OBJ) $(COMMON)
	@echo "  LD    $@"
	$(Q)$(CC) $(SERVER_LDFLAGS) -o $@ $^ $(PROXY_LIBS)

$(BUILD)/lb-net: $(BUILD)/obj/src/net/main.o $(NET_OBJ) $(COMMON)
	@echo "  LD    $@"
	$(Q)$(CC) $(SERVER_LDFLAGS) -o $@ $^ $(NET_LIBS)

$(BUILD)/lb-trap: $(BUILD)/obj/src/trap/main.o $(TRAP_OBJ) $(SCAN_OBJ) $(COMMON)
	@echo "  LD    $@"
	$(Q)$(CC) $(SERVER_LDFLAGS) -o $@ $^ $(TRAP_LIBS)

# lb-init and lb-nodump.so run in the claude container, from the servers
# image: libc only, never sanitized (the claude image has no libasan).
INIT_CFLAGS := -O2 -g -std=c11 -D_GNU_SOURCE $(WARN)
$(BUILD)/lb-init: src/init/main.c
	@mkdir -p $(@D)
	@echo "  CC    $@"
	$(Q)$(CC) $(INIT_CFLAGS) -o $@ $<

$(BUILD)/lb-nodump.so: src/init/nodump.c
	@mkdir -p $(@D)
	@echo "  CC    $@"
	$(Q)$(CC) $(INIT_CFLAGS) -shared -fPIC -o $@ $<

$(BUILD)/unit/%: spec/unit/%.c spec/unit/tap.h $(LIB) $(COMMON)
	@mkdir -p $(@D)
	@echo "  CC    $@"
	$(Q)$(CC) $(CFLAGS) -Ispec/unit $(LDFLAGS) -o $@ $< $(LIB) $(COMMON) $(LDLIBS) \
	    $(shell pkg-config --libs libbrotlienc libcurl 2>/dev/null)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	@echo "  CC    $<"
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

# The Lua layer, embedded as text and as bytecode (compiled by luadump, a
# build tool linked with the same Lua library); chunk names are the
# source paths.
$(BUILD)/luadump: src/luadump/main.c
	@mkdir -p $(@D)
	@echo "  CC    $@"
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(call libs,lua5.4)
$(BUILD)/gen/embedded.c: $(LUA_SRC) src/embed.sh $(BUILD)/luadump
	@mkdir -p $(@D)
	@echo "  GEN   $@"
	$(Q)LUADUMP=$(BUILD)/luadump sh src/embed.sh $(LUA_SRC) > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/gen/embedded.o: $(BUILD)/gen/embedded.c
	@mkdir -p $(@D)
	@echo "  CC    $<"
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

# lb-conmon (src/conmon/main.c), which the suite's podman service runs as
# conmon: libc only and never sanitized, like lb-init (podman execs it for
# every container); leakbench carries its bytes and writes it out.
$(BUILD)/lb-conmon: src/conmon/main.c src/conmon.c src/conmon.h
	@mkdir -p $(@D)
	@echo "  CC    $@"
	$(Q)$(CC) $(INIT_CFLAGS) -Isrc -o $@ src/conmon/main.c src/conmon.c
$(BUILD)/gen/conmon_bin.c: $(BUILD)/lb-conmon src/embed_bin.sh
	@mkdir -p $(@D)
	@echo "  GEN   $@"
	$(Q)sh src/embed_bin.sh lb_conmon_bin $< > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/gen/conmon_bin.o: $(BUILD)/gen/conmon_bin.c
	@mkdir -p $(@D)
	@echo "  CC    $<"
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# Tests: the sanitized build, then every tier; spec/run prints the summary.
# Installs what is missing first (as root), like "run": the README promises
# both commands on a fresh machine.
test:
	$(Q).ci/setup --test
	$(Q)$(MAKE) --no-print-directory SANITIZE=thread BUILD=build/tsan tsan-units
	$(Q)$(MAKE) --no-print-directory SANITIZE=address,undefined BUILD=build/san \
	    LB_TSAN=build/tsan check

# The unit tests that start threads, built again under ThreadSanitizer:
# spec/run's tsan tier runs them (LB_TSAN names this build). A race shows
# on every run that reaches both sides, where under ASan it shows as a
# rare wrong byte.
TSAN_UNIT_SRC := $(shell grep -l pthread_create $(UNIT_SRC))
tsan-units: $(patsubst spec/unit/%.c,$(BUILD)/unit/%,$(TSAN_UNIT_SRC))

check: $(BUILD)/leakbench servers $(UNIT_BIN)
	$(Q)LB_TSAN=$(LB_TSAN) spec/run $(BUILD)

# The built-in suite against every subject, offline. Installs what is
# missing first (as root), like CI does.
run:
	$(Q).ci/setup
	$(Q)$(MAKE) --no-print-directory all
	./leakbench build
	./leakbench run scenarios/ $(patsubst %,--subject %,$(wildcard subjects/*.lua))

bench: all $(BUILD)/unit/test_chain
	$(Q)bench/run $(BUILD)

# Lint: fails on any warning. Lua indents with spaces and has no tabs; C
# indents with tabs (a continuation line may add four spaces). luacheck reads .luacheckrc (std lua54, busted
# globals under spec/); Debian's luacheck runs under Lua 5.1, hence --std
# there. cppcheck sees the project's defines; variableScope is off because
# style(9) declares locals at the top of a block.
CPPCHECK := cppcheck -q --std=c11 -D_GNU_SOURCE -Isrc -I$(BUILD)/gen \
            --enable=warning,style,performance,portability \
            --suppress=variableScope --inline-suppr --error-exitcode=1
LUA_FILES = $(shell find src spec scenarios subjects -name '*.lua')
C_FILES   = $(shell find src spec -name '*.[ch]')
# clang-format (.clang-format: style(9) as clang-format 14 can say it)
# checks every C file.
FORMAT_C  = $(C_FILES)
format:
	$(Q)clang-format -i $(FORMAT_C)
lint:
	@echo "  CLANG-FORMAT"
	$(Q)clang-format --dry-run -Werror $(FORMAT_C)
	@echo "  INDENT"
	$(Q)! grep -n '	' $(LUA_FILES) /dev/null | sed 's/$$/  <- a tab in Lua/' | grep .
	$(Q)! grep -nE '^	* {8}|^	* +	' $(C_FILES) /dev/null | sed 's/$$/  <- spaces indent C/' | grep .
	@echo "  LUACHECK"
	$(Q)luacheck -q --no-color .
	@echo "  CPPCHECK src"
	$(Q)$(CPPCHECK) -j2 src

# Install. The binary finds the container contexts in ../share/leakbench
# beside it (images.lua), byte for byte the files images.lua hashes and
# stages (Makefile, containers/, every .c and .h under src/, src/embed.sh,
# src/common, src/model, src/proxy, src/net, src/trap), so an installed
# leakbench computes the same image tags as this tree and finds the images built here.
PREFIX  ?= /usr/local
DESTDIR ?=
INST    := $(DESTDIR)$(PREFIX)
CONTEXT_FILES = Makefile $(wildcard containers/*) $(wildcard src/embed.sh) \
	$(shell find src -name '*.[ch]') \
	$(shell find $(wildcard src/common src/model src/proxy src/net src/trap) -type f)
install: $(BUILD)/leakbench servers
	@echo "  INSTALL $(INST)"
	$(Q)install -d $(INST)/bin $(INST)/libexec/leakbench $(INST)/share/leakbench \
	    $(INST)/share/man/man1 $(INST)/share/bash-completion/completions $(INST)/share/doc/leakbench
	$(Q)install -m 0755 $(BUILD)/leakbench $(INST)/bin/leakbench
	$(Q)install -m 0755 $(SERVERS) $(INST)/libexec/leakbench/
	$(Q)for f in $(sort $(CONTEXT_FILES)); do install -D -m 0644 "$$f" "$(INST)/share/leakbench/$$f" || exit 1; done
	$(Q)rm -rf $(INST)/share/leakbench/scenarios $(INST)/share/leakbench/subjects
	$(Q)cp -R --preserve=mode scenarios subjects $(INST)/share/leakbench/
	$(Q)install -m 0644 docs/leakbench.1 $(INST)/share/man/man1/leakbench.1
	$(Q)$(BUILD)/leakbench completion bash > $(INST)/share/bash-completion/completions/leakbench
	$(Q)install -m 0644 docs/api.md README.md $(INST)/share/doc/leakbench/

FUZZ_SECONDS ?= 60
FUZZ_CHAINS  ?= 100000
fuzz: $(BUILD)/gen/embedded.c $(BUILD)/unit/test_chain
	$(Q)CHAIN_CASES=$(FUZZ_CHAINS) $(BUILD)/unit/test_chain
	$(Q)spec/fuzz/run $(FUZZ_SECONDS)

clean:
	rm -rf build leakbench
