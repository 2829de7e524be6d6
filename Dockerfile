# syntax=docker/dockerfile:1
#
# gpuledger server image. Three stages:
#   server  the server, pure Go (modernc.org/sqlite), built without cgo
#   agent   the portable agent (cgo for NVML) built on Debian bullseye, so
#           it starts on glibc 2.17 and later; the server hands it out at
#           GET /agent/download and /agent/install.sh
#   final   scratch: the two binaries, CA roots, a passwd entry; no shell
#
# Every step is replayed outside Docker by scripts/ship-dockerfile-steps.sh.
#
#   docker build -t gpuledger .
#   docker run -d -p 8477:8477 -v gpuledger-data:/data \
#     -e TELEGRAM_BOT_TOKEN=... -e GPULEDGER_PUBLIC_URL=https://ledger.example.com gpuledger

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS server
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# timetzdata: the zone database inside the binary (the final image has none).
RUN CGO_ENABLED=0 go build -trimpath -tags timetzdata \
      -ldflags="-s -w -X main.version=${VERSION}" \
      -o /out/usr/local/bin/gpuledger ./cmd/gpuledger \
 && mkdir -p /out/etc /out/data /out/opt/gpuledger \
 && echo 'gpuledger:x:10001:10001:gpuledger:/data:/sbin/nologin' > /out/etc/passwd \
 && echo 'gpuledger:x:10001:' > /out/etc/group \
 && cp /etc/ssl/certs/ca-certificates.crt /out/ca-certificates.crt

# The agent needs cgo; built against bullseye's glibc it needs no symbol
# newer than GLIBC_2.17. Go and the module cache come from the server stage.
FROM debian:bullseye AS agent
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev binutils \
 && rm -rf /var/lib/apt/lists/*
COPY --from=server /usr/local/go /usr/local/go
COPY --from=server /go/pkg/mod /go/pkg/mod
ENV PATH=/usr/local/go/bin:/usr/bin:/bin \
    GOMODCACHE=/go/pkg/mod \
    GOPROXY=off \
    GOTOOLCHAIN=local \
    GOFLAGS=-mod=readonly
WORKDIR /src
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=1 CGO_CFLAGS="-O2 -Wno-deprecated-declarations" \
    go build -trimpath -buildvcs=false -tags netgo,osusergo \
      -ldflags="-s -w -X github.com/gpuledger/gpuledger/agent.Version=${VERSION}" \
      -o /out/gpuledger-agent ./cmd/gpuledger-agent \
 && bash scripts/agent-check-glibc.sh /out/gpuledger-agent 2.17

FROM scratch
COPY --from=server /out/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=server /out/etc/passwd /out/etc/group /etc/
COPY --from=server --chown=10001:10001 /out/data /data
COPY --from=server /out/usr/local/bin/gpuledger /usr/local/bin/gpuledger
COPY --from=agent /out/gpuledger-agent /opt/gpuledger/gpuledger-agent
ENV GPULEDGER_DB=/data/gpuledger.db \
    GPULEDGER_LISTEN=:8477 \
    GPULEDGER_AGENT_BINARY=/opt/gpuledger/gpuledger-agent
VOLUME ["/data"]
EXPOSE 8477
USER 10001:10001
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["/usr/local/bin/gpuledger", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/gpuledger"]
CMD ["serve"]
