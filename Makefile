# Weft — make run starts a daemon, make test runs every test. Both install what is missing first.
SWIFT ?= swift
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEBS := libuv1-dev libsqlite3-dev pkg-config
HOST ?= 127.0.0.1
PORT ?= 7700
HTTP_PORT ?= 7780
DATA ?= ./weft-data

.PHONY: deps build release test run bench sim clean

deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $$missing; fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product weft
	$(SWIFT) build -c release --product weft-sim

# Tests run in release mode (with -enable-testing for @testable imports): the property tests and the
# simulator swarm are several times faster than in debug, which keeps the whole run well under CI's limit.
TESTFLAGS := -c release -Xswiftc -enable-testing

test: deps
	$(SWIFT) build $(TESTFLAGS) --build-tests
	$(SWIFT) test $(TESTFLAGS) --skip-build

run: release
	mkdir -p $(DATA)
	@if [ ! -f $(DATA)/tokens ]; then \
	  umask 077; printf '# NAME SECRET, one per line (Docs/CLI.md)\nclient %s\n' "$$(head -c 24 /dev/urandom | base64)" > $(DATA)/tokens; \
	  echo "created $(DATA)/tokens with a client token"; \
	fi
	@echo "client commands: export WEFT_TOKEN='$$(awk '$$1=="client"{print $$2}' $(DATA)/tokens)'"
	@echo "try HTTP (Docs/HTTP.md): curl -H \"Authorization: Bearer \$$WEFT_TOKEN\" 'http://$(HOST):$(HTTP_PORT)/.json?print=pretty'"
	$$($(SWIFT) build -c release --show-bin-path)/weft serve --db $(DATA)/weft.sqlite --listen $(HOST):$(PORT) --tokens $(DATA)/tokens --http $(HOST):$(HTTP_PORT)

bench: release
	$$($(SWIFT) build -c release --show-bin-path)/weft bench all

sim: release
	$$($(SWIFT) build -c release --show-bin-path)/weft-sim swarm --seeds 1000

clean:
	rm -rf .build
