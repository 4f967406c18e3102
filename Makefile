# doccc - ahead-of-time compiler for torch.export programs.
#
#   make            build build/doccc
#   make demo       install what is missing, compile ResNet-18, run the C example
#   make test       install what is missing, run the whole suite
#   make asan       the suite under address and undefined-behaviour sanitizers
#   make bench      latency of doccc libraries next to PyTorch
#   make install PREFIX=/usr/local DESTDIR=
#   make golden     rewrite golden files (review the diff in git)

CC      ?= cc
PREFIX  ?= /usr/local
BUILD   ?= build
PYTHON  ?= python3
PKGS     = libzip yaml-0.1 libcjson
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS  ?= -O2 -g
WARN     = -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes
XCFLAGS  = -std=c11 -D_GNU_SOURCE $(WARN) $(PKG_CFLAGS) $(SANFLAGS)
LDLIBS   = $(PKG_LIBS) -ldl -lm

LIB_SRC  = $(sort $(wildcard lib/*.c))
IR_SRC   = $(sort $(wildcard ir/*.c ir/passes/*.c ir/lower/*.c ir/expand/*.c))
BE_SRC   = $(sort $(wildcard backends/*.c))
CMD_SRC  = $(sort $(wildcard cmd/*.c))
CORE_SRC = $(LIB_SRC) $(IR_SRC) $(BE_SRC)
CORE_OBJ = $(CORE_SRC:%.c=$(BUILD)/%.o)
CMD_OBJ  = $(CMD_SRC:%.c=$(BUILD)/%.o)
HDRS     = $(wildcard lib/*.h ir/*.h ir/*/*.h backends/*.h cmd/*.h)

UNIT_SRC = $(sort $(wildcard test/unit/test_*.c))
UNIT_BIN = $(UNIT_SRC:test/unit/%.c=$(BUILD)/test/%)

all: $(BUILD)/doccc

$(BUILD)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) -c $< -o $@

$(BUILD)/libdoccc.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/doccc: $(CMD_OBJ) $(BUILD)/libdoccc.a
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $(CMD_OBJ) $(BUILD)/libdoccc.a $(LDLIBS)

$(BUILD)/test/%: test/unit/%.c test/unit/check.h $(BUILD)/libdoccc.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(XCFLAGS) -o $@ $< $(BUILD)/libdoccc.a $(LDLIBS)

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

setup:
	@sh test/setup.sh

test: setup all unit
	$(PYTHON) -m pytest -q test

demo: setup all
	$(MAKE) -C examples/resnet18 DOCCC=$(CURDIR)/$(BUILD)/doccc PYTHON=$(PYTHON)

bench: setup all
	$(PYTHON) test/bench.py

asan:
	$(MAKE) BUILD=build/asan CC=clang SANFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" test

golden: all
	DOCCC_GOLDEN_UPDATE=1 $(PYTHON) -m pytest -q test -k golden

install: $(BUILD)/doccc
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/doccc $(DESTDIR)$(PREFIX)/bin/doccc
	install -m 644 man/doccc.1 $(DESTDIR)$(PREFIX)/share/man/man1/doccc.1

clean:
	rm -rf build

.PHONY: all unit setup test demo bench asan golden install clean
