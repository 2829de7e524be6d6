package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
)

const testKey = "rpa_AbCdEf0123456789XyZ"

func TestParse_Connect(t *testing.T) {
	for _, tc := range []struct {
		in       string
		platform string
		key      string
		secret   bool
		errKey   string
	}{
		{"/connect", "", "", false, ""},
		{"/connect runpod " + testKey, "runpod", testKey, true, ""},
		{"/connect RunPod.io " + testKey, "runpod", testKey, true, ""},
		{"/connect " + testKey + " vast.ai", "vast", testKey, true, ""},
		{"/连接 autodl " + testKey, "autodl", testKey, true, ""},
		{"/connect lambda key=" + testKey, "lambda", testKey, true, ""},
		// a key with a character that merging would touch stays as typed
		{"/connect vast 12GB/h" + testKey, "vast", "12GB/h" + testKey, true, ""},
		{"/connect runpod", "runpod", "", false, "connect_no_key"},
		{"/connect " + testKey, "", "", true, "connect_no_platform"},
		{"/connect foo " + testKey, "", "", true, "connect_no_platform"},
		{"/connect aws " + testKey, "", "", true, "connect_unsupported"},
		{"/connect runpod " + testKey + " extra", "", "", true, "connect_words"},
		{"/connect runpod short", "runpod", "", true, "connect_key_length"},
		{"/connect runpod " + testKey + "é", "runpod", "", true, "connect_key_chars"},
	} {
		cmd, err := command.Parse(tc.in, testNow, shanghai)
		if err != nil {
			t.Errorf("Parse(%q): %v; a /connect is never a parse error", tc.in, err)
			continue
		}
		c, ok := cmd.(command.ConnectCmd)
		if !ok {
			t.Errorf("Parse(%q) = %T", tc.in, cmd)
			continue
		}
		if c.Platform != tc.platform || c.Key != tc.key || c.Secret != tc.secret {
			t.Errorf("Parse(%q) = platform %q key %q secret %v, want %q %q %v", tc.in, c.Platform, c.Key, c.Secret, tc.platform, tc.key, tc.secret)
		}
		switch {
		case tc.errKey == "" && c.Err != nil:
			t.Errorf("Parse(%q): unexpected error %v", tc.in, c.Err)
		case tc.errKey != "" && (c.Err == nil || c.Err.Key != tc.errKey):
			t.Errorf("Parse(%q): error %v, want %s", tc.in, c.Err, tc.errKey)
		}
		if c.Err != nil {
			for _, lang := range []string{chat.LangEN, chat.LangZH} {
				if msg := parseErrorText(c.Err, lang) + c.Err.Error(); strings.Contains(msg, "AbCdEf") {
					t.Errorf("Parse(%q): the error shows the key: %s", tc.in, msg)
				}
			}
		}
	}
}

func TestParse_Disconnect(t *testing.T) {
	for _, tc := range []struct{ in, platform, errKey string }{
		{"/disconnect runpod", "runpod", ""},
		{"/断开 Vast.ai", "vast", ""},
		{"/disconnect", "", "disconnect_usage"},
		{"/disconnect foo", "", "disconnect_platform"},
		{"/disconnect aws", "", "connect_unsupported"},
		{"/disconnect runpod vast", "", "unexpected"},
	} {
		cmd, err := command.Parse(tc.in, testNow, shanghai)
		if tc.errKey != "" {
			pe, ok := err.(*command.ParseError)
			if !ok || pe.Key != tc.errKey {
				t.Errorf("Parse(%q) = %v, %v; want error %s", tc.in, cmd, err, tc.errKey)
			}
			continue
		}
		if c, ok := cmd.(command.DisconnectCmd); err != nil || !ok || c.Platform != tc.platform {
			t.Errorf("Parse(%q) = %#v, %v", tc.in, cmd, err)
		}
	}
}

func TestParse_Reconcile(t *testing.T) {
	now := time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC) // Dec 1 09:00 in Shanghai, still Nov 30 in New York
	ny, _ := time.LoadLocation("America/New_York")
	for _, tc := range []struct {
		in     string
		loc    *time.Location
		month  string
		errKey string
	}{
		{"/reconcile", shanghai, "2026-12", ""},
		{"/reconcile", ny, "2026-11", ""},
		{"/对账 2026-10", shanghai, "2026-10", ""},
		{"/reconcile last-month", shanghai, "2026-11", ""},
		{"/reconcile 2027-01", shanghai, "", "future_month"},
		{"/reconcile 2026-12", ny, "", "future_month"},
		{"/reconcile 2026-13", shanghai, "", "bad_month"},
		{"/reconcile nov", shanghai, "", "bad_month"},
		{"/reconcile 2026-11 x", shanghai, "", "unexpected"},
	} {
		cmd, err := command.Parse(tc.in, now, tc.loc)
		if tc.errKey != "" {
			pe, ok := err.(*command.ParseError)
			if !ok || pe.Key != tc.errKey {
				t.Errorf("Parse(%q) = %v, %v; want error %s", tc.in, cmd, err, tc.errKey)
			}
			continue
		}
		c, ok := cmd.(command.ReconcileCmd)
		if err != nil || !ok || c.Month != tc.month {
			t.Errorf("Parse(%q in %s) = %#v, %v; want month %s", tc.in, tc.loc, cmd, err, tc.month)
			continue
		}
		if f := c.From.In(tc.loc); f.Day() != 1 || f.Hour() != 0 || !c.To.Equal(c.From.AddDate(0, 1, 0)) {
			t.Errorf("Parse(%q): [%s, %s) is not the month in %s", tc.in, c.From, c.To, tc.loc)
		}
	}
}
