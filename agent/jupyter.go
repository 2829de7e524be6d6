package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// jupyterSeen is what the presence keeps of one Jupyter server between
// looks: its kernels' CPU time (the fallback without the API) and the last
// activity found.
type jupyterSeen struct {
	cpuTicks uint64
	active   time.Time
}

// kernelCPUActive is the kernels' CPU time between two looks (once per
// heartbeat) that counts as a cell having run, where Jupyter's API cannot
// be asked: an idle ipykernel spends a few milliseconds a minute on its
// heartbeat and polls, any cell that does anything far more.
const kernelCPUActive = 50 // clock ticks: 0.5 s

// jupyterTimeout bounds one look at a Jupyter server's API: the presence
// holds its lock meanwhile, and the sample waits for it.
const jupyterTimeout = 500 * time.Millisecond

// jupyterActive is when something last ran in the Jupyter server pid: from
// its own API (the newest last_activity of its kernels and terminals, now
// while a kernel is busy, the server's start when it has neither), else
// from its kernel processes' CPU time (now when it grew by kernelCPUActive
// since the last look, else the activity found before; the first look
// counts as activity, as nothing is known before it).
func (p *Presence) jupyterActive(pid int, now time.Time) *time.Time {
	if p.jupyter == nil {
		p.jupyter = map[int]*jupyterSeen{}
	}
	js := p.jupyter[pid]
	first := js == nil
	if first {
		js = &jupyterSeen{}
		p.jupyter[pid] = js
	}
	if t, ok := p.jupyterAPI(pid, now); ok {
		js.active = t
	} else {
		cpu := p.kernelTicks(pid)
		if first || cpu >= js.cpuTicks+kernelCPUActive || cpu < js.cpuTicks {
			js.active = now
		}
		js.cpuTicks = cpu
	}
	t := js.active.UTC().Truncate(time.Second)
	return &t
}

// kernelTicks sums the CPU time (utime+stime, clock ticks) of the
// server's children and their children: its kernels.
func (p *Presence) kernelTicks(pid int) uint64 {
	var sum uint64
	for _, c := range p.children(pid) {
		for _, k := range append([]int{c}, p.children(c)...) {
			b, err := os.ReadFile(p.proc(strconv.Itoa(k) + "/stat"))
			if err != nil {
				continue
			}
			sum += statCPUTicks(b)
		}
	}
	return sum
}

// statCPUTicks returns utime+stime (fields 14 and 15) of a /proc/PID/stat
// line, 0 if it cannot be parsed.
func statCPUTicks(b []byte) uint64 {
	j := strings.LastIndexByte(string(b), ')')
	if j < 0 {
		return 0
	}
	rest := b[j+1:]
	var f []byte
	var sum uint64
	for k := 3; k <= 15; k++ {
		if f, rest = nextField(rest); f == nil {
			return 0
		}
		if k == 14 || k == 15 {
			n, ok := atou(f)
			if !ok {
				return 0
			}
			sum += n
		}
	}
	return sum
}

// jupyterConn is how to reach a Jupyter server's API.
type jupyterConn struct {
	Port    int    `json:"port"`
	BaseURL string `json:"base_url"`
	Token   string `json:"token"`
	Secure  bool   `json:"secure"`
}

// jupyterConnOf finds how to reach the server pid: its runtime file
// (jpserver-PID.json, nbserver-PID.json for the classic notebook) in its
// runtime directory, readable as the same user or root, which gives the
// port, base URL and token; else its command line (--port, --ServerApp.token
// and the like) and JUPYTER_TOKEN in its environment. The token is never
// logged.
func (p *Presence) jupyterConnOf(pid int) (jupyterConn, bool) {
	f := strconv.Itoa(pid)
	env := map[string]string{}
	if b, err := os.ReadFile(p.proc(f + "/environ")); err == nil {
		for _, kv := range strings.Split(string(b), "\x00") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				switch k {
				case "HOME", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "XDG_DATA_HOME", "JUPYTER_TOKEN":
					env[k] = v
				}
			}
		}
	}
	dir := env["JUPYTER_RUNTIME_DIR"]
	switch {
	case dir != "":
	case env["JUPYTER_DATA_DIR"] != "":
		dir = env["JUPYTER_DATA_DIR"] + "/runtime"
	case env["XDG_DATA_HOME"] != "":
		dir = env["XDG_DATA_HOME"] + "/jupyter/runtime"
	case env["HOME"] != "":
		dir = env["HOME"] + "/.local/share/jupyter/runtime"
	}
	if dir != "" {
		for _, name := range []string{"jpserver-", "nbserver-"} {
			fh, err := os.Open(dir + "/" + name + f + ".json")
			if err != nil {
				continue
			}
			var c jupyterConn
			err = json.NewDecoder(io.LimitReader(fh, 64<<10)).Decode(&c)
			fh.Close()
			if err == nil && c.Port > 0 && c.Port < 65536 {
				return c, true
			}
		}
	}
	cmd, err := os.ReadFile(p.proc(f + "/cmdline"))
	if err != nil {
		return jupyterConn{}, false
	}
	c := jupyterConn{Port: int(defaultPort(KindJupyter, cmd)), BaseURL: "/", Token: env["JUPYTER_TOKEN"]}
	for _, a := range strings.Split(string(cmd), "\x00") {
		for _, key := range []string{"--ServerApp.token=", "--NotebookApp.token=", "--IdentityProvider.token=", "--token="} {
			if v, ok := strings.CutPrefix(a, key); ok {
				c.Token = strings.Trim(v, `"'`)
			}
		}
		for _, key := range []string{"--ServerApp.base_url=", "--NotebookApp.base_url="} {
			if v, ok := strings.CutPrefix(a, key); ok {
				c.BaseURL = strings.Trim(v, `"'`)
			}
		}
		if a == "--certfile" || strings.HasPrefix(a, "--certfile=") || strings.Contains(a, ".certfile=") {
			c.Secure = true
		}
	}
	return c, true
}

// jupyterAPI asks the server pid for its activity: GET api/kernels (each
// kernel's execution_state and last_activity), api/terminals and
// api/status (started) on 127.0.0.1.
func (p *Presence) jupyterAPI(pid int, now time.Time) (time.Time, bool) {
	c, ok := p.jupyterConnOf(pid)
	if !ok || c.Secure || c.Port <= 0 {
		return time.Time{}, false
	}
	base := "/" + strings.Trim(c.BaseURL, "/")
	if base != "/" {
		base += "/"
	}
	if p.HTTP == nil {
		// Made once, with no proxy and no kept-alive connection: a look
		// once per heartbeat leaves nothing open between looks.
		p.HTTP = &http.Client{Timeout: jupyterTimeout, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	}
	client := p.HTTP
	ctx, cancel := context.WithTimeout(context.Background(), jupyterTimeout)
	defer cancel()
	get := func(path string, v any) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%sapi/%s", c.Port, base, path), nil)
		if err != nil {
			return err
		}
		if c.Token != "" {
			req.Header.Set("Authorization", "token "+c.Token)
		}
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("agent: jupyter api/%s: %s", path, res.Status)
		}
		return json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(v)
	}
	var kernels []struct {
		State        string    `json:"execution_state"`
		LastActivity time.Time `json:"last_activity"`
	}
	if err := get("kernels", &kernels); err != nil {
		return time.Time{}, false
	}
	var latest time.Time
	for _, k := range kernels {
		if k.State == "busy" {
			return now, true
		}
		if k.LastActivity.After(latest) {
			latest = k.LastActivity
		}
	}
	var terms []struct {
		LastActivity time.Time `json:"last_activity"`
	}
	if get("terminals", &terms) == nil {
		for _, t := range terms {
			if t.LastActivity.After(latest) {
				latest = t.LastActivity
			}
		}
	}
	if latest.IsZero() {
		var st struct {
			Started time.Time `json:"started"`
		}
		if get("status", &st) != nil || st.Started.IsZero() {
			return time.Time{}, false
		}
		latest = st.Started
	}
	if latest.After(now) {
		latest = now
	}
	return latest, true
}
