package view_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// TestDecisionCatalog: every decision text has English and Chinese with
// the same arguments, and every reason AutoDecide can give is in it.
func TestDecisionCatalog(t *testing.T) {
	c := view.DecisionCatalog()
	for _, err := range c.Check() {
		t.Error(err)
	}
	for _, k := range ledger.AutoKeys() {
		if _, ok := c[k]; !ok {
			t.Errorf("AutoDecide's %s has no text", k)
		}
	}
}

// TestDecisionText_AutoDecide: AutoDecide's reasons and evidence read in
// English as the log always said them, with clock times in the reader's
// zone when read and durations as the bot writes them; in Chinese they
// carry no English words but the names and settings.
func TestDecisionText_AutoDecide(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	cst := time.FixedZone("CST", 8*3600)
	running := &ledger.Rental{Name: "box1", Events: []ledger.Event{{Kind: ledger.EventStart, At: now.Add(-5 * time.Hour)}}}
	base := func() ledger.AutoInput {
		return ledger.AutoInput{Now: now, Rental: running, Policy: ledger.AutoPolicy{Action: ledger.AutoStop, After: 30 * time.Minute},
			Agent:    &ledger.AgentState{LastSeen: now.Add(-20 * time.Second), Verdict: ledger.VerdictIdle, IdleSince: now.Add(-90 * time.Minute)},
			WarnedAt: now.Add(-40 * time.Minute), FreshWithin: 2 * time.Minute}
	}
	tests := []struct {
		name   string
		mut    func(*ledger.AutoInput)
		en, zh string
	}{
		{"Evidence", nil, "idle 1h30m, warned 40m ago, heartbeat 20s ago, no job, nobody reported connected, policy stop after 30m",
			"空闲 1小时30分，40分钟前已提醒，心跳在 20秒前，没有任务，没有人连接，策略：30分钟 后关机"},
		{"Grace", func(in *ledger.AutoInput) { in.WarnedAt = now.Add(-29 * time.Minute) },
			"grace period: warned 19:31, acting not before 20:01", "宽限期：19:31 已提醒，20:01 之前不会操作"},
		{"Snoozed", func(in *ledger.AutoInput) { in.SnoozeUntil = now.Add(time.Minute) }, "snoozed until 20:01", "已推迟到 20:01"},
		{"Stale", func(in *ledger.AutoInput) { in.Agent.LastSeen = now.Add(-3 * time.Minute) },
			"no fresh heartbeat (last 3m ago)", "没有最新心跳（上一次在 3分钟前）"},
		{"PeopleHeld", func(in *ledger.AutoInput) {
			in.Agent.Sessions = []ledger.Session{{Kind: ledger.SessionSSH, Client: "1.2.3.4", User: "root"}, {Kind: ledger.SessionJupyter, Client: "local"}}
		}, "someone is connected: 1 SSH session (root from 1.2.3.4), 1 Jupyter client (wait_for=ssh,jupyter,vscode; /autorelease box1 stop wait_for=none acts anyway)",
			"有人连接：1 个 SSH 会话（root 来自 1.2.3.4）、1 个 Jupyter 客户端（wait_for=ssh,jupyter,vscode；/autorelease box1 stop wait_for=none 则照常执行）"},
		{"PeopleNotHeld", func(in *ledger.AutoInput) {
			in.Agent.Sessions = []ledger.Session{{Kind: ledger.SessionSSH, Client: "1.2.3.4"}}
			in.Policy.WaitFor = ledger.WaitNone
		}, "1 SSH session (from 1.2.3.4) connected, not waited for (wait_for=none)", "1 个 SSH 会话（来自 1.2.3.4） 已连接，不等待（wait_for=none）"},
		{"Refused", func(in *ledger.AutoInput) { in.PeopleRefusedAt = now.Add(-10 * time.Second) },
			"the agent found someone connected at 19:59:50; waiting for its next heartbeat", "代理在 19:59:50 发现有人连接"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			if tt.mut != nil {
				tt.mut(&in)
			}
			_, why := ledger.AutoDecide(in)
			en, ok := view.DecisionText(why, chat.LangEN, cst, now)
			if !ok || !strings.Contains(en, tt.en) {
				t.Errorf("English %q (%v), want %q", en, ok, tt.en)
			}
			zh, ok := view.DecisionText(why, chat.LangZH, cst, now)
			if !ok || !strings.Contains(zh, tt.zh) {
				t.Errorf("Chinese %q (%v), want %q", zh, ok, tt.zh)
			}
			// The reader's zone, not the writer's: UTC reads 12:01.
			if tt.name == "Snoozed" {
				if utc, _ := view.DecisionText(why, chat.LangEN, time.UTC, now); !strings.Contains(utc, "12:01") {
					t.Errorf("in UTC: %q", utc)
				}
			}
		})
	}
}

// TestDecisionText_Unknown: a message the catalog does not hold, or one
// with a nested message it does not hold, is not rendered: the stored
// English is shown instead.
func TestDecisionText_Unknown(t *testing.T) {
	for _, m := range []ledger.Message{{}, ledger.Msg("no_such_key"), ledger.Msg("e_both", ledger.Msg("no_such_key"), ledger.Msg(ledger.AutoKept))} {
		if got, ok := view.DecisionText(m, chat.LangZH, time.UTC, time.Time{}); ok {
			t.Errorf("%v rendered as %q", m, got)
		}
	}
}

// TestDecisionText_LedgerError: a refusal recorded in the log reads in the
// reader's language, from the ledger errors' catalog; an error without a
// key shows its text.
func TestDecisionText_LedgerError(t *testing.T) {
	m := view.ErrorEvidence(ledger.Errorc(ledger.ENOTFOUND, "no_agent_reported", "box1"))
	if got, ok := view.DecisionText(m, chat.LangZH, time.UTC, time.Time{}); !ok || got != "box1 没有代理上报：请在平台上释放，然后发送 /release box1" {
		t.Errorf("zh: %q %v", got, ok)
	}
	if got, ok := view.DecisionText(m, chat.LangEN, time.UTC, time.Time{}); !ok || !strings.HasPrefix(got, "no agent has reported for box1") {
		t.Errorf("en: %q %v", got, ok)
	}
	m = view.ErrorEvidence(ledger.Errorf(ledger.EINVALID, "unknown order action %q", "x"))
	if got, ok := view.DecisionText(m, chat.LangZH, time.UTC, time.Time{}); !ok || got != `unknown order action "x"` {
		t.Errorf("unkeyed: %q %v", got, ok)
	}
	if _, ok := view.DecisionText(ledger.Msg(view.LedgerErrorKey, "no_such_key"), chat.LangZH, time.UTC, time.Time{}); ok {
		t.Error("an unknown ledger key was rendered")
	}
}
