package command

import (
	"strconv"
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
	if err := p.split(toks, []string{"name", "action", "after", "wait_for", "idle_people"}, false, "after", "之后"); err != nil {
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
	n, err := p.oneRental()
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
	if v, ok := p.kv["idle_people"]; ok {
		switch d, ok := parseDur(v); {
		case v == "none" || v == "off" || v == "无" || v == "不限":
			a.IdlePeople = ledger.IdlePeopleNever
		case !ok:
			return nil, p.err("bad_dur", quote(v))
		case d < ledger.MinIdlePeople || d > ledger.MaxIdlePeople:
			return nil, p.err("dur_range", "idle_people", quote(v), durBoundsText(ledger.MinIdlePeople, ledger.MaxIdlePeople))
		default:
			a.IdlePeople = d
		}
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

// --- /agent, /adopt ----------------------------------------------------------

// agentRevokeWords are the words of /agent revoke.
var agentRevokeWords = map[string]bool{"revoke": true, "作废": true, "撤销": true}

// agent reads /agent NAME (a rental's own token), /agent alone (an
// enrolment token) and /agent revoke (revoke the enrolment tokens). A
// rental called "revoke" is reached with /agent name=revoke.
func (p *parser) agent(toks []string) (Command, error) {
	if err := p.split(toks, []string{"name"}, false); err != nil {
		return nil, err
	}
	if _, named := p.kv["name"]; !named {
		switch {
		case len(p.words) == 0:
			return AgentEnrolCmd{}, nil
		case agentRevokeWords[strings.ToLower(p.words[0])]:
			if len(p.words) > 1 {
				return nil, p.err("unexpected", quote(p.words[1]), "agent revoke")
			}
			return AgentRevokeCmd{}, nil
		}
	}
	n, err := p.oneRental()
	if err != nil {
		return nil, err
	}
	return AgentCmd{Name: n}, nil
}

// adopt reads /adopt ID [PRICE]: the instance's number from its card, and
// a price written as /rent takes one (1.88/h, $0.85, ¥1.2/小时; per hour
// when no unit is given).
func (p *parser) adopt(toks []string) (Command, error) {
	if err := p.split(toks, []string{"id", "price"}, false); err != nil {
		return nil, err
	}
	var idSrc, priceSrc string
	for _, w := range p.words {
		if idSrc == "" && isInstanceID(w) {
			idSrc = w
			continue
		}
		if err := p.setOnce("price", &priceSrc, w); err != nil {
			return nil, err
		}
	}
	if err := p.fromKV("id", &idSrc); err != nil {
		return nil, err
	}
	if err := p.fromKV("price", &priceSrc); err != nil {
		return nil, err
	}
	if idSrc == "" {
		return nil, p.err("missing_instance_id")
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(idSrc, "#"), 10, 64)
	if err != nil || id < 1 {
		return nil, p.err("bad_instance_id", quote(idSrc))
	}
	c := AdoptCmd{ID: id}
	if priceSrc != "" {
		ps, ok := parseComputePrice(priceSrc)
		if !ok {
			return nil, p.err("bad_price", quote(priceSrc))
		}
		if ps.Amount.Sign() < 0 {
			return nil, p.err("price_negative", quote(priceSrc))
		}
		c.Price = &ps
	}
	return c, nil
}

// isInstanceID reports whether w is shaped like an instance's number
// ("7", "#7"), not like a price ("0.85", "7/h", "$7").
func isInstanceID(w string) bool {
	w = strings.TrimPrefix(w, "#")
	if w == "" {
		return false
	}
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
