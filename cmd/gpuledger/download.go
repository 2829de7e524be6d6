package main

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/dashboard"
)

// defaultAgentBinary is where the server looks for the agent binary it
// hands out when GPULEDGER_AGENT_BINARY is unset: gpuledger-agent next to
// its own executable, else /opt/gpuledger/gpuledger-agent (the Docker
// image's place).
func defaultAgentBinary() string {
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			p := filepath.Join(filepath.Dir(exe), "gpuledger-agent")
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p
			}
		}
	}
	return "/opt/gpuledger/gpuledger-agent"
}

// agentHandler returns the hub's HTTP handler as serve runs it: the agent
// protocol, /healthz and /metrics, plus GET /agent/download,
// /agent/download.sha256 and /agent/install.sh (binary, "" for the
// default place), all behind an access log that never records a token.
// The dashboard (nil: none) is served under /app/.
// A missing binary is logged once here; the endpoints then say it is
// missing rather than fail the server. The downloads are returned too, for
// /agent to tell whether its install command can work (nil when downloads
// are off).
func agentHandler(h *hub.Hub, dash http.Handler, binary, publicURL string, log *slog.Logger) (http.Handler, bot.AgentDownloads) {
	if binary == "" {
		binary = defaultAgentBinary()
	}
	mux := http.NewServeMux()
	mux.Handle("/", h.Handler())
	if dash != nil {
		mux.Handle(dashboard.PathApp, dash)
	}
	dl, err := hub.NewDownloads(hub.DownloadConfig{Binary: binary, PublicURL: publicURL, Tokens: h.Tokens(), Logger: log, StallTimeout: hubWriteTimeout})
	if err != nil {
		log.Error("agent downloads off: GPULEDGER_PUBLIC_URL must be an http(s) URL", "err", err)
		off := func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "agent downloads are off: the server's GPULEDGER_PUBLIC_URL is not an http(s) URL", http.StatusServiceUnavailable)
		}
		for _, p := range []string{hub.PathAgentDownload, hub.PathAgentChecksum, hub.PathAgentInstall} {
			mux.HandleFunc("GET "+p, off)
		}
		return hub.AccessLog(log, mux), nil
	}
	dl.Register(mux)
	if sum, err := dl.Checksum(); err != nil {
		log.Warn("the agent binary is not available: /agent/download answers 503", "err", err)
	} else {
		log.Info("serving the agent binary", "path", binary, "sha256", sum)
	}
	return hub.AccessLog(log, mux), dl
}
