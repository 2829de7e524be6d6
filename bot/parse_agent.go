package bot

import (
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// --- /autorelease ------------------------------------------------------------

var actionWords = map[string]ledger.AutoAction{
	"off": ledger.AutoOff, "none": ledger.AutoOff, "关闭": ledger.AutoOff, "关": ledger.AutoOff, "不": ledger.AutoOff,
	"notify": ledger.AutoNotify, "warn": ledger.AutoNotify, "提醒": ledger.AutoNotify, "通知": ledger.AutoNotify,
	"stop": ledger.AutoStop, "关机": ledger.AutoStop, "停止": ledger.AutoStop, "停机": ledger.AutoStop,
	"release": ledger.AutoRelease, "释放": ledger.AutoRelease,
}

func (p *parser) autoRelease(toks []string) (Command, error) {
	if err := p.split(toks, []string{"name", "action", "after", "wait_for"}, false, "after", "之后"); err != nil {
		return nil, err
	}
	var (
		a      AutoReleaseCmd
		actSrc string
		durSrc string
		rest   []string
	)
	if v, ok := p.kv["之后"]; ok {
		p.kv["after"] = v
	}
	for _, w := range p.words {
		if _, ok := actionWords[strings.ToLower(w)]; ok && actSrc == "" {
			actSrc = w
			continue
		}
		if _, ok := parseDur(w); ok && durSrc == "" {
			durSrc = w
			continue
		}
		rest = append(rest, w)
	}
	if err := p.fromKV("action", &actSrc); err != nil {
		return nil, err
	}
	if err := p.fromKV("after", &durSrc); err != nil {
		return nil, err
	}
	p.words = rest
	n, err := p.oneName()
	if err != nil {
		return nil, err
	}
	a.Name = n
	if actSrc == "" {
		return nil, p.err("missing_action")
	}
	act, ok := actionWords[strings.ToLower(actSrc)]
	if !ok {
		return nil, p.err("bad_action", quote(actSrc))
	}
	a.Action = act
	if durSrc != "" {
		d, ok := parseDur(durSrc)
		if !ok {
			return nil, p.err("bad_dur", quote(durSrc))
		}
		if d < ledger.MinAfter || d > ledger.MaxAfter {
			return nil, p.err("dur_range", "after", quote(durSrc), durBoundsText(ledger.MinAfter, ledger.MaxAfter))
		}
		a.After = d
	}
	if v, ok := p.kv["wait_for"]; ok {
		w, err := parseWaitFor(v)
		if err != nil {
			return nil, p.err("bad_wait_for", quote(v))
		}
		a.WaitFor = w
	}
	return a, nil
}

// waitForWords are the Chinese values of wait_for=.
var waitForWords = map[string]string{"无": "none", "不等": "none", "没有": "none", "全部": "all", "所有": "all"}

// parseWaitFor reads wait_for=: none, all, or kinds joined by commas
// (ssh, jupyter, vscode), or the Chinese 无 and 全部.
func parseWaitFor(v string) (ledger.WaitFor, error) {
	if w, ok := waitForWords[v]; ok {
		v = w
	}
	return ledger.ParseWaitFor(v)
}
