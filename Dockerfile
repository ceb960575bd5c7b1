# leadsignal container image.
#
#   docker build -t leadsignal .
#   docker run -p 8080:8080 -v leadsignal-data:/data leadsignal
#
# Without DATABASE_URL the server keeps an embedded SQLite database under /data
# (one replica only); set DATABASE_URL=postgres://... for Postgres.
# The generated views/*_templ.go are committed (CI checks they are fresh), so
# the build does not run templ.

FROM golang:1.26-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-mod=readonly

# Module downloads in their own layer: rebuilt only when go.mod/go.sum change.
COPY go.mod go.sum ./
RUN go mod download

COPY . .
RUN go build -trimpath -ldflags='-s -w' -o /out/leadsignal ./cmd/leadsignal \
	&& mkdir -p /out/data \
	&& chown 65532:65532 /out/data \
	&& chmod 0750 /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/leadsignal /leadsignal
# distroless has no shell to mkdir: ship /data already owned by nonroot, so a
# fresh named volume mounted there inherits that owner.
COPY --from=build --chown=65532:65532 /out/data /data
ENV LEADSIGNAL_DATA=/data \
	LEADSIGNAL_ADDR=:8080
VOLUME /data
EXPOSE 8080
USER nonroot:nonroot
ENTRYPOINT ["/leadsignal"]
CMD ["serve"]
