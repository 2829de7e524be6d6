package telegram

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/chat"
)

// TestSplitHTML_Long splits a long reply with formatting and checks every
// part against the fake's Telegram-like HTML parser and length limit, and
// that no visible text is lost.
func TestSplitHTML_Long(t *testing.T) {
	var b strings.Builder
	b.WriteString("<b>Rentals</b>\n<pre>")
	for i := range 600 {
		b.WriteString("box" + strings.Repeat("•", i%7) + " &lt;4090&gt; ¥1.88/h 租用中 😀\n")
	}
	b.WriteString("</pre>\n<i>" + strings.Repeat("word ", 2000) + "</i>")
	in := b.String()
	parts := chat.SplitHTML(in, MaxTextLen)
	if len(parts) < 3 {
		t.Fatalf("%d parts", len(parts))
	}
	var visible strings.Builder
	for i, p := range parts {
		if n := chat.UTF16Len(p); n > MaxTextLen {
			t.Errorf("part %d has %d units", i, n)
		}
		v, err := tgfake.ParseHTML(p)
		if err != nil {
			t.Errorf("part %d is not valid Telegram HTML: %v\n%s", i, err, p)
		}
		visible.WriteString(v)
	}
	want, _ := tgfake.ParseHTML(in)
	if visible.String() != want {
		t.Errorf("visible text changed by splitting: %d chars, want %d", len(visible.String()), len(want))
	}
}

func TestStripBotName(t *testing.T) {
	tests := []struct {
		in, want string
		mine     bool
	}{
		{"/status", "/status", true},
		{"/status@fake_bot", "/status", true},
		{"/rent@Fake_Bot box1 autodl", "/rent box1 autodl", true},
		{"/status@other_bot", "/status@other_bot", false},
		{"mail me at a@b.c", "mail me at a@b.c", true},
	}
	for _, tc := range tests {
		got, mine := stripBotName(tc.in, "fake_bot")
		if got != tc.want || mine != tc.mine {
			t.Errorf("stripBotName(%q) = %q, %v; want %q, %v", tc.in, got, mine, tc.want, tc.mine)
		}
	}
}

func TestConvert(t *testing.T) {
	user := &tgbotapi.User{ID: 42, UserName: "ann", LanguageCode: "zh-hans"}
	group := &tgbotapi.Chat{ID: -100, Type: "supergroup"}
	tests := []struct {
		name string
		in   tgbotapi.Update
		ok   bool
		want chat.Update
	}{
		{"text", tgbotapi.Update{UpdateID: 7, Message: &tgbotapi.Message{MessageID: 3, From: user, Chat: group, Text: "/status@fake_bot"}}, true,
			chat.Update{Key: "tg:update:7", Kind: chat.KindText, UserID: 42, ChatID: -100, ChatType: chat.ChatSupergroup, Username: "ann", LangCode: "zh-hans", Text: "/status", MessageID: 3}},
		{"forwarded", tgbotapi.Update{UpdateID: 8, Message: &tgbotapi.Message{From: user, Chat: group, Text: "hi", ForwardSenderName: "Bob"}}, true,
			chat.Update{Key: "tg:update:8", Kind: chat.KindText, UserID: 42, ChatID: -100, ChatType: chat.ChatSupergroup, Username: "ann", LangCode: "zh-hans", Text: "hi", Forwarded: true}},
		{"photo", tgbotapi.Update{UpdateID: 9, Message: &tgbotapi.Message{From: user, Chat: group, Photo: []tgbotapi.PhotoSize{{FileID: "p"}}, Caption: "x"}}, true,
			chat.Update{Key: "tg:update:9", Kind: chat.KindOther, UserID: 42, ChatID: -100, ChatType: chat.ChatSupergroup, Username: "ann", LangCode: "zh-hans", Text: "x"}},
		{"photo with a command", tgbotapi.Update{UpdateID: 9, Message: &tgbotapi.Message{From: user, Chat: group, Photo: []tgbotapi.PhotoSize{{FileID: "p"}}, Caption: " /connect@mybot runpod k"}}, true,
			chat.Update{Key: "tg:update:9", Kind: chat.KindText, UserID: 42, ChatID: -100, ChatType: chat.ChatSupergroup, Username: "ann", LangCode: "zh-hans", Text: " /connect@mybot runpod k"}},
		{"document with a command", tgbotapi.Update{UpdateID: 9, Message: &tgbotapi.Message{From: user, Chat: group, Document: &tgbotapi.Document{FileID: "d"}, Caption: "/status"}}, true,
			chat.Update{Key: "tg:update:9", Kind: chat.KindText, UserID: 42, ChatID: -100, ChatType: chat.ChatSupergroup, Username: "ann", LangCode: "zh-hans", Text: "/status"}},
		{"callback from presser", tgbotapi.Update{UpdateID: 10, CallbackQuery: &tgbotapi.CallbackQuery{ID: "q", From: user, Data: "c:1",
			Message: &tgbotapi.Message{MessageID: 5, From: &tgbotapi.User{ID: 1, IsBot: true}, Chat: group}}}, true,
			chat.Update{Key: "tg:update:10", Kind: chat.KindCallback, UserID: 42, ChatID: -100, ChatType: chat.ChatSupergroup, Username: "ann", LangCode: "zh-hans", CallbackID: "q", CallbackData: "c:1", MessageID: 5}},
		{"my_chat_member", tgbotapi.Update{UpdateID: 11, MyChatMember: &tgbotapi.ChatMemberUpdated{From: *user, Chat: tgbotapi.Chat{ID: 42, Type: "private"}}}, true,
			chat.Update{Key: "tg:update:11", Kind: chat.KindOther, UserID: 42, ChatID: 42, ChatType: chat.ChatPrivate, Username: "ann", LangCode: "zh-hans"}},
		{"channel post", tgbotapi.Update{UpdateID: 12, ChannelPost: &tgbotapi.Message{Chat: &tgbotapi.Chat{ID: -5, Type: "channel"}, Text: "x"}}, false, chat.Update{}},
		{"no sender", tgbotapi.Update{UpdateID: 13, Message: &tgbotapi.Message{Chat: group, Text: "x"}}, false, chat.Update{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := convert(tc.in, "fake_bot")
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if ok && got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestGCRA(t *testing.T) {
	now := time.Unix(1000, 0)
	var g gcra
	for i := range 3 {
		if d := g.reserve(now, time.Second, 3); d != 0 {
			t.Fatalf("message %d of the burst waits %v", i, d)
		}
	}
	if d := g.reserve(now, time.Second, 3); d != time.Second {
		t.Errorf("4th message waits %v, want 1s", d)
	}
	var f gcra
	if !f.allow(now, time.Second, 1) || f.allow(now, time.Second, 1) || !f.allow(now.Add(time.Second), time.Second, 1) {
		t.Error("allow does not space one event per interval")
	}
}

func TestProxyFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	req := func(raw string) *http.Request {
		u, _ := url.Parse(raw)
		return &http.Request{URL: u}
	}
	tests := []struct {
		name string
		env  map[string]string
		url  string
		want string
	}{
		{"none", nil, "https://api.telegram.org/x", ""},
		{"https socks5", map[string]string{"HTTPS_PROXY": "socks5://127.0.0.1:1080"}, "https://api.telegram.org/x", "socks5://127.0.0.1:1080"},
		{"lowercase", map[string]string{"https_proxy": "http://p:3128"}, "https://api.telegram.org/x", "http://p:3128"},
		{"all_proxy fallback", map[string]string{"ALL_PROXY": "socks5h://p:1080"}, "https://api.telegram.org/x", "socks5h://p:1080"},
		{"http uses HTTP_PROXY", map[string]string{"HTTPS_PROXY": "http://a:1", "HTTP_PROXY": "http://b:2"}, "http://tg.example/x", "http://b:2"},
		{"no scheme", map[string]string{"HTTPS_PROXY": "p:3128"}, "https://api.telegram.org/x", "http://p:3128"},
		{"no_proxy", map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "example.com, telegram.org"}, "https://api.telegram.org/x", ""},
		{"loopback bypass", map[string]string{"ALL_PROXY": "socks5://p:1"}, "http://127.0.0.1:8081/x", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, err := ProxyFromEnv(env(tc.env))(req(tc.url))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if u != nil {
				got = u.String()
			}
			if got != tc.want {
				t.Errorf("proxy = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := ProxyFromEnv(env(map[string]string{"HTTPS_PROXY": "://"}))(req("https://a.b/")); err == nil {
		t.Error("invalid proxy accepted")
	}
}
