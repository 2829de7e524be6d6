package telegram_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/chat"
)

// sleepRecorder records the transport's waits and returns at once.
type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleepRecorder) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// sender returns a transport used only as a Sender (Run is not needed).
func sender(t *testing.T, fake *tgfake.Server, edit func(*telegram.Config)) (*telegram.Transport, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cfg := fastConfig(fake, &recorder{}, newMemStore(), logs)
	if edit != nil {
		edit(&cfg)
	}
	tr, err := telegram.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), "LEAKME") {
			t.Errorf("the token is in the log:\n%s", logs.String())
		}
	})
	return tr, logs
}

func TestSend_HonoursRetryAfter(t *testing.T) {
	fake := tgfake.New(t, token)
	rec := &sleepRecorder{}
	tr, logs := sender(t, fake, func(c *telegram.Config) { c.Sleep = rec.Sleep })
	fake.FailMethod("sendMessage", 1, 429, 7)
	id, err := tr.Send(context.Background(), chat.Outgoing{ChatID: 5, Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if msgs := fake.Messages(5); len(msgs) != 1 || msgs[0].ID != id {
		t.Fatalf("messages = %+v, id %d", msgs, id)
	}
	found := false
	for _, d := range rec.recorded() {
		found = found || d == 7*time.Second
	}
	if !found || fake.Calls("sendMessage") != 2 {
		t.Errorf("waits %v, %d calls; want a 7s wait and one retry", rec.recorded(), fake.Calls("sendMessage"))
	}
	if !strings.Contains(logs.String(), "rate limit") {
		t.Error("rate limit not logged")
	}
}

func TestSend_RetryAfterRealClock(t *testing.T) {
	fake := tgfake.New(t, token)
	tr, _ := sender(t, fake, nil)
	fake.FailMethod("sendMessage", 1, 429, 1)
	start := time.Now()
	if _, err := tr.Send(context.Background(), chat.Outgoing{ChatID: 5, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("sent after %v, before retry_after's 1s", d)
	}
}

func TestSend_Retries(t *testing.T) {
	fake := tgfake.New(t, token)
	tr, _ := sender(t, fake, nil)
	ctx := context.Background()

	fake.FailMethod("sendMessage", 2, 502, 0)
	if _, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, Text: "after two 502s"}); err != nil {
		t.Errorf("two 5xx then success: %v", err)
	}
	fake.FailMethod("sendMessage", 3, 500, 0)
	if _, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, Text: "x"}); err == nil {
		t.Error("three 5xx: no error")
	}
	before := fake.Calls("sendMessage")
	fake.FailMethod("sendMessage", 1, 403, 0)
	if _, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, Text: "blocked"}); err == nil {
		t.Error("403: no error")
	}
	if n := fake.Calls("sendMessage") - before; n != 1 {
		t.Errorf("403 retried: %d calls", n)
	}
}

func TestSend_SplitsLongTextKeepingHTML(t *testing.T) {
	fake := tgfake.New(t, token)
	tr, _ := sender(t, fake, nil)
	var b strings.Builder
	b.WriteString("<b>Spend this month</b>\n<pre>")
	for i := range 400 {
		b.WriteString("box" + strconv.Itoa(i) + "  RTX 4090  ¥1.88/h  &lt;idle&gt;\n")
	}
	b.WriteString("</pre>")
	text := b.String()
	buttons := [][]chat.Button{{{Text: "CSV", Data: "export"}}}
	id, err := tr.Send(context.Background(), chat.Outgoing{ChatID: 9, Text: text, Buttons: buttons, Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	msgs := fake.Messages(9)
	if len(msgs) < 3 {
		t.Fatalf("%d messages", len(msgs))
	}
	var visible strings.Builder
	for i, m := range msgs {
		if m.ParseMode != "HTML" || !m.Silent {
			t.Errorf("part %d: parse mode %q, silent %v", i, m.ParseMode, m.Silent)
		}
		if (m.Buttons != nil) != (i == len(msgs)-1) {
			t.Errorf("part %d buttons %v; want them under the last part only", i, m.Buttons)
		}
		if !strings.Contains(m.Text, "<pre>") || !strings.Contains(m.Text, "</pre>") {
			t.Errorf("part %d lost the <pre> block: %.60q", i, m.Text)
		}
		v, _ := tgfake.ParseHTML(m.Text)
		visible.WriteString(v)
	}
	if want, _ := tgfake.ParseHTML(text); visible.String() != want {
		t.Error("visible text changed across the parts")
	}
	if id != msgs[len(msgs)-1].ID {
		t.Errorf("Send returned %d, want the last part's ID %d", id, msgs[len(msgs)-1].ID)
	}

	short := "<b>box1</b> started 10:00, ¥1.88/h &amp; <code>per-second</code>"
	if _, err := tr.Send(context.Background(), chat.Outgoing{ChatID: 10, Text: short}); err != nil {
		t.Fatal(err)
	}
	if got := fake.Messages(10)[0].Text; got != short {
		t.Errorf("HTML changed on the way: %q", got)
	}
}

func TestSend_BadHTMLFallsBackToPlain(t *testing.T) {
	fake := tgfake.New(t, token)
	tr, logs := sender(t, fake, nil)
	if _, err := tr.Send(context.Background(), chat.Outgoing{ChatID: 5, Text: "<div>1 &lt; 2</div>"}); err != nil {
		t.Fatal(err)
	}
	m := fake.Messages(5)
	if len(m) != 1 || m[0].Text != "1 < 2" || m[0].ParseMode != "" {
		t.Errorf("messages = %+v", m)
	}
	if !strings.Contains(logs.String(), "rejected the HTML") {
		t.Error("fallback not logged")
	}
}

func TestSend_Edit(t *testing.T) {
	fake := tgfake.New(t, token)
	tr, _ := sender(t, fake, nil)
	ctx := context.Background()
	card, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, Text: "idle 30m", Buttons: [][]chat.Button{{{Text: "Release", Data: "r"}}}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, EditMessageID: card, Text: "idle 45m", Buttons: [][]chat.Button{{{Text: "Release", Data: "r"}}}})
	if err != nil || id != card {
		t.Fatalf("edit: %d, %v", id, err)
	}
	id, err = tr.Send(ctx, chat.Outgoing{ChatID: 5, EditMessageID: card, Text: "idle 45m", Buttons: [][]chat.Button{{{Text: "Release", Data: "r"}}}})
	if err != nil || id != card {
		t.Errorf("unchanged edit: %d, %v; want success", id, err)
	}
	if _, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, EditMessageID: card, Text: "released"}); err != nil {
		t.Fatal(err)
	}
	m := fake.Messages(5)
	if len(m) != 1 || m[0].Text != "released" || m[0].Buttons != nil || strings.Join(m[0].History, "|") != "idle 30m|idle 45m" {
		t.Errorf("card = %+v", m)
	}
	id, err = tr.Send(ctx, chat.Outgoing{ChatID: 5, EditMessageID: 999, Text: "gone"})
	if err != nil || id == 999 || len(fake.Messages(5)) != 2 {
		t.Errorf("edit of a missing message: id %d, %v; want a new message", id, err)
	}
}

func TestSend_Files(t *testing.T) {
	fake := tgfake.New(t, token)
	tr, _ := sender(t, fake, nil)
	ctx := context.Background()
	csv := []byte("name,total\nbox1,3.29\n\x00\xfe binary tail")
	if _, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, Text: "<b>export</b>", Document: &chat.File{Name: "ledger.csv", Data: csv}}); err != nil {
		t.Fatal(err)
	}
	png := bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0, 1, 2}, 5000)
	if _, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, Text: "chart", Photo: &chat.File{Name: "chart.png", Data: png},
		Buttons: [][]chat.Button{{{Text: "Month", Data: "m"}}}}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("caption line\n", 100)
	id, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, Text: long, Document: &chat.File{Name: "big.json", Data: []byte("{}")}})
	if err != nil {
		t.Fatal(err)
	}
	m := fake.Messages(5)
	if len(m) != 4 {
		t.Fatalf("%d messages", len(m))
	}
	if m[0].Document == nil || !bytes.Equal(m[0].Document.Data, csv) || m[0].Document.Name != "ledger.csv" || m[0].Text != "<b>export</b>" {
		t.Errorf("document = %+v", m[0])
	}
	if m[1].Photo == nil || !bytes.Equal(m[1].Photo.Data, png) || m[1].Text != "chart" || len(m[1].Buttons) != 1 {
		t.Errorf("photo = %+v", m[1].Text)
	}
	if m[2].Document == nil || m[2].Text != "" || m[3].Text != long || id != m[3].ID {
		t.Errorf("long caption: %q then %.30q; want the file without caption, then the text", m[2].Text, m[3].Text)
	}
}

func TestAnswerCallback(t *testing.T) {
	fake := tgfake.New(t, token)
	tr, _ := sender(t, fake, nil)
	fake.PressButton(1, 1, 1, "x")
	if err := tr.AnswerCallback(context.Background(), "cb1", strings.Repeat("長", 300)); err != nil {
		t.Fatal(err)
	}
	if a := fake.Answers(); len(a) != 1 || len([]rune(a[0].Text)) != 200 {
		t.Errorf("answers = %d, text of %d runes", len(a), len([]rune(fake.Answers()[0].Text)))
	}
	if err := tr.AnswerCallback(context.Background(), "cb1", ""); err != nil {
		t.Errorf("second answer (too old): %v; want nil", err)
	}
}

func TestSend_PacesPerChat(t *testing.T) {
	fake := tgfake.New(t, token)
	rec := &sleepRecorder{}
	tr, _ := sender(t, fake, func(c *telegram.Config) {
		c.Sleep = rec.Sleep
		c.Pacing = telegram.Pacing{Chat: time.Hour, Group: time.Hour, Global: time.Millisecond, ChatBurst: 2}
	})
	ctx := context.Background()
	for _, id := range []int64{1, 1, 1, 2} {
		if _, err := tr.Send(ctx, chat.Outgoing{ChatID: id, Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	w := rec.recorded()
	if len(w) != 4 || w[0] != 0 || w[1] != 0 || w[2] < 59*time.Minute || w[3] > time.Second {
		t.Errorf("waits = %v; want a burst of 2 for chat 1, the 3rd paced, chat 2 not held up", w)
	}
}

func TestSend_NetworkErrorHidesToken(t *testing.T) {
	fake := tgfake.New(t, token)
	tr, _ := sender(t, fake, nil)
	fake.Close()
	_, err := tr.Send(context.Background(), chat.Outgoing{ChatID: 1, Text: "x"})
	if err == nil {
		t.Fatal("no error from a closed server")
	}
	if strings.Contains(err.Error(), "LEAKME") || !strings.Contains(err.Error(), "<token>") {
		t.Errorf("error = %v; want the token replaced by <token>", err)
	}
}

// socks5 is a minimal SOCKS5 server (no auth, CONNECT only) that sends
// every connection to target and records the addresses asked for.
type socks5 struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	asked  []string
}

func newSOCKS5(t *testing.T, target string) *socks5 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &socks5{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *socks5) serve(c net.Conn) {
	defer c.Close()
	hdr := make([]byte, 2)
	if _, err := io.ReadFull(c, hdr); err != nil || hdr[0] != 5 {
		return
	}
	if _, err := io.ReadFull(c, make([]byte, hdr[1])); err != nil {
		return
	}
	c.Write([]byte{5, 0})
	req := make([]byte, 4)
	if _, err := io.ReadFull(c, req); err != nil || req[1] != 1 {
		return
	}
	var host string
	switch req[3] {
	case 1:
		ip := make([]byte, 4)
		io.ReadFull(c, ip)
		host = net.IP(ip).String()
	case 3:
		n := make([]byte, 1)
		io.ReadFull(c, n)
		name := make([]byte, n[0])
		io.ReadFull(c, name)
		host = string(name)
	default:
		return
	}
	port := make([]byte, 2)
	io.ReadFull(c, port)
	s.mu.Lock()
	s.asked = append(s.asked, net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port)))))
	s.mu.Unlock()
	up, err := net.Dial("tcp", s.target)
	if err != nil {
		c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	defer up.Close()
	c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	go io.Copy(up, c)
	io.Copy(c, up)
}

// TestTransport_SOCKS5Proxy reaches the fake through a SOCKS5 proxy given
// in ALL_PROXY, by a host name only the proxy can resolve, as a bot in
// mainland China reaches api.telegram.org.
func TestTransport_SOCKS5Proxy(t *testing.T) {
	fake := tgfake.New(t, token)
	proxy := newSOCKS5(t, strings.TrimPrefix(fake.URL(), "http://"))
	getenv := func(k string) string {
		if k == "ALL_PROXY" {
			return "socks5://" + proxy.ln.Addr().String()
		}
		return ""
	}
	h := &recorder{}
	start(t, fake, h, newMemStore(), func(c *telegram.Config) {
		c.Endpoint = "http://api.telegram.invalid/bot%s/%s"
		c.Client = telegram.NewHTTPClient(5*time.Second, telegram.ProxyFromEnv(getenv))
	})
	fake.SendText(1, 1, "/status")
	waitFor(t, "update through the proxy", func() bool { return len(h.updates()) == 1 })
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	if len(proxy.asked) == 0 || proxy.asked[0] != "api.telegram.invalid:80" {
		t.Errorf("proxy was asked for %v", proxy.asked)
	}
}
