package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// instance is an instance an agent announces in a test.
type instance struct {
	platform, id, host string
	gpu                string // NVML's name
	gpus               int
	boot               time.Time
}

// enrolToken issues an enrolment token for user 1.
func (e *env) enrolToken() string {
	e.t.Helper()
	tok, _, err := e.hub.Enrolment().Issue(context.Background(), 1)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// announce posts an enrolment heartbeat of in with tok and returns the
// hub's answer, after the listener heard what it causes.
func (e *env) announce(tok string, in instance) wire.EnrolmentAnswer {
	e.t.Helper()
	e.seq++
	now := e.clk.Now()
	var gpus []wire.GPUFact
	for i := range in.gpus {
		gpus = append(gpus, wire.GPUFact{Index: i, Name: in.gpu})
	}
	h := wire.HeartbeatRequest{Version: wire.Version, Seq: e.seq, BootID: "boot-" + in.id + in.host, Verdict: wire.VerdictBusy, Samples: 6, BusySamples: 6,
		WindowStart: now.Add(-30 * time.Second), WindowEnd: now, SentAt: now,
		Host:     wire.HostFacts{Hostname: in.host, GPUSource: "simulate", GPUs: gpus},
		Instance: &wire.InstanceFacts{Platform: in.platform, PlatformSource: "env test", ID: in.id, BootedAt: in.boot}}
	resp := e.sendWith(tok, h)
	e.s.DrainEvents(context.Background())
	if resp.Enrolment == nil {
		e.t.Fatalf("enrolment heartbeat answered without an enrolment answer: %+v", resp)
	}
	return *resp.Enrolment
}

// sendWith posts h with token tok and fails the test unless it is accepted.
func (e *env) sendWith(tok string, h wire.HeartbeatRequest) wire.HeartbeatResponse {
	e.t.Helper()
	b, _ := json.Marshal(h)
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+wire.PathHeartbeat, bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		e.t.Fatalf("heartbeat: %d %s", res.StatusCode, body)
	}
	var resp wire.HeartbeatResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// pressAs presses a button with payload as user, with the update key
// given ("" for a new one), and returns the toast.
func (e *env) pressAs(user int64, key, action, payload string, msgID int) string {
	e.t.Helper()
	if key == "" {
		e.key++
		key = "tg:update:p" + strings.Repeat("y", e.key)
	}
	p := chat.ButtonPress{Update: chat.Update{Key: key, Kind: chat.KindCallback, UserID: user, ChatID: user, MessageID: msgID, CallbackID: "cb"},
		Action: action, Payload: payload, Now: e.clk.Now()}
	dispatch(e.t, e.db, e.btn, e.chat, p)
	toasts := e.chat.Toasts()
	return toasts[len(toasts)-1]
}

// buttonData returns the data of the button whose label starts with
// label on m (signed "ACTION:PAYLOAD:MAC").
func buttonData(t *testing.T, m chat.Outgoing, label string) (action, payload string) {
	t.Helper()
	for _, row := range m.Buttons {
		for _, b := range row {
			if strings.HasPrefix(b.Text, label) {
				a, rest, _ := strings.Cut(b.Data, ":")
				p, _, _ := strings.Cut(rest, ":")
				return a, p
			}
		}
	}
	t.Fatalf("no button %q on %q (%+v)", label, m.Text, m.Buttons)
	return "", ""
}

func buttonLabels(m chat.Outgoing) []string {
	var out []string
	for _, row := range m.Buttons {
		for _, b := range row {
			out = append(out, b.Text)
		}
	}
	return out
}

// onlyNew returns the one new message since the last Take, failing
// otherwise.
func (e *env) onlyNew() chat.Outgoing {
	e.t.Helper()
	var msgs []chat.Outgoing
	for _, s := range e.chat.Take() {
		if !s.IsAnswer {
			msgs = append(msgs, s.Out)
		}
	}
	if len(msgs) != 1 {
		e.t.Fatalf("want one message, got %d: %+v", len(msgs), msgs)
	}
	return msgs[0]
}

func (e *env) rentalNamed(name string) *ledger.Rental {
	e.t.Helper()
	b, err := e.db.Book(context.Background(), 1)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, r := range b.Rentals {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func TestInstanceCard_LogAtOffer(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.enrolToken()
	e.chat.Take()
	e.clk.Add(time.Hour)             // the user exists since t0
	boot := t0.Add(52 * time.Minute) // 10:52 in Shanghai
	ans := e.announce(tok, instance{platform: "autodl", id: "ABC123xyz", host: "autodl-container-1", gpu: "NVIDIA GeForce RTX 4090", gpus: 2, boot: boot})
	if ans.State != wire.EnrolWaiting {
		t.Fatalf("answer %+v, want waiting", ans)
	}
	card := e.onlyNew()
	for _, want := range []string{"New instance on AutoDL (ID ABC123xyz): 2× RTX 4090, host <code>autodl-container-1</code>, up since 10:52."} {
		if !strings.Contains(card.Text, want) {
			t.Errorf("card %q lacks %q", card.Text, want)
		}
	}
	if strings.Contains(card.Text, "own claim") {
		t.Errorf("a believable boot is shown as a claim: %q", card.Text)
	}
	// The offer is box1's price per GPU (¥1.88/h) times the 2 GPUs.
	if l := buttonLabels(card); len(l) != 3 || l[0] != "Log at ¥3.76/h" || l[1] != "Other price" || l[2] != "Not mine" {
		t.Fatalf("buttons %q", l)
	}
	act, payload := buttonData(t, card, "Log at")
	if act != scheduler.ActAdopt {
		t.Fatalf("Log button action %q", act)
	}
	e.clk.Add(3 * time.Minute)
	key := "tg:update:log1"
	toast := e.pressAs(1, key, act, payload, 1)
	b, _ := e.db.Book(context.Background(), 1)
	var got *ledger.Rental
	for _, r := range b.Rentals {
		if r.Name != "box1" {
			got = r
		}
	}
	if got == nil {
		t.Fatalf("no rental logged; toast %q", toast)
	}
	t.Cleanup(func() { checkDecisions(t, e.db, got.ID) })
	if !got.StartedAt().Equal(boot) || got.Platform != "autodl" || got.GPUCount != 2 || !got.Priced ||
		got.Price.Amount.String() != "3.76" || got.Currency != ledger.CNY {
		t.Errorf("rental %+v: want autodl 2 GPUs from %v at ¥3.76/h", got, boot)
	}
	if toast != "Logged as "+got.Name {
		t.Errorf("toast %q", toast)
	}
	edit := e.onlyNew()
	if edit.EditMessageID != 1 || !strings.Contains(edit.Text, "Logged as <b>"+got.Name+"</b> from 10:52 at ¥3.76/h. /undo takes it back.") || len(edit.Buttons) != 0 {
		t.Errorf("card edited to %+v", edit)
	}
	// A redelivered press logs nothing more and says nothing new.
	e.pressAs(1, key, act, payload, 1)
	b2, _ := e.db.Book(context.Background(), 1)
	if len(b2.Rentals) != len(b.Rentals) {
		t.Errorf("a redelivered press logged again: %d rentals, then %d", len(b.Rentals), len(b2.Rentals))
	}
	// A second press (a new update) says as what it is logged.
	if toast := e.pressAs(1, "", act, payload, 1); toast != "Already logged as "+got.Name+"." {
		t.Errorf("second press: %q", toast)
	}
	// The agent's next enrolment heartbeat gets the rental's own token.
	ans = e.announce(tok, instance{platform: "autodl", id: "ABC123xyz", host: "autodl-container-1", gpu: "NVIDIA GeForce RTX 4090", gpus: 2, boot: boot})
	if ans.State != wire.EnrolBound || ans.Rental != got.Name || ans.Token == "" {
		t.Errorf("answer after Log: %+v", ans)
	}
}

func TestInstanceCard_NoOfferChinese(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	u, _ := e.db.User(ctx, 1)
	u.Lang = "zh"
	if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: t0}, u); err != nil {
		t.Fatal(err)
	}
	tok := e.enrolToken()
	e.chat.Take()
	e.announce(tok, instance{platform: "runpod", id: "pod77", host: "r1", gpu: "NVIDIA A40", gpus: 1, boot: t0.Add(-time.Hour)})
	card := e.onlyNew()
	if !strings.Contains(card.Text, "RunPod 上的新实例（ID pod77）：1× A40，主机 <code>r1</code>，10:00 起运行。 <i>启动时间是实例自己报告的") {
		t.Errorf("card %q", card.Text)
	}
	if l := buttonLabels(card); len(l) != 3 || l[0] != "先记账，稍后定价" || l[1] != "其他价格" || l[2] != "不是我的" {
		t.Fatalf("buttons %q", l)
	}
	_, id := buttonData(t, card, "其他价格")
	if toast := e.pressAs(1, "", scheduler.ActOtherPrice, id, 1); !strings.Contains(toast, "/adopt "+id+" 0.85") {
		t.Errorf("Other price toast %q", toast)
	}
	if m := e.onlyNew(); !strings.Contains(m.Text, "<code>/adopt "+id+" 价格</code>") {
		t.Errorf("Other price message %q", m.Text)
	}
	e.pressAs(1, "", scheduler.ActNotMine, id, 1)
	edit := e.onlyNew()
	if edit.EditMessageID != 1 || !strings.Contains(edit.Text, "不是你的：已忽略 RunPod（ID pod77）") {
		t.Errorf("Not mine edit %+v", edit)
	}
	if ans := e.announce(tok, instance{platform: "runpod", id: "pod77", host: "r1", gpu: "NVIDIA A40", gpus: 1, boot: t0.Add(-time.Hour)}); ans.State != wire.EnrolIgnored {
		t.Errorf("after Not mine the agent is answered %+v", ans)
	}
	if msgs := e.chat.Take(); len(msgs) != 0 {
		t.Errorf("an ignored instance was shown again: %+v", msgs)
	}
}

func TestInstanceCard_UnknownPlatform(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.enrolToken()
	e.chat.Take()
	if ans := e.announce(tok, instance{host: "lab-gpu-7", gpus: 0}); ans.State != wire.EnrolWaiting {
		t.Fatalf("answer %+v", ans)
	}
	// No boot time: the rental would start at the first announcement, 10:00.
	card := e.onlyNew()
	if !strings.Contains(card.Text, "New instance (platform unknown): no GPU seen, host <code>lab-gpu-7</code>, up since 10:00. <i>The boot time is the instance's own claim") {
		t.Errorf("card %q", card.Text)
	}
	// No profile, so no currency to log it in without a price: the card
	// asks for /adopt with a price and offers no Log button.
	if l := buttonLabels(card); len(l) != 2 || l[0] != "Other price" || l[1] != "Not mine" {
		t.Errorf("buttons %q", l)
	}
	if !strings.Contains(card.Text, "send <code>/adopt ") || !strings.Contains(card.Text, "$0.85") {
		t.Errorf("card does not say how to log it with a price: %q", card.Text)
	}
	// A Log press anyway (a card of an older server) logs nothing and says why.
	_, id := buttonData(t, card, "Other price")
	if toast := e.pressAs(1, "", scheduler.ActAdopt, id, 1); !strings.Contains(toast, "/adopt "+id+" PRICE") {
		t.Errorf("toast %q", toast)
	}
	if b, err := e.db.Book(context.Background(), 1); err != nil || len(b.Rentals) != 1 || b.Rentals[0].Name != "box1" {
		t.Errorf("rentals after the press (the test's box1 only, want): %v, %v", b, err)
	}
}

func TestInstanceCard_LogUnpriced(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.enrolToken()
	e.chat.Take()
	e.clk.Add(time.Hour)
	e.announce(tok, instance{platform: "vast", id: "123", host: "v", gpu: "NVIDIA H100 80GB HBM3", gpus: 8, boot: t0.Add(30 * time.Minute)})
	card := e.onlyNew()
	_, id := buttonData(t, card, "Log, price later")
	if toast := e.pressAs(1, "", scheduler.ActAdopt, id, 1); !strings.HasPrefix(toast, "Logged as") {
		t.Fatalf("toast %q", toast)
	}
	edit := e.onlyNew()
	if !strings.Contains(edit.Text, "from 10:30, without a price: set it with <code>/price ") {
		t.Errorf("card edited to %q", edit.Text)
	}
}

func TestInstanceCards_CapAndMerged(t *testing.T) {
	e := newEnv(t, nil)
	tok := e.enrolToken()
	e.chat.Take()
	var cards []chat.Outgoing
	for i := range 3 {
		e.announce(tok, instance{platform: "vast", id: fmt.Sprint("c", i), host: fmt.Sprint("v", i), gpu: "NVIDIA GeForce RTX 3090", gpus: 1, boot: t0.Add(-time.Minute)})
		cards = append(cards, e.onlyNew())
	}
	e.announce(tok, instance{platform: "vast", id: "c3", host: "v3", gpu: "NVIDIA GeForce RTX 3090", gpus: 1, boot: t0.Add(-time.Minute)})
	merged := e.onlyNew()
	if merged.EditMessageID != 0 || !strings.Contains(merged.Text, "More new instances (1)</b> announced") || !strings.Contains(merged.Text, "v3 · Vast.ai (ID c3) · 1× RTX 3090") ||
		!strings.Contains(merged.Text, "/agent revoke if these are not yours") {
		t.Fatalf("merged card %+v", merged)
	}
	if l := buttonLabels(merged); len(l) != 1 || l[0] != "Revoke enrolment tokens" {
		t.Errorf("merged buttons %q", l)
	}
	e.announce(tok, instance{platform: "vast", id: "c4", host: "v4", gpu: "NVIDIA GeForce RTX 3090", gpus: 1, boot: t0.Add(-time.Minute)})
	edit := e.onlyNew()
	if edit.EditMessageID != 4 || !strings.Contains(edit.Text, "More new instances (2)") {
		t.Fatalf("merged card not edited in place: %+v", edit)
	}
	// Answering a card gives the oldest waiting instance (c3) its card,
	// and the merged card counts one fewer.
	_, id := buttonData(t, cards[0], "Not mine")
	e.pressAs(1, "", scheduler.ActNotMine, id, 1)
	var got []chat.Outgoing
	for _, s := range e.chat.Take() {
		if !s.IsAnswer {
			got = append(got, s.Out)
		}
	}
	if len(got) != 3 || got[0].EditMessageID != 1 || !strings.Contains(got[1].Text, "Vast.ai (ID c3)") || got[1].EditMessageID != 0 ||
		got[2].EditMessageID != 4 || !strings.Contains(got[2].Text, "More new instances (1)") || !strings.Contains(got[2].Text, "c4") {
		t.Fatalf("after an answer: %+v", got)
	}
	// An hour later the token may bring cards again.
	e.clk.Add(61 * time.Minute)
	e.announce(tok, instance{platform: "vast", id: "c5", host: "v5", gpu: "NVIDIA GeForce RTX 3090", gpus: 1, boot: t0})
	if m := e.onlyNew(); !strings.HasPrefix(m.Text, "New instance on Vast.ai (ID c5)") {
		t.Errorf("an hour later: %q", m.Text)
	}
	// Revoke from the merged card.
	if toast := e.pressAs(1, "", scheduler.ActRevokeEnrol, "0", 4); toast != "1 enrolment tokens revoked." {
		t.Errorf("revoke toast %q", toast)
	}
	if m := e.onlyNew(); m.EditMessageID != 4 || !strings.Contains(m.Text, "Enrolment tokens revoked: 1") {
		t.Errorf("merged card after revoke %+v", m)
	}
	if toast := e.pressAs(1, "", scheduler.ActRevokeEnrol, "0", 0); toast != "No enrolment token to revoke." {
		t.Errorf("second revoke %q", toast)
	}
}

func TestInstanceCard_OtherUserRefused(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := e.db.EnsureUser(context.Background(), ledger.User{ID: 2, Lang: "en", TZ: "UTC"}); err != nil {
		t.Fatal(err)
	}
	tok := e.enrolToken()
	e.chat.Take()
	e.announce(tok, instance{platform: "runpod", id: "p1", host: "h", gpu: "NVIDIA A40", gpus: 1, boot: t0})
	card := e.onlyNew()
	_, id := buttonData(t, card, "Log")
	if toast := e.pressAs(2, "", scheduler.ActAdopt, id, 1); toast != "This instance is not known (any more)." {
		t.Errorf("another user's press: %q", toast)
	}
	if r := e.rentalNamed(ledger.InstanceRentalName(ledger.Instance{Platform: "runpod", PlatformID: "p1", Hostname: "h"})); r != nil {
		t.Errorf("another user's press logged %+v", r)
	}
	b, _ := e.db.Book(context.Background(), 2)
	if len(b.Rentals) != 0 {
		t.Errorf("user 2 has rentals: %+v", b.Rentals)
	}
}

// returned logs an announced instance, has its agent report with the
// rental's own token, then brings it back with the enrolment token (a
// new container): it returns the returned card and the rental.
func (e *env) returned() (tok string, in instance, card chat.Outgoing, r *ledger.Rental) {
	e.t.Helper()
	tok = e.enrolToken()
	e.chat.Take()
	in = instance{platform: "runpod", id: "podR", host: "rp", gpu: "NVIDIA A40", gpus: 1, boot: t0.Add(-time.Minute)}
	e.announce(tok, in)
	_, id := buttonData(e.t, e.onlyNew(), "Log")
	e.pressAs(1, "", scheduler.ActAdopt, id, 1)
	e.chat.Take()
	ans := e.announce(tok, in)
	if ans.State != wire.EnrolBound {
		e.t.Fatalf("hand-over %+v", ans)
	}
	// Its agent reports with the rental's own token...
	e.clk.Add(time.Minute)
	now := e.clk.Now()
	e.seq++
	e.sendWith(ans.Token, wire.HeartbeatRequest{Version: wire.Version, Seq: e.seq, BootID: "x", Verdict: wire.VerdictBusy, Samples: 6, BusySamples: 6,
		WindowStart: now.Add(-30 * time.Second), WindowEnd: now, SentAt: now,
		Host:     wire.HostFacts{Hostname: "rp", GPUSource: "simulate", GPUs: []wire.GPUFact{{Name: "NVIDIA A40"}}},
		Instance: &wire.InstanceFacts{Platform: "runpod", ID: "podR", BootedAt: in.boot}})
	e.s.DrainEvents(context.Background())
	e.chat.Take()
	// ...then a new container of it comes with the enrolment token.
	e.clk.Add(time.Minute)
	in.boot = e.clk.Now().Add(-10 * time.Second)
	if ans := e.announce(tok, in); ans.State != wire.EnrolWaiting {
		e.t.Fatalf("returned answer %+v", ans)
	}
	card = e.onlyNew()
	r = e.rentalNamed(ans.Rental)
	if r == nil {
		e.t.Fatalf("no rental %q", ans.Rental)
	}
	e.t.Cleanup(func() { checkDecisions(e.t, e.db, r.ID) })
	return tok, in, card, r
}

func TestInstanceReturned_Reconnect(t *testing.T) {
	e := newEnv(t, nil)
	tok, in, card, r := e.returned()
	if !strings.Contains(card.Text, "<b>"+r.Name+"</b> (ID podR) reports again without its own token (a new container, or a copy of it?).") {
		t.Errorf("returned card %q", card.Text)
	}
	if l := buttonLabels(card); len(l) != 2 || l[0] != "Reconnect it to "+r.Name || l[1] != "Not mine" {
		t.Errorf("buttons %q", l)
	}
	// Told once per boot.
	e.announce(tok, in)
	if m := e.chat.Take(); len(m) != 0 {
		t.Errorf("the same boot told again: %+v", m)
	}
	act, p := buttonData(t, card, "Reconnect")
	if toast := e.pressAs(1, "", act, p, e.msgID(card)); toast != "Reconnected to "+r.Name {
		t.Errorf("Reconnect toast %q", toast)
	}
	if m := e.onlyNew(); m.EditMessageID != e.msgID(card) || !strings.Contains(m.Text, "Reconnected: the instance gets <b>"+r.Name+"</b>'s new agent token") {
		t.Errorf("card after Reconnect %+v", m)
	}
	if ans := e.announce(tok, in); ans.State != wire.EnrolBound || ans.Token == "" || ans.Rental != r.Name {
		t.Errorf("after Reconnect: %+v", ans)
	}
}

func TestInstanceReturned_NotMine(t *testing.T) {
	e := newEnv(t, nil)
	tok, in, card, r := e.returned()
	act, p := buttonData(t, card, "Not mine")
	if toast := e.pressAs(1, "", act, p, e.msgID(card)); toast != "Not reconnected: "+r.Name+" stays as it is." {
		t.Errorf("Not mine toast %q", toast)
	}
	if m := e.onlyNew(); m.EditMessageID != e.msgID(card) || len(m.Buttons) != 0 || !strings.Contains(m.Text, "Not reconnected") {
		t.Errorf("card after Not mine %+v", m)
	}
	if got := e.reload(r); got.State() != ledger.Running {
		t.Errorf("the rental changed: %v", got.State())
	}
	if ans := e.announce(tok, in); ans.State != wire.EnrolWaiting || ans.Token != "" {
		t.Errorf("the copy got %+v", ans)
	}
}

// msgID is the ID the test sender gave the new message m (1, 2, 3...).
func (e *env) msgID(m chat.Outgoing) int {
	e.t.Helper()
	n := 0
	for _, x := range e.chat.Sent() {
		if x.EditMessageID != 0 {
			continue
		}
		n++
		if x.Text == m.Text && x.ChatID == m.ChatID {
			return n
		}
	}
	e.t.Fatalf("message %q was not sent", m.Text)
	return 0
}

// TestInstanceCard_AfterUndo: an undone Log or Not mine puts the instance
// back to pending; InstanceCard (what /undo asks for) is a fresh card like
// the first, whose buttons work as the first one's did.
func TestInstanceCard_AfterUndo(t *testing.T) {
	ctx := context.Background()
	for _, press := range []string{"Log at", "Not mine"} {
		t.Run(press, func(t *testing.T) {
			e := newEnv(t, nil)
			tok := e.enrolToken()
			e.chat.Take()
			in := instance{platform: "autodl", id: "ABC123xyz", host: "a1", gpu: "NVIDIA GeForce RTX 4090", gpus: 1, boot: t0.Add(-10 * time.Minute)}
			e.announce(tok, in)
			card := e.onlyNew()
			act, payload := buttonData(t, card, press)
			e.pressAs(1, "", act, payload, 1)
			e.chat.Take()
			id, _ := strconv.ParseInt(payload, 10, 64)
			if m, ok, err := e.s.InstanceCard(ctx, 1, id); err != nil || ok {
				t.Fatalf("an answered instance: InstanceCard = %+v, %v, %v; want none", m, ok, err)
			}
			res, err := e.db.Undo(ctx, ledger.Action{UserID: 1, At: e.clk.Now()})
			if err != nil || res.Instance != id {
				t.Fatalf("Undo = %+v, %v", res, err)
			}
			again, ok, err := e.s.InstanceCard(ctx, 1, id)
			if err != nil || !ok {
				t.Fatalf("InstanceCard after the undo = %v, %v", ok, err)
			}
			if m := e.chat.Take(); len(m) != 0 {
				t.Errorf("InstanceCard sent %+v: the core sends the card", m)
			}
			if again.ChatID != 1 || again.EditMessageID != 0 || again.Text != card.Text || strings.Join(buttonLabels(again), "|") != strings.Join(buttonLabels(card), "|") {
				t.Fatalf("after the undo: %+v, want a fresh card like %+v", again, card)
			}
			act, payload = buttonData(t, again, "Log at")
			if toast := e.pressAs(1, "", act, payload, 2); !strings.HasPrefix(toast, "Logged as autodl-abc123") {
				t.Errorf("Log on the fresh card: %q", toast)
			}
			if m := e.onlyNew(); m.EditMessageID != 2 {
				t.Errorf("Log on the fresh card edited %+v, want message 2", m)
			}
			if got, _ := e.db.Instance(ctx, 1, id); got.State != ledger.InstanceBound {
				t.Errorf("instance after Log on the fresh card: %+v", got)
			}
		})
	}
}

// TestInstanceCard_Capped: an instance that never had a card of its own
// (it waited on the merged card, and /adopt logged it) is shown as a new
// announcement is: on the merged card while its token's cards of the hour
// are used up.
func TestInstanceCard_Capped(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, nil)
	tok := e.enrolToken()
	e.chat.Take()
	for i := range 4 {
		e.announce(tok, instance{platform: "vast", id: fmt.Sprint("c", i), host: fmt.Sprint("v", i), gpu: "NVIDIA GeForce RTX 3090", gpus: 1, boot: t0.Add(-time.Minute)})
	}
	e.chat.Take()
	var c3 ledger.Instance
	pending, _ := e.db.PendingInstances(ctx, 1)
	for _, p := range pending {
		if p.PlatformID == "c3" {
			c3 = p
		}
	}
	if c3.ID == 0 || c3.Carded {
		t.Fatalf("c3 %+v: want pending on the merged card", c3)
	}
	if _, err := e.hub.Enrolment().Adopt(ctx, ledger.Action{UserID: 1, At: e.clk.Now()}, c3.ID, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Undo(ctx, ledger.Action{UserID: 1, At: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.s.InstanceCard(ctx, 1, c3.ID); err != nil || ok {
		t.Fatalf("InstanceCard = %v, %v; want no card of its own", ok, err)
	}
	m := e.onlyNew()
	if m.EditMessageID != 4 || !strings.Contains(m.Text, "More new instances (1)") || !strings.Contains(m.Text, "Vast.ai (ID c3)") {
		t.Errorf("want the merged card (message 4) listing c3, got %+v", m)
	}
	if _, err := e.db.EnsureUser(ctx, ledger.User{ID: 2, Lang: "en", TZ: "UTC"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.s.InstanceCard(ctx, 2, c3.ID); err == nil || ok {
		t.Errorf("another user's InstanceCard of user 1's instance: %v, %v; want an error", ok, err)
	}
}

// TestInstanceCard_UpSinceOtherDay: a boot on another day than today (in
// the user's zone) carries its day on the card, as the other cards' times
// do; the Log reply says the same.
func TestInstanceCard_UpSinceOtherDay(t *testing.T) {
	for _, tt := range []struct {
		lang  string
		later time.Duration // the announcement, after t0 (10:00 in Shanghai), when the user was created
		want  string        // of a boot at 12:00 on t0's day
	}{
		{"en", 20 * time.Hour, "up since yesterday 12:00."},
		{"zh", 20 * time.Hour, "昨天 12:00 起运行。"},
		{"en", 4 * 24 * time.Hour, "up since Nov 2 12:00."},
		{"zh", 4 * 24 * time.Hour, "11月2日 12:00 起运行。"},
		{"en", 3 * time.Hour, "up since 12:00."},
	} {
		t.Run(tt.lang+" "+tt.later.String(), func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := context.Background()
			u, _ := e.db.User(ctx, 1)
			u.Lang = tt.lang
			if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: t0}, u); err != nil {
				t.Fatal(err)
			}
			tok := e.enrolToken()
			e.chat.Take()
			e.clk.Add(tt.later)
			e.announce(tok, instance{platform: "runpod", id: "pod1", host: "r1", gpu: "NVIDIA A40", gpus: 1, boot: t0.Add(2 * time.Hour)})
			card := e.onlyNew()
			if !strings.Contains(card.Text, tt.want) || strings.Contains(card.Text, "<i>") {
				t.Errorf("card %q lacks %q (or shows the boot as moved)", card.Text, tt.want)
			}
		})
	}
}
