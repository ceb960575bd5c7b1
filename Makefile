# leadsignal developer and CI tasks (GNU make).
#
#   make run            run the server (SQLite under ./data unless DATABASE_URL is set),
#                       with a dev admin (admin@example.com, leadsignal-dev) and a
#                       demo account on first run
#   make demo           seed a demo account (Northwind Roofing, four weeks of synthetic leads)
#                       on the configured database, print its login, and serve it while
#                       it keeps capturing leads; nothing is sent to Meta (dry run)
#   make build          static binary in bin/leadsignal
#   make generate       regenerate templ views (views/*_templ.go)
#   make check-generate fail when the committed *_templ.go are stale
#   make test           fmt + vet + check-generate + all tests (SQLite, Postgres, browser)
#   make test-pg        same as test, but a missing Postgres is an error
#   make lint           vet, gofmt and golangci-lint (when installed)
#   make bench          the budgets of docs/operations.md ("Benchmarks") against throwaway
#                       Postgres clusters: capture and costly rules on a durable one

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO        ?= go
PKGS      ?= ./...
TESTFLAGS ?=
TESTENV   := bash .ci/testenv
TEST      := $(strip $(GO) test -tags browser -count=1 -timeout 20m $(TESTFLAGS) $(PKGS))

# STARTED is when this make began: make test and test-pg end with the wall
# time since then, as "make test: N s", passed or failed, for CI logs.
STARTED := $(shell date +%s)
timed    = rc=0; $(1) || rc=$$?; echo "make $@: $$(( $$(date +%s) - $(STARTED) )) s"; exit $$rc

.PHONY: run demo build generate check-generate fmt-check vet test test-pg lint bench clean

DEV_ADMIN    := admin@example.com
DEV_PASSWORD := leadsignal-dev

run:
	@$(GO) build -o bin/leadsignal-dev ./cmd/leadsignal
	@if printf '%s\n' '$(DEV_PASSWORD)' | bin/leadsignal-dev user create --email $(DEV_ADMIN) --admin >/dev/null 2>&1; then \
		bin/leadsignal-dev account create --name Demo --slug demo --owner $(DEV_ADMIN) >/dev/null; \
		echo "make run: sign in as $(DEV_ADMIN) with password $(DEV_PASSWORD) (account Demo)"; \
	fi
	bin/leadsignal-dev

demo:
	$(GO) run ./cmd/leadsignal demo

build:
	CGO_ENABLED=0 $(GO) build -o bin/leadsignal ./cmd/leadsignal

generate:
	$(GO) tool templ generate

check-generate: generate
	@if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		echo "check-generate: not a git work tree; skipping the diff"; exit 0; \
	fi; \
	if ! git diff --exit-code --stat -- '*_templ.go'; then \
		echo "check-generate: generated templ files are out of date:"; \
		git diff -- '*_templ.go' | head -n 60 || true; \
		echo "check-generate: run 'make generate' and commit the *_templ.go files"; \
		exit 1; \
	fi; \
	untracked=$$(git ls-files --others --exclude-standard -- '*_templ.go'); \
	if [ -n "$$untracked" ]; then \
		echo "check-generate: generated templ files are not committed:"; \
		echo "$$untracked" | sed 's/^/  /'; \
		if [ "$${CI:-}" = "true" ]; then \
			echo "check-generate: run 'make generate' and commit them"; exit 1; \
		fi; \
		echo "check-generate: (warning only outside CI)"; \
	fi

fmt-check:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then \
		echo "gofmt: these files need formatting (run 'gofmt -w .'):"; \
		echo "$$out" | sed 's/^/  /'; \
		exit 1; \
	fi

vet:
	$(GO) vet -tags browser $(PKGS)

# check-generate runs first: vet and gofmt look at the generated files too.
test: check-generate fmt-check vet
	$(call timed,$(TESTENV) $(TEST))

test-pg: check-generate fmt-check vet
	$(call timed,TESTENV_REQUIRE_PG=1 $(TESTENV) $(TEST))

lint: check-generate fmt-check vet
	@if command -v golangci-lint >/dev/null 2>&1; then \
		echo "golangci-lint run --allow-parallel-runners --build-tags browser $(PKGS)"; \
		golangci-lint run --allow-parallel-runners --build-tags browser $(PKGS); \
	else \
		echo "lint: golangci-lint is not installed; skipped. Install it with:"; \
		echo "  go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@latest"; \
	fi

# .ci/bench, .ci/bench-rules and .ci/bench-stages each start a durable Postgres of their own (.ci/durable-pg).
bench:
	GO="$(GO)" $(TESTENV) bash -c 'bash .ci/bench; rc=$$?; bash .ci/bench-rules || rc=1; bash .ci/bench-dispatch || rc=1; bash .ci/bench-outage || rc=1; bash .ci/bench-pages || rc=1; bash .ci/bench-preview || rc=1; bash .ci/bench-stages || rc=1; exit $$rc'

clean:
	rm -rf bin
