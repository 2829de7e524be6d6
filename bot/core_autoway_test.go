package bot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// wayConns is testConns that says how automatic actions would go
// (bot.AutoWays), as connsync.Syncer does.
type wayConns struct {
	*testConns
	way ledger.AutoWay
}

func (c *wayConns) AutoWay(context.Context, *ledger.Rental, ledger.AutoAction) ledger.AutoWay {
	return c.way
}

var _ bot.AutoWays = (*wayConns)(nil)

// TestCore_AutoreleaseSaysHow: on a rental live on a connected platform,
// /autorelease and /why say what will really happen: a terminate through
// the API for a corroborated agent, or a question first and why; never
// "its agent runs its release command".
func TestCore_AutoreleaseSaysHow(t *testing.T) {
	db := openStore(t)
	conns := &wayConns{testConns: newTestConns(t, db)}
	e := newEnv(t, bot.Config{Store: db, AllowedUsers: []int64{alice}, Connections: conns, AutoPolicies: db})
	contains(t, e.say(alice, "/rent box1 runpod a100 0.79/h"), "box1")

	conns.way = ledger.AutoWay{Kind: ledger.WayAsk, Why: ledger.CorroborateNoInstanceID, Platform: "runpod", PlatformID: "pod-1"}
	got := e.say(alice, "/autorelease box1 release after 1m")
	contains(t, got, "<b>release</b>", "asks you first", "has not shown it runs on RunPod&#39;s instance pod-1 (no instance ID in its reports)")
	if strings.Contains(got, "release command") {
		t.Errorf("the reply promises the agent's release command: %q", got)
	}
	contains(t, e.say(alice, "/why box1"), "asks you first", "no instance ID in its reports")

	conns.way = ledger.AutoWay{Kind: ledger.WayAPITerminate, Platform: "runpod", PlatformID: "pod-1"}
	contains(t, e.say(alice, "/autorelease box1 release after 1m"), "terminates RunPod&#39;s instance pod-1 through RunPod&#39;s API")

	conns.way = ledger.AutoWay{Kind: ledger.WayAsk, Why: ledger.WayWhyKeptOff, Platform: "runpod", PlatformID: "pod-1",
		Said: ledger.HostFacts{GPU: "RTX 4090"}, Listed: ledger.HostFacts{GPU: "A100"}}
	e.say(alice, "/lang zh")
	contains(t, e.say(alice, "/autorelease box1 stop after 1m"), "先询问你", "代理报告 RTX 4090，RunPod 显示 A100")
}
