package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/ledger"
)

// addRun stores an agent's run of label on rental, from start for d.
func (e *env) addRun(user, rental int64, label string, start time.Time, d time.Duration, exit int) {
	e.t.Helper()
	if _, _, err := e.db.AddJobRun(context.Background(), ledger.JobRun{RentalID: rental, UserID: user, Label: label, Command: "python train.py",
		StartedAt: start, EndedAt: start.Add(d), ExitCode: exit, Source: ledger.JobFromAgent}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) compare(tok, label string) dashboard.ComparePage {
	e.t.Helper()
	target := dashboard.PathCompare
	if label != "" {
		target += "?label=" + url.QueryEscape(label)
	}
	var p dashboard.ComparePage
	if rec := e.get(tok, target, &p); rec.Code != http.StatusOK {
		e.t.Fatalf("compare %q: %d %s", label, rec.Code, rec.Body)
	}
	return p
}

// TestCompare_Table: the compare page is ledger.Compare's table for the
// signed-in user: box's bench on AutoDL's RTX 4090 row with its price per
// tensor-TFLOP-hour (1.88 ÷ 152), and the label's row resting on its
// three succeeded runs (10, 12 and 20 min at ¥1.88/h: median 12 min,
// ¥0.38), the failed one counted apart.
func TestCompare_Table(t *testing.T) {
	e := newEnv(t, nil)
	box, _ := e.fill(1)
	e.addBench(1, box.ID, "r1", bench4090())
	s := box.StartedAt()
	e.addRun(1, box.ID, "yolo-epoch", s.Add(time.Hour), 10*time.Minute, 0)
	e.addRun(1, box.ID, "yolo-epoch", s.Add(3*time.Hour), 12*time.Minute, 0)
	e.addRun(1, box.ID, "yolo-epoch", s.Add(5*time.Hour), 20*time.Minute, 0)
	e.addRun(1, box.ID, "yolo-epoch", s.Add(7*time.Hour), 2*time.Minute, 1)
	e.addRun(1, box.ID, "mnist", s.Add(9*time.Hour), time.Minute, 0)
	tok := e.signIn(1)

	p := e.compare(tok, "")
	if p.Empty != "" || len(p.Labels) != 2 || len(p.Tables) != 2 {
		t.Fatalf("compare: empty %q, labels %v, %d tables", p.Empty, p.Labels, len(p.Tables))
	}
	var card *dashboard.CompareCard
	for i := range p.Cards {
		if p.Cards[i].Platform == "autodl" && p.Cards[i].GPU == "RTX 4090" {
			card = &p.Cards[i]
		}
	}
	if card == nil {
		t.Fatalf("no AutoDL RTX 4090 row: %+v", p.Cards)
	}
	if card.Benched != 1 || card.TensorTFLOPS != 152 || card.PCIe != "4.0 x16" || card.PlatformName != "AutoDL" {
		t.Errorf("card row %+v", card)
	}
	if card.PerTFLOPHourText != "¥0.0124 per tensor-TFLOP-hour" || card.PerTFLOPHourPrice != "¥0.0124" || card.HourPerGPUText != "¥1.88/h" {
		t.Errorf("card prices %q, %q; want ¥0.0124 per tensor-TFLOP-hour (1.88 ÷ 152) and ¥1.88/h", card.PerTFLOPHourText, card.HourPerGPUText)
	}

	one := e.compare(tok, "yolo-epoch")
	if one.Label != "yolo-epoch" || len(one.Tables) != 1 || one.Tables[0].Label != "yolo-epoch" {
		t.Fatalf("one label: %+v", one.Tables)
	}
	lt := one.Tables[0]
	if lt.Runs != 3 || lt.Failed != 1 || len(lt.Rows) != 1 {
		t.Fatalf("yolo-epoch: %d runs, %d failed, rows %+v; want 3 and 1 failed on one row", lt.Runs, lt.Failed, lt.Rows)
	}
	row := lt.Rows[0]
	if row.Seconds != 12*60 || row.TimeText != "12 min 00 s" || row.Money == nil || *row.Money != "0.38" || row.MoneyText != "¥0.38" {
		t.Errorf("yolo-epoch row: %d s %q, money %v %q; want 12 min and ¥0.38 (1.88 × 12/60)", row.Seconds, row.TimeText, row.Money, row.MoneyText)
	}
	if row.RestsOn != "rests on 3 run(s); 1 failed, left out" {
		t.Errorf("rests on %q", row.RestsOn)
	}
}

// TestCompare_LabelsEveryColumn: every column is named, in the user's
// language.
func TestCompare_LabelsEveryColumn(t *testing.T) {
	got := map[string]map[string]string{}
	for _, lang := range []string{"en", "zh"} {
		e := newEnv(t, nil)
		if _, err := e.db.EnsureUser(context.Background(), ledger.User{ID: 1, Lang: lang, TZ: "Asia/Shanghai"}); err != nil {
			t.Fatal(err)
		}
		p := e.compare(e.signIn(1), "")
		if p.Empty == "" || p.Claim == "" {
			t.Errorf("%s: an empty table says nothing: empty %q, claim %q", lang, p.Empty, p.Claim)
		}
		got[lang] = p.Columns
	}
	for _, c := range []string{"platform", "gpu", "tensor_tflops", "mem_gbps", "per_tflop_hour", "setup", "runs", "time", "money"} {
		if got["en"][c] == "" || got["zh"][c] == "" {
			t.Errorf("column %s unnamed: en %q zh %q", c, got["en"][c], got["zh"][c])
		}
	}
	if got["en"]["money"] == got["zh"]["money"] {
		t.Errorf("the money column reads the same in both languages: %q", got["en"]["money"])
	}
}

// TestCompare_OwnOnly: a user's table holds their own rows only; another
// user's label is not found (named with the user's own labels), and a
// malformed label is refused with what a label is.
func TestCompare_OwnOnly(t *testing.T) {
	e := newEnv(t, nil)
	box, _ := e.fill(1)
	e.addBench(1, box.ID, "r1", bench4090())
	e.addRun(1, box.ID, "secret-job", box.StartedAt().Add(time.Hour), 10*time.Minute, 0)
	mine, _ := e.fill(2)
	e.addRun(2, mine.ID, "mine", mine.StartedAt().Add(time.Hour), 10*time.Minute, 0)
	tok2 := e.signIn(2)
	p := e.compare(tok2, "")
	for _, c := range p.Cards {
		if c.Benched != 0 {
			t.Errorf("user 2 sees a bench: %+v", c)
		}
	}
	if len(p.Labels) != 1 || p.Labels[0] != "mine" {
		t.Errorf("user 2's labels %v, want [mine]", p.Labels)
	}
	rec := e.get(tok2, dashboard.PathCompare+"?label=secret-job", nil)
	refusal(t, rec, http.StatusNotFound, "not_found", "mine")
	rec = e.get(tok2, dashboard.PathCompare+"?label="+url.QueryEscape("a b"), nil)
	refusal(t, rec, http.StatusBadRequest, "bad_request", "label")
	if strings.Contains(e.get(tok2, dashboard.PathCompare, nil).Body.String(), "secret-job") {
		t.Error("user 2's table names user 1's label")
	}
}
