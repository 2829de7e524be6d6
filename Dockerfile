# syntax=docker/dockerfile:1

# The server: pure Go (modernc.org/sqlite), built without cgo.
FROM golang:1.26-bookworm AS server
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/gpuledger ./cmd/gpuledger

# The agent: cgo (NVML), built on Debian bullseye so that it needs only an
# old glibc and starts on the hosts people rent (CentOS 7 and later).
FROM golang:1.26-bullseye AS agent
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 CGO_CFLAGS="-O2 -Wno-deprecated-declarations" \
    go build -trimpath -ldflags="-s -w" -o /out/gpuledger-agent ./cmd/gpuledger-agent

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tzdata curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin gpuledger \
 && mkdir -p /data /opt/gpuledger \
 && chown gpuledger:gpuledger /data
COPY --from=server /out/gpuledger /usr/local/bin/gpuledger
COPY --from=agent /out/gpuledger-agent /opt/gpuledger/gpuledger-agent
ENV GPULEDGER_DB=/data/gpuledger.db \
    GPULEDGER_LISTEN=:8477 \
    GPULEDGER_AGENT_BINARY=/opt/gpuledger/gpuledger-agent
VOLUME ["/data"]
EXPOSE 8477
USER gpuledger
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["curl", "-fsS", "http://127.0.0.1:8477/healthz"]
ENTRYPOINT ["/usr/local/bin/gpuledger"]
CMD ["serve"]
